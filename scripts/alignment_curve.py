"""Print the attention curve of a training run: minutes and steps -> validation alignment metrics.

Reads the scalars that `aligner train` logs at every validation (``valid/focus_rate``,
``valid/diagonality``, ``valid/items_with_skips``, ``valid/items_with_repeats``, ...) from
the run's TensorBoard event files, and prints one row per validation. Where the validation
items have reference timings (the eSpeak NG corpus), the curve also shows how right the
alignment is: ``valid/word_boundary_ms`` and ``valid/phone_boundary_ms``, the mean absolute
boundary error (ms) of the teacher-forced durations against the reference. Minutes are wall-clock
minutes since the first logged training scalar.

    python scripts/alignment_curve.py exp/lsa_small [exp/dca_small ...] [--csv curve.csv]

Alignment is "learned" at a validation when the mean focus rate is >= 0.4 and at least 90%
of the validation items have neither skipped nor repeated tokens (the core's metric
definitions, aligner.attention.metrics); the first such row is marked with ``*``. Where
the run decodes fixed sentences free-running at validation (``data.log.infer_items``),
the curve shows ``infer/stopped`` and the fractions with skips and repeats, and the last
line says from which validation on they are clean (every sentence stopped by itself, no
skip, no repeat, mean focus rate at least 0.4) and stay clean to the end of the run.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

COLUMNS = (
    "focus_rate",
    "diagonality",
    "entropy",
    "items_with_skips",
    "items_with_repeats",
    "word_boundary_ms",
    "phone_boundary_ms",
    "mapping_ms",
    "loss",
)
# the free-running decodes of the fixed sentences: column -> scalar tag
INFER = {
    "infer_stopped": "infer/stopped",
    "infer_skips": "infer/items_with_skips",
    "infer_repeats": "infer/items_with_repeats",
    "infer_focus": "infer/focus_rate",
}


def read_curve(exp: Path) -> list[dict[str, float]]:
    """One dict per validation step: step, minutes, and the ``valid/*`` scalars."""
    logdir = exp / "tb" if (exp / "tb").is_dir() else exp
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    tags = acc.Tags().get("scalars", [])
    if "valid/focus_rate" not in tags:
        raise SystemExit(f"{logdir}: no valid/focus_rate scalar logged yet (tags: {tags[:8]})")
    start = min(e.wall_time for tag in tags for e in acc.Scalars(tag)[:1])
    rows: dict[int, dict[str, float]] = {}
    for name, tag in [*((c, f"valid/{c}") for c in COLUMNS), *INFER.items()]:
        if tag not in tags:
            continue
        for event in acc.Scalars(tag):
            row = rows.setdefault(event.step, {"step": event.step})
            row[name] = event.value
            row["minutes"] = (event.wall_time - start) / 60.0
    return [rows[s] for s in sorted(rows)]


def aligned(row: dict[str, float], min_focus: float = 0.4, min_clean: float = 0.9) -> bool:
    """Mean focus >= min_focus and >= min_clean of the items without skips or repeats.

    Only the fractions with skips and with repeats are logged, not their union, so
    ``1 - skips - repeats`` (a lower bound of the clean fraction) is what is tested.
    """
    clean_lower_bound = 1.0 - row.get("items_with_skips", 1.0) - row.get("items_with_repeats", 1.0)
    return row.get("focus_rate", 0.0) >= min_focus and clean_lower_bound >= min_clean


def clean(row: dict[str, float], min_focus: float = 0.4) -> bool:
    """The free-running sentences all stopped by themselves, none skipped or repeated, and
    their attention focused (mean focus rate >= `min_focus`, as `aligned`): a blurred
    attention early in training skips nothing by its argmax yet aligns nothing."""
    return (
        row.get("infer_stopped", 0.0) >= 1.0
        and row.get("infer_skips", 1.0) == 0.0
        and row.get("infer_repeats", 1.0) == 0.0
        and row.get("infer_focus", min_focus) >= min_focus
    )


def clean_from(rows: list[dict[str, float]]) -> dict[str, float] | None:
    """The first row from which every later row is `clean` (None: not clean at the end)."""
    first = None
    for row in rows:
        if "infer_stopped" not in row:
            continue
        first = (first or row) if clean(row) else None
    return first


def print_curve(exp: Path, rows: list[dict[str, float]]) -> None:
    print(f"# {exp}")
    names = [*COLUMNS, *INFER]
    columns = [c for c in names if any(c in row for row in rows)]  # truth: where known
    header = ["", "step", "minutes", *columns]
    print(" ".join(f"{h:>18}" if i > 2 else f"{h:>8}" for i, h in enumerate(header)))
    marked = False
    for row in rows:
        mark = "*" if aligned(row) and not marked else ""
        marked = marked or bool(mark)
        cells = [f"{mark:>8}", f"{row['step']:>8d}", f"{row.get('minutes', 0.0):>8.1f}"]
        cells += [f"{row.get(c, float('nan')):>18.4f}" for c in columns]
        print(" ".join(cells))
    if any("infer_stopped" in row for row in rows):
        first = clean_from(rows)
        print(
            f"free-running clean from step {first['step']} ({first['minutes']:.1f} min) on"
            if first
            else "free-running not clean at the last validation"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+", type=Path)
    parser.add_argument("--csv", type=Path, help="also write all rows to this CSV file")
    args = parser.parse_args(argv)
    table = []
    for exp in args.experiments:
        rows = read_curve(exp)
        print_curve(exp, rows)
        table += [{"experiment": str(exp), **row} for row in rows]
    if args.csv:
        with args.csv.open("w", newline="") as f:
            fields = ["experiment", "step", "minutes", *COLUMNS, *INFER]
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
