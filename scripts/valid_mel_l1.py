#!/usr/bin/env python
"""The validation split's L1 of a duration model's output mel (after its postnet, where it
has one), teacher-forced on the given durations: one figure that compares runs with and
without a postnet (the training log's ``mel`` sums the L1 before and after it).

    python scripts/valid_mel_l1.py --data data exp/fastvc_a exp/fastvc_b   # each run's last checkpoint
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.utils.data import DataLoader


def valid_l1(run: Path, data: Path, batch_size: int = 8) -> tuple[str, float]:
    """(the checkpoint's name, the mean over the validation items of each item's mean
    absolute difference between the output mel and the target, normalized as trained)."""
    from aligner.checkpoint import load_checkpoint
    from aligner.config import load_config
    from aligner.tasks import build_task
    from aligner.tasks.speech_losses import masked_mean

    checkpoints = sorted((run / "checkpoints").glob("ckpt-*.pt"))
    if not checkpoints:
        raise SystemExit(f"{run}: no checkpoints/ckpt-*.pt; give a training run's folder")
    task = build_task(load_config(run / "config.yaml"), data)
    task.model.load_state_dict(load_checkpoint(checkpoints[-1])["model"])
    task.model.eval()
    total, items = 0.0, 0
    with torch.no_grad():
        for batch in DataLoader(task.valid_set, batch_size=batch_size, collate_fn=task.collate):
            out = task.forward(task.model, batch)
            target = batch["mel"][:, : out.mel_post.size(1)]
            for i in range(out.mel_post.size(0)):
                mask = out.mel_mask[i : i + 1]
                diff = (out.mel_post[i : i + 1] - target[i : i + 1]).abs()
                total += float(masked_mean(diff, mask))
                items += 1
    return checkpoints[-1].name, total / max(items, 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="training run folders")
    parser.add_argument("--data", type=Path, default=Path("data"), help="the runs' data folder")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for run in args.runs:
        name, l1 = valid_l1(run, args.data)
        print(f"{run}\t{name}\tvalid output-mel L1 {l1:.4f}")


if __name__ == "__main__":
    sys.exit(main())
