"""A FastPitch recipe's duration model trained alone: its duration branch (the duration
encoder and predictor, or the text encoder where it has no encoder of its own) learns from
the recipe's duration loss only (at its weight), with the recipe's optimizer, schedule, batch size and
clip, and every ``--eval-every`` steps the validation split's word and phone boundary
errors of its durations fitted to each recording's length are printed (what the full
training logs as ``valid/word_boundary_ms``). A step costs a small part of a full
FastPitch step, so a duration loss or size can be compared in minutes
(egs/espeak/tts1/RESULTS.md, "The durations' loss").

    python scripts/duration_model_alone.py --data egs/espeak/tts1/data --steps 1000 \
        [--set model.loss.duration_scale=log] [--seed 0] [--eval-every 250] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import torch
from torch.utils.data import DataLoader

from aligner.config import load_config
from aligner.tasks import build_task
from aligner.tasks.speech_losses import duration_loss
from aligner.tasks.truth import TruthErrors
from aligner.train.schedule import build_optimizer


def duration_branch(model: Any) -> list[torch.nn.Parameter]:
    """The parameters the duration loss alone trains."""
    parts = [model.duration]
    if model.duration_encoder is not None:
        parts.append(model.duration_encoder)
    else:
        parts += [model.embedding, model.encoder]
    return [p for part in parts for p in part.parameters()]


def log_durations(model: Any, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
    """(predicted log(1 + frames) (B, N), token mask (B, N)) of a batch."""
    _, mask, predicted = model.encode(batch["tokens"], batch["token_lengths"])
    return predicted, mask


@torch.no_grad()
def evaluate(task: Any, loader: DataLoader) -> dict[str, float]:
    """The validation split's boundary errors and per-token duration error."""
    task.model.eval()
    tally: dict[str, float] = defaultdict(float)
    truth = TruthErrors()
    for batch in loader:
        predicted, mask = log_durations(task.model, batch)
        task.measure(SimpleNamespace(log_durations=predicted, enc_mask=mask), batch, tally, truth)
    task.model.train()
    return {**truth.means(), **task.summarize(tally)}


def main(argv: list[str] | None = None) -> Any:
    """Train and report; returns the task, its model trained."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipe", default="recipes/tts/fastpitch_small.yaml")
    parser.add_argument("--data", required=True)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    # pitch and energy take no part in the durations: their targets are not computed
    overrides = ["model.pitch=false", "model.energy=false", *args.overrides]
    cfg = load_config(args.recipe, overrides)
    task = build_task(cfg, args.data)
    params = duration_branch(task.model)
    optimizer, scheduler = build_optimizer(params, cfg.train)
    clip = cfg.train.grad_clip if cfg.train.grad_clip > 0 else math.inf
    size = cfg.train.batch_size
    train = DataLoader(task.train_set, size, shuffle=True, collate_fn=task.collate, drop_last=True)
    valid = DataLoader(task.valid_set, size, collate_fn=task.collate)
    task.model.train()
    step, start = 0, time.perf_counter()
    while step < args.steps:
        for batch in train:
            predicted, mask = log_durations(task.model, batch)
            weight = task.loss_cfg.duration  # as the full training weighs it, for the clip
            loss = weight * duration_loss(predicted, batch["duration_targets"], mask, task.loss_cfg)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, clip)
            optimizer.step()
            scheduler.step()
            step += 1
            if step % args.eval_every == 0 or step == args.steps:
                result = {k: round(v, 2) for k, v in evaluate(task, valid).items()}
                seconds = round(time.perf_counter() - start)
                print(json.dumps({"step": step, "seconds": seconds, **result}), flush=True)
            if step >= args.steps:
                break
    return task


if __name__ == "__main__":
    main()
