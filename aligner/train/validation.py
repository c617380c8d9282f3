"""Validation during training: the validation batches and one pass of `task.validate` over
them, in eval mode without gradients, with the RNG states left untouched (so how often one
validates does not change the training trajectory)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from aligner.train import distributed as ddp
from aligner.train.batches import autocast, make_batch_sampler, make_loader, to_device
from aligner.train.manager import rng_state, set_rng_state


def validation_batches(task: Any, cfg: Any, device: torch.device) -> Any:
    """The validation batches of `task` on `device` (at most ``cfg.valid_batches``).

    A capped validation takes the same random batches each time (fixed seed); the
    unshuffled sampler would give the shortest items."""
    capped = bool(cfg.valid_batches)
    sampler = make_batch_sampler(
        task.lengths(task.valid_set), cfg.batch_size, capped, 0, ddp.DistInfo()
    )
    loader = make_loader(task.valid_set, sampler, task.collate, cfg.num_workers, cfg.seed)
    batches = (to_device(b, device) for b in loader)
    if capped:
        batches = (b for b, _ in zip(batches, range(cfg.valid_batches)))
    return batches


def run_validation(
    task: Any, model: nn.Module, cfg: Any, device: torch.device, step: int, logger: Any
) -> dict[str, float]:
    """`task.validate` of `model` (unwrapped) at `step`, its metrics logged under ``valid/``;
    the RNG states are as they were before."""
    saved = rng_state()
    batches = validation_batches(task, cfg, device)
    model.eval()
    with torch.no_grad(), autocast(device, cfg.precision):
        metrics = task.validate(model, batches, step, logger)
    model.train()
    set_rng_state(saved)
    if "loss" not in metrics:
        raise KeyError("task.validate must return a 'loss' entry (lower is better)")
    logger.scalars(metrics, step, prefix="valid")
    return metrics
