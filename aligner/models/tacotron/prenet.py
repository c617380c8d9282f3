"""The Tacotron decoder's prenet: linear-ReLU-dropout layers on the previous mel frame."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch
from torch import nn
from torch.nn import functional as F


class Prenet(nn.Module):
    """Linear-ReLU-dropout layers. Dropout stays on in eval mode when ``always_dropout`` is True
    (Tacotron 2: it is the only source of variation at inference); set it False for
    deterministic evaluation."""

    def __init__(
        self,
        in_dim: int,
        dims: tuple[int, ...] = (256, 256),
        dropout: float = 0.5,
        always_dropout: bool = True,
    ) -> None:
        super().__init__()
        sizes = (in_dim, *dims)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.dropout, self.always_dropout = dropout, always_dropout
        self.out_dim = sizes[-1]

    @contextlib.contextmanager
    def deterministic(self) -> Iterator[None]:
        """Dropout off at inference inside the block (a measurement: the same output every
        time), restored after it."""
        saved, self.always_dropout = self.always_dropout, False
        try:
            yield
        finally:
            self.always_dropout = saved

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., in_dim) -> (..., dims[-1])."""
        active = self.training or self.always_dropout
        for layer in self.layers:
            x = F.dropout(F.relu(layer(x)), self.dropout, training=active)
        return x
