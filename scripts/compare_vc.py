"""Two systems of an `eval_vc.py --json` report compared item by item: is one's MCD (or
another metric) lower than the other's on the same test items, and by more than chance?

    python scripts/compare_vc.py exp/vc/score/vc.json seq2seq baseline [--metric mcd]

Prints, over the items both systems have: the mean difference A - B with a 95% bootstrap
interval (10,000 resamples of the items, seeded), the items on which A is lower, and the
two-sided sign test's p-value (how often a fair coin gives a split at least that uneven).
Lower is better for MCD, F0 RMSE, V/UV error and the duration difference.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np


def differences(report: dict, a: str, b: str, metric: str) -> np.ndarray:
    """Per-item ``A - B`` of `metric` over the ids both systems scored (ValueError naming
    what is missing)."""
    items = report.get("items", {})
    for name in (a, b):
        if name not in items:
            raise ValueError(f"no system {name!r} in the report (it has {', '.join(items)})")
    scores = [{r["id"]: r.get(metric) for r in items[name]} for name in (a, b)]
    shared = [i for i in scores[0] if i in scores[1]]
    pairs = [(scores[0][i], scores[1][i]) for i in shared]
    pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
    if not pairs:
        raise ValueError(f"{a} and {b} share no item with a {metric!r} score")
    return np.array([x - y for x, y in pairs], dtype=np.float64)


def sign_test(lower: int, higher: int) -> float:
    """Two-sided p-value of `lower` against `higher` under a fair coin (ties left out)."""
    n, k = lower + higher, min(lower, higher)
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def bootstrap(diff: np.ndarray, resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean of `diff` over resampled items."""
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), (resamples, len(diff)))].mean(1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, help="the JSON of eval_vc.py --json")
    ap.add_argument("a", help="a system of the report")
    ap.add_argument("b", help="the system it is compared with")
    ap.add_argument("--metric", default="mcd", help="a per-item score (default mcd)")
    args = ap.parse_args(argv)
    try:
        report = json.loads(args.report.read_text())
        diff = differences(report, args.a, args.b, args.metric)
    except (OSError, ValueError, AttributeError) as err:
        raise SystemExit(f"compare_vc.py: {args.report}: {err}") from None
    lower, higher = int((diff < 0).sum()), int((diff > 0).sum())
    low, high = bootstrap(diff)
    print(
        f"{args.a} - {args.b}, {args.metric}, {len(diff)} items: mean {diff.mean():+.3f} "
        f"(95% bootstrap {low:+.3f} to {high:+.3f}); {args.a} lower on {lower}, higher on "
        f"{higher}; sign test p = {sign_test(lower, higher):.3g}"
    )


if __name__ == "__main__":
    main()
