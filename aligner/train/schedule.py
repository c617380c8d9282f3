"""Learning-rate schedules: linear warm-up followed by noam, exponential, cosine or no decay.

`lr_factor(step, ...)` is the multiplier of the base learning rate used for optimizer
update number `step` (0-based); `build_scheduler` wraps it in a `LambdaLR`, whose
state_dict makes resume exact.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import torch
from torch.optim.lr_scheduler import LambdaLR

DECAYS = ("noam", "exponential", "cosine", "none")


def lr_factor(
    step: int,
    *,
    warmup_steps: int,
    decay: str,
    max_steps: int = 1,
    decay_rate: float = 0.5,
    decay_steps: int = 10_000,
    min_factor: float = 0.0,
) -> float:
    """Multiplier of the base lr at 0-based update `step`.

    Warm-up (``step < warmup_steps``): ``(step + 1) / warmup_steps``. After it, with
    ``s = step - warmup_steps``:
      - noam: ``sqrt(warmup / (step + 1))`` (inverse square root, 1 at the end of warm-up),
      - exponential: ``decay_rate ** (s / decay_steps)``,
      - cosine: ``min + (1 - min) * (1 + cos(pi * s / (max_steps - warmup))) / 2``,
      - none: 1.
    The noam, exponential and cosine factors never fall below `min_factor`.
    """
    if decay not in DECAYS:
        raise ValueError(f"unknown lr decay {decay!r}; choose one of {', '.join(DECAYS)}")
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    s = step - warmup_steps
    if decay == "none":
        return 1.0
    if decay == "noam":
        factor = math.sqrt(max(warmup_steps, 1) / (step + 1)) if warmup_steps else 1.0
    elif decay == "exponential":
        factor = decay_rate ** (s / decay_steps)
    else:
        span = max(max_steps - warmup_steps, 1)
        cos = (1 + math.cos(math.pi * min(s / span, 1.0))) / 2
        return min_factor + (1 - min_factor) * cos
    return max(factor, min_factor)


def build_scheduler(
    optimizer: torch.optim.Optimizer,
    *,
    lr: float,
    warmup_steps: int,
    decay: str,
    max_steps: int,
    decay_rate: float = 0.5,
    decay_steps: int = 10_000,
    min_lr: float = 0.0,
) -> torch.optim.lr_scheduler.LambdaLR:
    """A `LambdaLR` applying `lr_factor` to every parameter group of `optimizer`."""
    fn = partial(
        lr_factor,
        warmup_steps=warmup_steps,
        decay=decay,
        max_steps=max_steps,
        decay_rate=decay_rate,
        decay_steps=decay_steps,
        min_factor=min(min_lr / lr, 1.0) if lr > 0 else 0.0,
    )
    return torch.optim.lr_scheduler.LambdaLR(optimizer, fn)


def build_optimizer(params: list, cfg: Any) -> tuple[torch.optim.Optimizer, LambdaLR]:
    """AdamW over `params` and its warm-up + decay schedule, from a `TrainConfig`."""
    optimizer = torch.optim.AdamW(
        params, lr=cfg.lr, betas=tuple(cfg.betas), weight_decay=cfg.weight_decay
    )
    scheduler = build_scheduler(
        optimizer,
        lr=cfg.lr,
        warmup_steps=cfg.warmup_steps,
        decay=cfg.decay,
        max_steps=cfg.max_steps,
        decay_rate=cfg.decay_rate,
        decay_steps=cfg.decay_steps,
        min_lr=cfg.min_lr,
    )
    return optimizer, scheduler
