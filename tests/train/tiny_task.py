"""A tiny task implementing aligner.tasks.base.Task, for testing the generic trainer.

Masked regression over variable-length random sequences with a dropout layer (so the
torch RNG matters for exact resume). ``nan_steps`` makes the loss NaN at those steps.
It is also a task module (``build(cfg, data_dir)``) usable as ``task: tiny_task`` in a
recipe when this folder is on PYTHONPATH.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import Dataset


class SeqDataset(Dataset):
    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        w = torch.tensor([0.5, -1.0, 2.0])
        self.items = []
        for _ in range(n):
            length = int(torch.randint(3, 12, (1,), generator=g))
            x = torch.randn(length, 3, generator=g)
            self.items.append((x, x @ w + 0.1 * torch.randn(length, generator=g)))

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.items[i]


class TinyModel(nn.Module):
    def __init__(self, hidden: int = 8, dropout: float = 0.1) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(3, hidden), nn.Tanh(), nn.Dropout(dropout), nn.Linear(hidden, 1)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, 3) -> (B, T)"""
        return self.net(x).squeeze(-1)


class TinyTask:
    def __init__(
        self,
        n_train: int = 48,
        n_valid: int = 8,
        nan_steps: Sequence[int] = (),
        sleep: float = 0.0,
        hidden: int = 8,
        dropout: float = 0.1,
    ) -> None:
        self.model = TinyModel(hidden, dropout)
        self.train_set = SeqDataset(n_train, seed=1)
        self.valid_set = SeqDataset(n_valid, seed=2)
        self.symbols = {"kind": "tiny", "dims": [3, 1]}
        self.nan_steps = set(nan_steps)
        self.sleep = sleep
        self.loss_steps: list[int] = []

    def lengths(self, dataset: SeqDataset) -> list[int]:
        return [len(x) for x, _ in dataset.items]

    def collate(self, examples: list[tuple[torch.Tensor, torch.Tensor]]) -> dict[str, Any]:
        xs, ys = zip(*examples)
        lengths = torch.tensor([len(x) for x in xs])
        x = nn.utils.rnn.pad_sequence(list(xs), batch_first=True)
        y = nn.utils.rnn.pad_sequence(list(ys), batch_first=True)
        mask = torch.arange(x.shape[1])[None] < lengths[:, None]
        return {"x": x, "y": y, "mask": mask}

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        self.loss_steps.append(step)
        if self.sleep:
            time.sleep(self.sleep)
        pred = model(batch["x"])
        err = ((pred.float() - batch["y"]) ** 2 * batch["mask"]).sum() / batch["mask"].sum()
        if step in self.nan_steps:
            err = err * float("nan")
        return err, {"mse": float(err.detach())}

    def validate(self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any):
        total, count = 0.0, 0
        for batch in batches:
            pred = model(batch["x"])
            total += float((((pred.float() - batch["y"]) ** 2) * batch["mask"]).sum())
            count += int(batch["mask"].sum())
            if logger is not None and logger.enabled:
                w = torch.softmax(torch.outer(pred[0].float(), torch.arange(4.0)), -1)
                logger.alignment("valid/alignment/0", w, step)
        return {"loss": total / count}


def build(cfg, data_dir: Path) -> TinyTask:
    return TinyTask(**cfg.model)
