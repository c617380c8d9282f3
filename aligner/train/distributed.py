"""Multi-process data parallel with PyTorch's own DDP, launched by `torchrun`.

`torchrun --nproc-per-node N -m aligner.cli train ...` sets ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK`` and ``MASTER_ADDR/PORT``; `init_distributed` reads them and starts the
process group (nccl on GPU, gloo on CPU). Without them the run is a single process.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistInfo:
    """Where this process stands: its rank, the number of processes, and its device."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def default_device(local_rank: int = 0) -> torch.device:
    return torch.device(f"cuda:{local_rank}") if torch.cuda.is_available() else torch.device("cpu")


def init_distributed(backend: str | None = None) -> DistInfo:
    """Start the process group from torchrun's environment, or return a single-process info."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = default_device(local_rank)
    if world_size <= 1:
        return DistInfo(device=device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend or ("nccl" if device.type == "cuda" else "gloo"))
    return DistInfo(dist.get_rank(), dist.get_world_size(), local_rank, device)


def current() -> DistInfo:
    """The `DistInfo` of an already initialised process group (or single process)."""
    if not (dist.is_available() and dist.is_initialized()):
        return DistInfo(device=default_device())
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    return DistInfo(dist.get_rank(), dist.get_world_size(), local_rank, default_device(local_rank))


def wrap_model(model: nn.Module, info: DistInfo) -> nn.Module:
    """`DistributedDataParallel` around `model` when distributed, else `model` itself."""
    if not info.distributed:
        return model
    ids = [info.device.index] if info.device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(model, device_ids=ids)


def unwrap_model(model: nn.Module) -> nn.Module:
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


def any_true(flag: bool, info: DistInfo) -> bool:
    """True on every rank when `flag` is True on at least one (a collective call)."""
    if not info.distributed:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=info.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def gather_objects(obj: Any, info: DistInfo) -> list[Any]:
    """Every rank's `obj`, in rank order (a collective call)."""
    if not info.distributed:
        return [obj]
    out: list[Any] = [None] * info.world_size
    dist.all_gather_object(out, obj)
    return out


def barrier(info: DistInfo) -> None:
    if info.distributed:
        dist.barrier()


def cleanup() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
