"""The contract between the generic trainer (aligner/train) and a task (tts, vc, text).

A task owns its model, its datasets and its loss; the trainer owns the loop, the
optimizer, checkpoints, precision, DDP and logging. Nothing in the trainer knows
about mels or tokens.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import torch
from torch import nn
from torch.utils.data import Dataset


class Task(Protocol):
    """What `aligner.train.trainer.Trainer` needs from a task.

    Attributes:
        model: the module to optimize (the trainer wraps it in DDP when distributed).
        train_set, valid_set: map-style datasets of examples.
        symbols: a JSON-able dict saved in every checkpoint (symbol tables, feature
            settings, normalization statistics): what inference needs besides weights.
    """

    model: nn.Module
    train_set: Dataset
    valid_set: Dataset
    symbols: dict[str, Any]

    def lengths(self, dataset: Dataset) -> Sequence[int]:
        """Length of each example (for the length-bucketed batch sampler)."""

    def collate(self, examples: list[Any]) -> dict[str, Any]:
        """Pad a list of examples into a batch dict of tensors (see aligner/data/collate.py)."""

    def loss(
        self, model: nn.Module, batch: dict[str, Any], step: int
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """Forward a batch through `model` (possibly DDP-wrapped); return the scalar loss to
        back-propagate and the named components to log (floats)."""

    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """Run validation; return metrics (must include "loss", lower is better, used to pick
        the best checkpoint). When `logger` (aligner.train.tensorboard.Logger) is given, log
        figures of the fixed validation items (alignments, mels, audio)."""
