"""Batches for the trainer: the length-bucketed sampler sharded over DDP ranks, the data
loader, moving a (nested) batch to the device, the autocast context of the run's precision
(the validation batches: `aligner.train.validation`)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils.data import DataLoader, Sampler

from aligner.data.sampler import BucketBatchSampler
from aligner.train import distributed as ddp
from aligner.train.errors import TrainingError


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


def autocast(device: torch.device, precision: str) -> contextlib.AbstractContextManager:
    """`torch.autocast` to bf16 or fp16 on `device` for that `precision`, else a no-op."""
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def make_loader(
    dataset: Any, sampler: Sampler, collate: Any, num_workers: int, seed: int
) -> DataLoader:
    """A `DataLoader` of `dataset` by the batch `sampler`, with its own generator (the
    global RNG is left untouched)."""
    return DataLoader(
        dataset,
        batch_sampler=sampler,
        collate_fn=collate,
        num_workers=num_workers,
        generator=torch.Generator().manual_seed(seed),
        persistent_workers=False,
    )
