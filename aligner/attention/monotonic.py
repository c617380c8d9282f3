"""Forward attention (Zhang et al. 2018) and the inference-time monotonic window.

Forward attention keeps a distribution ``alpha`` that can only stay or move one position
forward per step:

    alpha'_t(n) = ((1 - u) alpha_{t-1}(n) + u alpha_{t-1}(n - 1)) * y_t(n),
    alpha_t = alpha'_t / sum_n alpha'_t(n)

where ``y_t`` is the softmax of additive content energies and ``u = 0.5`` without the
transition agent (the factor cancels in the normalization, giving the plain
``alpha_{t-1}(n) + alpha_{t-1}(n-1)`` recursion) or ``u = sigmoid(DNN([c_t; q_t]))``
with it (forward-TA, computed after each step and used at the next). The recursion runs
in the log domain so that fp16/bf16 never underflow to an all-zero row. ``alpha_0`` is
one-hot on the first position.

The window constraint itself lives in :mod:`aligner.attention.base` (every mechanism
accepts ``window=(back, front)``); :func:`apply_window` applies it to weights computed
elsewhere.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import Attention, AttentionState, Window, check_window, masked_softmax, window_mask

__all__ = ["ForwardAttention", "apply_window", "window_mask"]


def apply_window(
    weights: Tensor, position: Tensor, window: Window, mask: Tensor | None = None
) -> Tensor:
    """Zero ``weights (B, T)`` outside ``[position - back, position + front]`` per item
    (``position (B,)`` long) and renormalize; rows left empty become zeros."""
    back, front = check_window(window)
    allowed = window_mask(position, weights.size(1), (back, front))
    if mask is not None:
        allowed = allowed & mask
    kept = weights * allowed.to(weights.dtype)
    total = kept.sum(dim=1, keepdim=True)
    return torch.where(total > 0, kept / total.clamp_min(torch.finfo(total.dtype).tiny), kept)


def _log_shift(log_alpha: Tensor, neg: float) -> Tensor:
    """``log alpha(n - 1)`` with ``log 0`` (the dtype's min) entering at ``n = 0``."""
    return F.pad(log_alpha[:, :-1], (1, 0), value=neg)


class ForwardAttention(Attention):
    """Forward attention over additive content energies; optional transition agent.

    Args:
        transition_agent: learn the move probability ``u`` from ``[context; query]``.
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        transition_agent: bool = False,
        **kw,
    ) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.query_layer = nn.Linear(query_dim, attn_dim, bias=False)
        self.key_layer = nn.Linear(memory_dim, attn_dim, bias=True)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        self.agent = nn.Linear(memory_dim + query_dim, 1) if transition_agent else None

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.key_layer(memory)

    def init_extras(self, memory: Tensor, mask: Tensor) -> dict[str, Tensor]:
        batch, length, _ = memory.shape
        neg = torch.finfo(memory.dtype).min
        log_alpha = memory.new_full((batch, length), neg)
        log_alpha[:, 0] = 0.0
        return {"log_alpha": log_alpha, "transition": memory.new_full((batch, 1), 0.5)}

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        hidden = torch.tanh(self.query_layer(query).unsqueeze(1) + state.keys)
        energies = self.v(hidden).squeeze(-1)  # under autocast: a lower precision than query
        energies = energies.masked_fill(~state.mask, torch.finfo(energies.dtype).min)
        log_y = torch.log_softmax(energies, dim=-1)
        prev = state.extras["log_alpha"]
        neg = torch.finfo(torch.promote_types(prev.dtype, log_y.dtype)).min
        u = state.extras["transition"].clamp(1e-4, 1 - 1e-4)
        stay = prev + torch.log1p(-u)
        move = _log_shift(prev, neg) + torch.log(u)
        log_alpha = (torch.logaddexp(stay, move) + log_y).clamp_min(neg)
        log_alpha = log_alpha.masked_fill(~mask, neg)
        weights = masked_softmax(log_alpha, mask)
        log_norm = torch.logsumexp(log_alpha, dim=-1, keepdim=True)
        extras = {**state.extras, "log_alpha": (log_alpha - log_norm).clamp_min(neg)}
        return weights, extras

    def update_extras(
        self, query: Tensor, context: Tensor, extras: dict[str, Tensor]
    ) -> dict[str, Tensor]:
        if self.agent is None:
            return extras
        u = torch.sigmoid(self.agent(torch.cat([context, query], dim=-1)))
        return {**extras, "transition": u}
