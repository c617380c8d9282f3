"""Tab-separated sentence pairs (as the Tatoeba / manythings.org files): ``source<TAB>
target[<TAB>anything]`` per line; extra columns are ignored. Pairs sharing a source
sentence stay in one split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    empty_split_warnings,
    split_items,
    text_lines,
    write_corpus,
)
from aligner.data.report import BadItemReport


def read_pairs(path: Path, report: BadItemReport) -> list[dict[str, Any]]:
    """Items ``{id, source, target}``; bad lines go to ``report`` with their number."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; give a tab-separated file of pairs")
    items = []
    for lineno, where, line in text_lines(path, report):
        fields = line.split("\t")
        if len(fields) < 2:
            report.add(where, "malformed line (expected source<TAB>target)")
        elif not fields[0].strip() or not fields[1].strip():
            report.add(where, "empty text (source or target is blank)")
        else:
            items.append(
                {"id": f"line{lineno}", "source": fields[0].strip(), "target": fields[1].strip()}
            )
    return items


def prepare_parallel_text(
    path: Path,
    out_dir: Path,
    seed: int = 0,
    skip_bad: bool = False,
    force: bool = False,
) -> PrepareSummary:
    """Validate every line, then write train/valid/test manifests."""
    path, out_dir = Path(path), Path(out_dir)
    check_outputs(out_dir, force)
    report = BadItemReport()
    items = read_pairs(path, report)
    report.check(skip_bad)
    splits = split_items(items, seed=seed, group=lambda item: item["source"])
    summary = PrepareSummary("parallel-text", out_dir, bad=report)
    summary.warnings += empty_split_warnings(splits, "pair(s)")
    summary.figures = {
        "source_vocabulary": len({w for i in items for w in i["source"].split()}),
        "target_vocabulary": len({w for i in items for w in i["target"].split()}),
    }
    return write_corpus(out_dir, splits, summary)
