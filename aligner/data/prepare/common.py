"""What every `aligner prepare` target shares: UTF-8 line reading that reports bad
lines, a seeded split with no item in two splits, the no-overwrite check, and the
manifests and summary written at the end."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aligner.data.manifest import write_manifest
from aligner.data.report import BadItemReport, NoItemsError
from aligner.files import looks_utf16, make_folder, write_atomic

SPLITS: tuple[str, ...] = ("train", "valid", "test")
SUMMARY_FILE = "summary.json"


def text_lines(
    path: Path, report: BadItemReport, ident: Callable[[bytes], str] | None = None
) -> Iterator[tuple[int, str, str]]:
    """``(lineno, where, line)`` for each non-blank line of ``path``: ``where`` is
    ``path:lineno``, ``line`` has no ``\\r`` (nor a UTF-8 byte-order mark); a line that is
    not UTF-8 goes to ``report``, named by ``ident(raw line)`` (e.g. its ASCII id) too."""
    data = path.read_bytes()
    if looks_utf16(data) or b"\x00" in data[:4096]:
        raise ValueError(f"{path} looks like UTF-16 (NUL bytes); save it as UTF-8")
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8").rstrip("\r")
        except UnicodeDecodeError as err:
            name = ident(raw) if ident is not None else ""
            report.add(
                where,
                f"undecodable line{f' of {name}' if name else ''} (not UTF-8: "
                f"{err.reason} at byte {err.start + 1})",
            )
            continue
        yield lineno, where, line


def split_sizes(n: int, valid: float, test: float) -> tuple[int, int, int]:
    """(train, valid, test) counts for ``n`` groups; valid and test get at least one
    group each when ``n >= 3``, and train keeps the rest."""
    if n < 3:
        return n, 0, 0
    n_valid = max(1, round(n * valid))
    n_test = max(1, round(n * test))
    if n_valid + n_test >= n:
        n_valid, n_test = 1, 1
    return n - n_valid - n_test, n_valid, n_test


def split_items(
    items: Sequence[dict[str, Any]],
    seed: int = 0,
    valid: float = 0.05,
    test: float = 0.05,
    group: Callable[[dict[str, Any]], Hashable] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Shuffle groups of items with ``seed`` and cut them into train/valid/test.

    Items sharing a ``group`` key (default: the item itself by ``id``) always land in
    the same split, e.g. all pronunciations of one word. Within a split items keep
    their input order, so the result depends only on the items and the seed.
    """
    key = group or (lambda item: item["id"])
    groups = list(dict.fromkeys(key(item) for item in items))
    random.Random(seed).shuffle(groups)
    n_train, n_valid, _ = split_sizes(len(groups), valid, test)
    where = {g: 0 for g in groups[:n_train]}
    where.update({g: 1 for g in groups[n_train : n_train + n_valid]})
    where.update({g: 2 for g in groups[n_train + n_valid :]})
    splits: dict[str, list[dict[str, Any]]] = {name: [] for name in SPLITS}
    for item in items:
        splits[SPLITS[where[key(item)]]].append(item)
    return splits


OUTPUT_FOLDERS: tuple[str, ...] = ("wavs", "textgrids")


def empty_split_warnings(splits: dict[str, list], what: str) -> list[str]:
    """A warning when the valid or test split of `splits` is empty (fewer than three items
    in all: `split_items`), naming what the items are (``item(s) kept``, ``utterance(s)``)."""
    if splits.get("valid") and splits.get("test"):
        return []
    n = sum(len(v) for v in splits.values())
    return [
        f"{n} {what}: valid and test need 3 or more (they are empty; aligner train needs a "
        "valid split)"
    ]


def corpus_files(out_dir: Path) -> list[Path]:
    """The manifests and summary `prepare` writes into `out_dir`."""
    return [out_dir / f"{name}.jsonl" for name in SPLITS] + [out_dir / SUMMARY_FILE]


def check_outputs(out_dir: Path, force: bool) -> None:
    """Refuse (FileExistsError) when ``out_dir`` already holds anything `prepare` writes
    (manifests, ``summary.json``, a non-empty ``wavs/`` or ``textgrids/``: also the
    leftovers of an interrupted run) and not ``force``; or when ``out_dir`` is a file."""
    if out_dir.exists() and not out_dir.is_dir():
        raise FileExistsError(f"{out_dir} is a file; give a folder for the corpus")
    files = corpus_files(out_dir)
    folders = [out_dir / name for name in OUTPUT_FOLDERS]
    existing = [p for p in files if p.exists()]
    existing += [p for p in folders if p.is_dir() and any(p.iterdir())]
    if existing and not force:
        raise FileExistsError(
            f"{existing[0]} already exists; pass --force to overwrite or choose another folder"
        )


@dataclass
class PrepareSummary:
    """Figures of a prepared corpus, printed by the CLI and saved as summary.json."""

    corpus: str
    out_dir: Path
    counts: dict[str, int] = field(default_factory=dict)
    bad: BadItemReport = field(default_factory=BadItemReport)
    figures: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human-readable summary lines."""
        split = ", ".join(f"{name} {self.counts.get(name, 0)}" for name in SPLITS)
        out = [f"{self.corpus}: {sum(self.counts.values())} items ({split}) in {self.out_dir}"]
        out += [f"  {key.replace('_', ' ')}: {_fmt(value)}" for key, value in self.figures.items()]
        if self.bad:
            kinds = ", ".join(f"{n} {kind}" for kind, n in self.bad.counts().items())
            out.append(f"  skipped {len(self.bad)} bad item(s): {kinds}")
        if self.warnings:
            out.append(f"  {len(self.warnings)} warning(s) (kept; listed in summary.json):")
            out += [f"    {w}" for w in self.warnings[:10]]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "counts": self.counts,
            "bad_items": [str(item) for item in self.bad.items],
            "warnings": self.warnings,
            **self.figures,
        }


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def write_corpus(
    out_dir: Path, splits: dict[str, list[dict[str, Any]]], summary: PrepareSummary
) -> PrepareSummary:
    """Write ``{train,valid,test}.jsonl`` and ``summary.json``; fills ``summary.counts``.
    `NoItemsError` (nothing written) when no split has an item."""
    if not any(splits.get(name) for name in SPLITS):
        raise NoItemsError(summary.corpus, summary.bad)
    make_folder(out_dir)
    for name in SPLITS:
        write_manifest(out_dir / f"{name}.jsonl", splits.get(name, []))
    summary.counts = {name: len(splits.get(name, [])) for name in SPLITS}
    text = json.dumps(summary.to_dict(), indent=2) + "\n"
    write_atomic(out_dir / SUMMARY_FILE, lambda fh: fh.write(text), "w", encoding="utf-8")
    return summary
