"""Two systems of an `eval_vc.py --json` report compared item by item: is one's MCD (or
another metric) better than the other's on the same test items, and by more than chance?

    python scripts/compare_vc.py exp/vc/score/vc.json seq2seq baseline [--metric mcd]

Prints, over the items both systems scored (a finite number each; the others are counted
and named as left out): the mean difference A - B with a 95% bootstrap interval (10,000
resamples of the items, seeded: ``--seed``, ``--resamples``), on how many items A is
better and worse (ties apart), and the two-sided sign test's p-value (how often a fair
coin gives a split at least that uneven; ties left out). Lower is better for every metric
but ``f0_corr`` (higher); ``duration_diff`` (signed, seconds) is compared as its absolute
value, ``duration_ratio`` as its distance from 1.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

HIGHER_IS_BETTER = {"f0_corr"}
DISTANCE = {"duration_diff": lambda v: abs(v), "duration_ratio": lambda v: abs(v - 1.0)}


def system_rows(report: object, name: str) -> list[dict]:
    """The per-item rows of system `name` (ValueError naming what is wrong with the report)."""
    if not isinstance(report, dict) or not isinstance(report.get("items"), dict):
        raise ValueError("not an eval_vc.py --json report (no 'items' object of systems)")
    items = report["items"]
    if name not in items:
        have = ", ".join(items) or "none"
        raise ValueError(f"no system {name!r} in the report (it has {have})")
    rows = items[name]
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise ValueError(f"system {name!r}: its items are not a list of rows with an 'id'")
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"system {name!r}: item {dup!r} appears more than once")
    return rows


def scores(rows: list[dict], metric: str) -> dict[str, float]:
    """id -> the finite `metric` score, as compared (`DISTANCE`); the others left out."""
    out = {}
    for r in rows:
        v = r.get(metric)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            continue
        out[r["id"]] = float(DISTANCE.get(metric, float)(v))
    return out


def differences(report: object, a: str, b: str, metric: str) -> tuple[np.ndarray, int]:
    """Per-item ``A - B`` of `metric` over the ids both systems scored, and how many items
    of either system were left out (not shared, not scored, not finite); ValueError when
    fewer than 2 remain."""
    rows = [system_rows(report, name) for name in (a, b)]
    sa, sb = (scores(r, metric) for r in rows)
    shared = [i for i in sa if i in sb]
    left_out = len({r["id"] for r in rows[0]} | {r["id"] for r in rows[1]}) - len(shared)
    if len(shared) < 2:
        raise ValueError(
            f"{a} and {b} share {len(shared)} item(s) with a finite {metric!r} score; "
            "a comparison needs at least 2"
        )
    return np.array([sa[i] - sb[i] for i in shared], dtype=np.float64), left_out


def sign_test(wins: int, losses: int) -> float:
    """Two-sided p-value of `wins` against `losses` under a fair coin (ties left out)."""
    if wins + losses == 0:
        return 1.0
    return float(binomtest(wins, wins + losses, 0.5).pvalue)


def bootstrap(
    diff: np.ndarray, resamples: int = 10_000, seed: int = 0, chunk: int = 1000
) -> tuple[float, float]:
    """95% interval of the mean of `diff` over resampled items (`chunk` resamples at a time)."""
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            diff[rng.integers(0, len(diff), (min(chunk, resamples - s), len(diff)))].mean(1)
            for s in range(0, resamples, chunk)
        ]
    )
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def summary_line(a: str, b: str, metric: str, diff: np.ndarray, left_out: int, **boot) -> str:
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    better, worse = int((sign * diff < 0).sum()), int((sign * diff > 0).sum())
    ties = len(diff) - better - worse
    low, high = bootstrap(diff, **boot)
    what = f"|{metric}|" if metric in DISTANCE else metric
    direction = "higher" if metric in HIGHER_IS_BETTER else "lower"
    return (
        f"{a} - {b}, {what} ({direction} is better), {len(diff)} items"
        + (f" ({left_out} left out: not in both or not scored)" if left_out else "")
        + f": mean {diff.mean():+.3f} (95% bootstrap {low:+.3f} to {high:+.3f}); {a} better "
        f"on {better}, worse on {worse}"
        + (f", {ties} ties" if ties else "")
        + f"; sign test p = {sign_test(better, worse):.3g}"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path, help="the JSON of eval_vc.py --json")
    ap.add_argument("a", help="a system of the report")
    ap.add_argument("b", help="the system it is compared with")
    ap.add_argument("--metric", default="mcd", help="a per-item score (default mcd)")
    ap.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples")
    ap.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    args = ap.parse_args(argv)
    if args.resamples < 100:
        raise SystemExit(f"compare_vc.py: --resamples must be 100 or more, got {args.resamples}")
    try:
        report = json.loads(args.report.read_text(encoding="utf-8"))
        diff, left_out = differences(report, args.a, args.b, args.metric)
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSON errors are ValueErrors
        raise SystemExit(f"compare_vc.py: {args.report}: {err}") from None
    boot = {"resamples": args.resamples, "seed": args.seed}
    print(summary_line(args.a, args.b, args.metric, diff, left_out, **boot))


if __name__ == "__main__":
    main()
