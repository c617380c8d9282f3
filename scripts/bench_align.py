"""Throughput of `aligner align` (utterances per second) for one or more checkpoints on the
same manifest, each relative to the first, measured in the same run.

    python scripts/bench_align.py --manifest data/valid.jsonl ALIGNER.pt TACOTRON.pt

Each checkpoint aligns the manifest once to warm up (loading, first allocations), then
once timed; files go to a temporary folder (no PNGs), as `aligner align --no-png` writes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from aligner.data.manifest import read_manifest
from aligner.inference.align import align_manifest


def rate(checkpoint: str, manifest: str, n: int) -> float:
    """Utterances per second of the second of two alignments of `manifest`."""
    with tempfile.TemporaryDirectory() as tmp:
        align_manifest(checkpoint, manifest, Path(tmp) / "warm", png=False)
        start = time.perf_counter()
        align_manifest(checkpoint, manifest, Path(tmp) / "timed", png=False)
        return n / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--manifest", required=True)
    args = parser.parse_args(argv)
    n = len(read_manifest(args.manifest))
    first = None
    for ckpt in args.checkpoints:
        r = rate(ckpt, args.manifest, n)
        first = first or r
        print(f"{ckpt}: {n} utterances, {r:.1f} utt/s, {r / first:.2f}x the first")


if __name__ == "__main__":
    main()
