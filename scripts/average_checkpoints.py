#!/usr/bin/env python
"""Average the weights of the last checkpoints of a run into one (for evaluation).

    python scripts/average_checkpoints.py --out EXP/checkpoints/avg.pt EXP/checkpoints/ckpt-*.pt

A standard trick of sequence-to-sequence toolkits (fairseq, ESPnet): the mean of the last
few checkpoints of one run usually scores a little better than any single one. The result
loads wherever a checkpoint does (`aligner g2p`, `scripts/eval_g2p.py`, `aligner
synthesize`, ...); it carries no optimizer state, so it cannot be resumed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from aligner.train.checkpoint import CheckpointError, atomic_save, average_checkpoints


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.force:
        sys.exit(f"{args.out} exists; pass --force to replace it")
    try:
        state = average_checkpoints(args.checkpoints)
    except CheckpointError as err:
        sys.exit(str(err))
    atomic_save(state, args.out)
    print(f"wrote {args.out}: mean of {len(args.checkpoints)} checkpoints (steps "
          f"{', '.join(map(str, state['averaged_from']))})")  # fmt: skip


if __name__ == "__main__":
    main()
