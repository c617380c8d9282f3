"""Tiny synthetic G2P and NMT corpora written as manifests."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

PHONES = {"a": "AH0", "b": "B", "c": "K", "d": "D", "e": "IY1", "o": "OW1", "t": "T"}


def pronounce(word: str) -> str:
    """A deterministic 'pronunciation': one phone per letter."""
    return " ".join(PHONES[c] for c in word)


def write_jsonl(path: Path, items: list[dict]) -> None:
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")


def make_g2p(folder: Path, n_train: int = 200, n_valid: int = 12, seed: int = 0) -> Path:
    rng = random.Random(seed)
    letters = sorted(PHONES)
    words = sorted({"".join(rng.choices(letters, k=rng.randint(2, 6))) for _ in range(3 * n_train)})
    rng.shuffle(words)
    train, valid = words[:n_train], words[n_train : n_train + n_valid]
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(
        folder / "train.jsonl", [{"id": w, "source": w, "target": pronounce(w)} for w in train]
    )
    items = [{"id": w, "source": w, "target": pronounce(w)} for w in valid]
    # a second pronunciation of the first validation word
    items.insert(
        1, {"id": valid[0] + "(2)", "source": valid[0], "target": "B " + pronounce(valid[0])}
    )
    write_jsonl(folder / "valid.jsonl", items)
    write_jsonl(folder / "test.jsonl", items)
    return folder


@pytest.fixture
def g2p_dir(tmp_path: Path) -> Path:
    return make_g2p(tmp_path / "g2p")
