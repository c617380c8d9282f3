"""Dynamic convolution attention (Battenberg et al. 2020).

Purely location-relative: the energies depend on the previous weights ``a_{t-1}`` and the
query only, never on the memory content,

    e_t(j) = v^T tanh(W f_t(j) + U g_t(j) + b) + p_t(j)
    f_t = F * a_{t-1}              static filters
    g_t = G(q_t) * a_{t-1}         dynamic filters predicted from the query
    p_t = log(max(P * a_{t-1}, 1e-6))   causal beta-binomial prior filter
    a_t = softmax(e_t)

with ``a_0`` one-hot on the first position. The prior ``P(k) = BetaBinomial(k; L-1,
alpha, beta)``, ``k = 0..L-1``, only lets the focus stay or move forward.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from scipy.stats import betabinom
from torch import Tensor, nn

from .base import Attention, AttentionState, masked_softmax


def beta_binomial_prior(length: int = 11, alpha: float = 0.1, beta: float = 0.9) -> Tensor:
    """``(length,)`` float32 pmf of BetaBinomial(n=length-1, alpha, beta) at 0..length-1."""
    k = torch.arange(length).numpy()
    return torch.tensor(betabinom(length - 1, alpha, beta).pmf(k), dtype=torch.float32)


class DynamicConvolutionAttention(Attention):
    """DCA with Battenberg et al. (2020) defaults (``attn_dim`` 128).

    Args:
        static_filters / static_kernel: static location filters (8 of length 21).
        dynamic_filters / dynamic_kernel: filters predicted from the query (8 of length 21).
        prior_length, prior_alpha, prior_beta: the causal prior filter (11, 0.1, 0.9).
        prior_floor: floor inside the log of the prior term (1e-6).
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        static_filters: int = 8,
        static_kernel: int = 21,
        dynamic_filters: int = 8,
        dynamic_kernel: int = 21,
        prior_length: int = 11,
        prior_alpha: float = 0.1,
        prior_beta: float = 0.9,
        prior_floor: float = 1e-6,
        **kw,
    ) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        for name, k in (("static_kernel", static_kernel), ("dynamic_kernel", dynamic_kernel)):
            if k % 2 != 1:
                raise ValueError(f"dca {name} must be odd, got {k}")
        self.dynamic_filters = dynamic_filters
        self.dynamic_kernel = dynamic_kernel
        self.prior_floor = prior_floor
        self.static_conv = nn.Conv1d(1, static_filters, static_kernel, padding=static_kernel // 2)
        self.static_proj = nn.Linear(static_filters, attn_dim, bias=True)
        self.dynamic_mlp = nn.Sequential(
            nn.Linear(query_dim, attn_dim),
            nn.Tanh(),
            nn.Linear(attn_dim, dynamic_filters * dynamic_kernel, bias=False),
        )
        self.dynamic_proj = nn.Linear(dynamic_filters, attn_dim, bias=False)
        self.v = nn.Linear(attn_dim, 1, bias=False)
        prior = beta_binomial_prior(prior_length, prior_alpha, prior_beta)
        self.register_buffer("prior_filter", prior.flip(0).view(1, 1, -1), persistent=False)

    def previous(self, state: AttentionState) -> Tensor:
        """``(B, T)``: previous weights, one-hot on position 0 before the first step."""
        first = torch.zeros_like(state.prev_weights)
        first[:, 0] = 1.0
        first = first * state.mask.to(first.dtype)
        return torch.where((state.step == 0)[:, None], first, state.prev_weights)

    def window_size(self) -> int:
        """``K``: one centred window of source positions that holds the static and dynamic
        kernels and the causal prior (offsets ``-(L-1)..0``)."""
        half = max(self.static_conv.kernel_size[0] // 2, self.dynamic_kernel // 2)
        return 2 * max(half, self.prior_filter.size(-1) - 1) + 1

    def windows(self, prev: Tensor, size: int) -> Tensor:
        """``(B, T, K)``: ``windows[b, j, i] = prev[b, j + i - K // 2]`` (zero outside)."""
        half = size // 2
        return F.pad(prev, (half, half)).unfold(1, size, 1)

    @staticmethod
    def _centre(kernel: Tensor, size: int, right: int | None = None) -> Tensor:
        """Zero-pad ``kernel (..., k)`` to ``size`` taps, centred (or with ``right`` taps after it)."""
        extra = size - kernel.size(-1)
        right = extra // 2 if right is None else right
        return F.pad(kernel, (extra - right, right))

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        # The three location convolutions (static, per-item dynamic, causal prior) as
        # matrix products on one unfolded window: far cheaper than three small conv1d
        # calls per decoder step, forward and backward.
        prev = self.previous(state)
        batch, length = prev.shape
        size = self.window_size()
        win = self.windows(prev, size)  # (B, T, K)
        static_w = self._centre(self.static_conv.weight[:, 0], size)  # (F_s, K)
        prior_w = self._centre(self.prior_filter[0].to(static_w.dtype), size, right=size // 2)
        out = win @ torch.cat([static_w, prior_w]).t()  # (B, T, F_s + 1)
        static = out[..., :-1]
        if self.static_conv.bias is not None:
            static = static + self.static_conv.bias
        filters = self.dynamic_mlp(query).view(batch, self.dynamic_filters, -1)
        dynamic = torch.bmm(win, self._centre(filters, size).transpose(1, 2))  # (B, T, F_d)
        hidden = self.static_proj(static) + self.dynamic_proj(dynamic)
        log_prior = torch.log(out[..., -1].clamp_min(self.prior_floor))
        energies = self.v(torch.tanh(hidden)).squeeze(-1) + log_prior
        return masked_softmax(energies, mask), state.extras
