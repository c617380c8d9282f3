"""Location-sensitive attention (Chorowski et al. 2015, as in Tacotron 2)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .base import Attention, AttentionState, masked_softmax


class LocationFeatures(nn.Module):
    """Convolution over stacked ``[prev, cumulative]`` weights, projected to ``attn_dim``.

    ``(B, 2, T) -> (B, T, A)``; same-length output (odd ``kernel_size``).
    """

    def __init__(self, attn_dim: int, filters: int = 32, kernel_size: int = 31) -> None:
        super().__init__()
        if kernel_size % 2 != 1:
            raise ValueError(f"location kernel_size must be odd, got {kernel_size}")
        self.conv = nn.Conv1d(2, filters, kernel_size, padding=kernel_size // 2, bias=False)
        self.proj = nn.Linear(filters, attn_dim, bias=False)

    def forward(self, stacked: Tensor) -> Tensor:
        return self.proj(self.conv(stacked).transpose(1, 2))


class LocationSensitiveAttention(Attention):
    """Energies ``v^T tanh(W q + U k + F * [a_{t-1}; sum a])`` (Tacotron 2 defaults).

    Args:
        filters: number of location filters (32).
        kernel_size: location filter length (31).
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        filters: int = 32,
        kernel_size: int = 31,
        **kw,
    ) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.query_layer = nn.Linear(query_dim, attn_dim, bias=False)
        self.key_layer = nn.Linear(memory_dim, attn_dim, bias=False)
        self.location = LocationFeatures(attn_dim, filters, kernel_size)
        self.v = nn.Linear(attn_dim, 1, bias=True)

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.key_layer(memory)

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        stacked = torch.stack([state.prev_weights, state.cum_weights], dim=1)
        hidden = self.query_layer(query).unsqueeze(1) + state.keys + self.location(stacked)
        energies = self.v(torch.tanh(hidden)).squeeze(-1)
        return masked_softmax(energies, mask), state.extras
