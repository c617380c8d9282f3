"""Local attention (Luong et al. 2015): a window of half-width D around any content scorer.

- ``local-m``: the window is centred on ``p_t = t`` (the decoder step), clamped to each
  item's last valid index.
- ``local-p``: ``p_t = S * sigmoid(v_p^T tanh(W_p h_t))`` with ``S`` each item's true
  length, and a Gaussian of standard deviation ``D / 2`` centred on ``p_t``.

At both ends of the source the window is truncated to the valid positions ("we simply
ignore the outside part", Luong 2015). Local-p multiplies the in-window softmax by the
Gaussian, as in the paper, and renormalizes (adds ``log N(j; p_t, D/2)`` to the energies
before the softmax) so that the weights remain a distribution.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .base import Attention, AttentionState, Window, masked_softmax
from .content import build_scorer


class LocalAttention(Attention):
    """Shared part of local-m and local-p.

    Args:
        window: half-width ``D`` of the local window (int). A ``(back, front)`` tuple is
            taken as the inference-time monotonic constraint instead, as for every other
            mechanism; then give ``D`` with ``half_width``.
        scorer: content scorer inside the window: ``dot``, ``general``, ``concat``,
            ``additive``.
        half_width: ``D`` when ``window`` carries the monotonic constraint.
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        window: int | Window | None = 10,
        scorer: str = "general",
        half_width: int | None = None,
    ) -> None:
        constraint = window if isinstance(window, tuple | list) else None
        size = half_width if half_width is not None else window if constraint is None else 10
        if not isinstance(size, int) or size < 1:
            raise ValueError(
                f"local attention: window half-width D must be an int >= 1, got {size!r}"
            )
        super().__init__(query_dim, memory_dim, attn_dim, window=constraint)
        self.half_width = size
        self.scorer = build_scorer(scorer, query_dim, memory_dim, attn_dim)

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.scorer.project_keys(memory)

    def init_extras(self, memory: Tensor, mask: Tensor) -> dict[str, Tensor]:
        return {"center": memory.new_zeros(memory.size(0))}

    def center(self, query: Tensor, state: AttentionState) -> Tensor:
        """``(B,)`` float: window centre ``p_t`` in source positions."""
        raise NotImplementedError

    def log_prior(self, center: Tensor, positions: Tensor) -> Tensor | None:
        """Optional ``(B, T)`` term added to the energies (local-p's Gaussian)."""
        return None

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        center = self.center(query, state)
        positions = torch.arange(mask.size(1), device=mask.device, dtype=center.dtype)
        inside = (positions[None, :] - center[:, None]).abs() <= self.half_width
        energies = self.scorer.score(query.unsqueeze(1), state.keys).squeeze(1)
        prior = self.log_prior(center, positions)
        if prior is not None:
            energies = energies + prior
        weights = masked_softmax(energies, mask & inside)
        return weights, {**state.extras, "center": center}


class LocalMonotonicAttention(LocalAttention):
    """local-m: the window is centred on the decoder step, ``p_t = min(t, S - 1)``."""

    def center(self, query: Tensor, state: AttentionState) -> Tensor:
        last = (state.lengths - 1).clamp_min(0)
        return torch.minimum(state.step, last).to(query.dtype)


class LocalPredictiveAttention(LocalAttention):
    """local-p: predicted centre ``p_t = S sigmoid(v_p^T tanh(W_p h_t))`` and a Gaussian."""

    def __init__(self, query_dim: int, memory_dim: int, attn_dim: int = 128, **kw) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.position_layer = nn.Sequential(
            nn.Linear(query_dim, attn_dim), nn.Tanh(), nn.Linear(attn_dim, 1, bias=False)
        )

    def center(self, query: Tensor, state: AttentionState) -> Tensor:
        fraction = torch.sigmoid(self.position_layer(query).squeeze(-1))
        return state.lengths.to(query.dtype) * fraction

    def log_prior(self, center: Tensor, positions: Tensor) -> Tensor:
        sigma = self.half_width / 2
        return -((positions[None, :] - center[:, None]) ** 2) / (2 * sigma**2)
