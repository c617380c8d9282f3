"""Length-bucketed batch sampler, deterministic per (seed, epoch), DDP-aware and resumable.

Per epoch: shuffle all indices, pad by repeating the first ones so every rank gets
the same number (DistributedSampler semantics), sort large chunks of
``batch_size * num_replicas * bucket_chunks`` items by length, deal each chunk's
sorted items round-robin to the ranks, cut each rank's share into batches of
consecutive items and shuffle the batch order (the same permutation on every rank,
so that the ranks' k-th batches have similar lengths).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.utils.data import Sampler


class BucketBatchSampler(Sampler[list[int]]):
    """Batches of dataset indices with similar lengths.

    Args:
        lengths: length of each item (e.g. mel frames), used for sorting only.
        batch_size: items per batch (per rank).
        shuffle: shuffle items and batch order; ``False`` gives sorted, fixed batches.
        seed: base seed; the epoch's order depends only on ``(seed, epoch)``.
        num_replicas, rank: data-parallel world size and this process's rank.
        drop_last: drop the tail instead of padding, and drop a short last batch.
        bucket_chunks: batches per sorting chunk (larger: tighter buckets, less randomness).
    """

    def __init__(
        self,
        lengths: Sequence[int],
        batch_size: int,
        shuffle: bool = True,
        seed: int = 0,
        num_replicas: int = 1,
        rank: int = 0,
        drop_last: bool = False,
        bucket_chunks: int = 50,
    ) -> None:
        if batch_size < 1 or num_replicas < 1 or bucket_chunks < 1:
            raise ValueError("batch_size, num_replicas and bucket_chunks must be >= 1")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank {rank} out of range for num_replicas={num_replicas}")
        if len(lengths) == 0:
            raise ValueError("BucketBatchSampler needs at least one item")
        if drop_last and len(lengths) < num_replicas:
            raise ValueError(f"{len(lengths)} items cannot fill {num_replicas} replicas")
        self.lengths = torch.as_tensor(list(lengths), dtype=torch.long)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.num_replicas = num_replicas
        self.rank = rank
        self.drop_last = drop_last
        self.bucket_chunks = bucket_chunks
        self.epoch = 0
        self._start = 0  # batches to skip at the next __iter__ (resume)
        self._yielded = 0  # batches yielded so far in the current epoch

    @property
    def num_samples(self) -> int:
        """Items per rank per epoch (after padding or dropping)."""
        n = len(self.lengths)
        if self.drop_last:
            return n // self.num_replicas
        return math.ceil(n / self.num_replicas)

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_samples // self.batch_size
        return math.ceil(self.num_samples / self.batch_size)

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch (call before each epoch, as with DistributedSampler)."""
        if epoch != self.epoch:
            self._start = 0
        self.epoch = epoch

    def batches(self) -> list[list[int]]:
        """All of this rank's batches of the current epoch, in order."""
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        n = len(self.lengths)
        order = torch.randperm(n, generator=g) if self.shuffle else torch.arange(n)
        total = self.num_samples * self.num_replicas
        if total > n:
            order = torch.cat([order, order.repeat(math.ceil(total / n))[: total - n]])
        order = order[:total]
        chunk = self.batch_size * self.num_replicas * self.bucket_chunks
        mine: list[torch.Tensor] = []
        for start in range(0, total, chunk):
            part = order[start : start + chunk]
            part = part[torch.argsort(self.lengths[part], stable=True)]
            mine.append(part[self.rank :: self.num_replicas])
        items = torch.cat(mine).tolist()
        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()
        if self.shuffle:
            batches = [batches[i] for i in torch.randperm(len(batches), generator=g).tolist()]
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        batches = self.batches()
        start, self._start = self._start, 0
        self._yielded = start
        for batch in batches[start:]:
            self._yielded += 1
            yield batch
        self._yielded = 0

    def state_dict(self, consumed: int | None = None) -> dict[str, Any]:
        """Position to resume from.

        Args:
            consumed: batches of this epoch the training loop has finished. Pass it when a
                DataLoader with workers prefetches ahead of the loop; by default the count
                of batches this sampler has yielded is used.
        """
        return {
            "epoch": self.epoch,
            "seed": self.seed,
            "batches_done": self._yielded if consumed is None else consumed,
            "num_replicas": self.num_replicas,
            "batch_size": self.batch_size,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume: the next ``__iter__`` continues the saved epoch after its done batches."""
        for key in ("num_replicas", "batch_size"):
            if state.get(key, getattr(self, key)) != getattr(self, key):
                raise ValueError(
                    f"sampler state has {key}={state[key]}, this run has {getattr(self, key)}; "
                    "resume with the same batch size and number of processes"
                )
        self.epoch = int(state["epoch"])
        self.seed = int(state["seed"])
        self._start = int(state["batches_done"])
        self._yielded = self._start
