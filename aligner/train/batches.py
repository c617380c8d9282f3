"""Batches for the trainer: the length-bucketed sampler sharded over DDP ranks, and moving
a (nested) batch to the device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils.data import Sampler

from aligner.train import distributed as ddp


class TrainingError(RuntimeError):
    """Training cannot go on for a reason the user can fix (the message says how)."""


def to_device(batch: Any, device: torch.device) -> Any:
    """Move every tensor of a (nested) batch to `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=True)
    if isinstance(batch, dict):
        return {k: to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, list | tuple):
        return type(batch)(to_device(v, device) for v in batch)
    return batch


def make_batch_sampler(
    lengths: Sequence[int], batch_size: int, shuffle: bool, seed: int, info: ddp.DistInfo
) -> Sampler:
    """The length-bucketed sampler of aligner.data, sharded over DDP ranks."""
    from aligner.data.sampler import BucketBatchSampler

    if len(lengths) == 0:
        raise TrainingError("the training or validation set is empty; check the data folder")
    return BucketBatchSampler(
        list(lengths),
        batch_size,
        shuffle=shuffle,
        seed=seed,
        num_replicas=info.world_size,
        rank=info.rank,
    )
