"""Phone start errors of an alignment against reference timings, per class of phones
(the classes' phones given by label, stress marks ignored), as `aligner score-alignment`
pairs them (items whose phone counts differ are left out and counted).

    python scripts/boundary_errors_by_class.py --reference data/valid.jsonl \
        --predicted ali/ --class stops=p,t,k,b,d,g
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from aligner.inference.alignment_score import predicted_timings, reference_timings

STRESS = "ˈˌ"


def start_errors(reference: Path, predicted: Path, classes: dict[str, set[str]]):
    """``({class: [signed start errors in ms]}, unpaired items)``; phones in no class go
    to ``other``."""
    out: dict[str, list[float]] = {name: [] for name in [*classes, "other"]}
    unpaired = 0
    for uid, ref in reference_timings(reference).items():
        pred = (predicted_timings(predicted, uid) or {}).get("phones")
        if pred is None or len(pred) != len(ref["phones"]):
            unpaired += 1
            continue
        for r, p in zip(ref["phones"], pred):
            label = r.label.strip(STRESS)
            name = next((c for c, members in classes.items() if label in members), "other")
            out[name].append(1000 * (p.start - r.start))
    return out, unpaired


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--predicted", type=Path, required=True)
    parser.add_argument("--class", dest="classes", action="append", default=[],
                        help="NAME=PHONE,PHONE,... (repeatable)")  # fmt: skip
    args = parser.parse_args(argv)
    classes = {c.split("=")[0]: set(c.split("=")[1].split(",")) for c in args.classes}
    errors, unpaired = start_errors(args.reference, args.predicted, classes)
    print(
        f"{'class':<10} {'starts':>6} {'mean':>6} {'bias':>6} {'<=20ms':>7}  ({unpaired} unpaired)"
    )
    for name, values in errors.items():
        v = np.array(values)
        if len(v):
            within = 100 * (np.abs(v) <= 20).mean()
            print(f"{name:<10} {len(v):6d} {np.abs(v).mean():6.1f} {v.mean():6.1f} {within:6.1f}%")


if __name__ == "__main__":
    main()
