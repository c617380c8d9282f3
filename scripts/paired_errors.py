"""Two aligners' boundary errors on the same reference boundaries: how much of each one's
error is a constant offset, and how much the two share.

Per tier (words, phones) and voice (the manifest's ``speaker``), over the boundaries both
aligners pair with the reference (`aligner score-alignment`'s pairing):

- ``mean``, ``bias``: as `aligner score-alignment`; ``shifted``: the mean absolute error
  once each aligner's own median error is taken off (what it would score if its
  convention for where a boundary lies matched the reference's);
- ``sd``: the standard deviation of each one's errors, gross errors (60 ms or more from
  its median, on either side) left out;
- ``shared``: the square root of the covariance of the two aligners' errors. Errors
  that the aligners make independently do not covary, so this is the part they share: an
  ambiguity of the audio both meet, or an error of the reference itself (the
  "three-cornered hat" of clock comparisons). On references known to be exact it measures
  the first alone.

    python scripts/paired_errors.py --reference data/festival/test.jsonl \\
        --predicted exp/fD/ali_test exp/ps_festival
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from aligner.alignment.scoring import boundary_errors
from aligner.data.manifest import manifest_items
from aligner.evaluation.alignment import predicted_timings, reference_timings

GROSS_MS = 60.0


def paired(reference: Path, first: Path, second: Path, tier: str) -> dict[str, list]:
    """``{voice: [(errors of first, errors of second), ...]}`` in ms, per item whose
    `tier` both aligners pair with the reference (``ALL``: every voice)."""
    items = manifest_items(reference, "--reference")
    refs = reference_timings(reference, "timings", items)
    voice = {str(it["id"]): str(it.get("speaker", "-")) for it in items}
    out: dict[str, list] = {}
    for uid, tiers in refs.items():
        ref = tiers.get(tier)
        preds = [predicted_timings(folder, uid) for folder in (first, second)]
        if not ref or any(p is None or len(p.get(tier, [])) != len(ref) for p in preds):
            continue
        errors = tuple(1000 * np.asarray(boundary_errors(ref, p[tier])) for p in preds)
        for group in ("ALL", voice[uid]):
            out.setdefault(group, []).append(errors)
    return out


def row(pairs: list) -> dict[str, float]:
    """The figures of the module docstring for one group of paired errors."""
    a, b = (np.concatenate([p[k] for p in pairs]) for k in (0, 1))
    ca, cb = a - np.median(a), b - np.median(b)
    kept = (np.abs(ca) < GROSS_MS) & (np.abs(cb) < GROSS_MS)
    cov = np.cov(ca[kept], cb[kept])
    return {
        "n": len(a),
        "mean": (np.abs(a).mean(), np.abs(b).mean()),
        "bias": (a.mean(), b.mean()),
        "shifted": (np.abs(ca).mean(), np.abs(cb).mean()),
        "sd": (np.sqrt(cov[0, 0]), np.sqrt(cov[1, 1])),
        "shared": np.sqrt(max(cov[0, 1], 0.0)),
        "corr": cov[0, 1] / np.sqrt(cov[0, 0] * cov[1, 1]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="manifest with timings")
    parser.add_argument("--predicted", type=Path, nargs=2, required=True, metavar="FOLDER")
    args = parser.parse_args()
    first, second = args.predicted
    print(f"first: {first}  second: {second}  (ms; first / second)")
    print(
        "tier    voice                     n   mean         bias          shifted      sd           shared  corr"
    )
    for tier in ("words", "phones"):
        for group, pairs in sorted(paired(args.reference, first, second, tier).items()):
            r = row(pairs)
            pair = {k: "{:5.1f} / {:5.1f}".format(*r[k]) for k in ("mean", "shifted", "sd")}
            bias = "{:+5.1f} / {:+5.1f}".format(*r["bias"])
            print(
                f"{tier:7s} {group:22s} {r['n']:5d}   {pair['mean']}  {bias}  {pair['shifted']}"
                f"  {pair['sd']}  {r['shared']:5.1f}  {r['corr']:+.2f}"
            )


if __name__ == "__main__":
    main()
