"""GMM attention, the v2b form of Battenberg et al. (2020).

A 2-layer MLP of the query gives, per mixture component ``k``, pre-activations
``(w_hat, delta_hat, sigma_hat)``:

    w = softmax(w_hat)            mixture weights
    mu_t = mu_{t-1} + softplus(delta_hat)   means only move forward
    sigma = softplus(sigma_hat)   scales

and the weight of position ``j`` is the mixture of normalized Gaussian densities
(the "b" variants: ``Z_k = sqrt(2 pi sigma_k^2)``)

    a_t(j) = sum_k w_k / Z_k exp(-(j - mu_k)^2 / (2 sigma_k^2)).

It is computed as a log-sum-exp and normalized over the valid positions (and the window,
when set), so the weights sum to one even when a component sits near either end and no
dtype underflows to an all-zero row.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .base import Attention, AttentionState, masked_softmax


class GMMAttention(Attention):
    """GMM attention v2b.

    Args:
        components: number of mixture components ``K`` (5).
        min_sigma: floor added to the softplus scale, for stability (0.01).
        delta_bias: initial bias of ``delta_hat`` (so means start moving about
            ``softplus(delta_bias)`` positions a step; 1.0 gives ~1.3).
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        components: int = 5,
        min_sigma: float = 0.01,
        delta_bias: float = 1.0,
        **kw,
    ) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.components = components
        self.min_sigma = min_sigma
        self.mlp = nn.Sequential(
            nn.Linear(query_dim, attn_dim), nn.Tanh(), nn.Linear(attn_dim, 3 * components)
        )
        with torch.no_grad():
            self.mlp[2].bias[components : 2 * components].fill_(delta_bias)
            self.mlp[2].bias[2 * components :].fill_(2.0)

    def init_extras(self, memory: Tensor, mask: Tensor) -> dict[str, Tensor]:
        return {"means": memory.new_zeros(memory.size(0), self.components)}

    def mixture(self, query: Tensor, means: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """``(log_w, mu, sigma)``, each ``(B, K)``, from ``query (B, D_q)``."""
        w_hat, delta_hat, sigma_hat = self.mlp(query).chunk(3, dim=-1)
        mu = means + F.softplus(delta_hat)
        sigma = F.softplus(sigma_hat) + self.min_sigma
        return torch.log_softmax(w_hat, dim=-1), mu, sigma

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        log_w, mu, sigma = self.mixture(query, state.extras["means"])
        neg = torch.finfo(query.dtype).min
        j = torch.arange(mask.size(1), device=mask.device, dtype=query.dtype)
        z = (j[None, None, :] - mu[..., None]) / sigma[..., None]
        log_z = torch.log(sigma) + 0.5 * math.log(2 * math.pi)
        log_terms = (log_w - log_z)[..., None] - 0.5 * z.square()
        log_density = torch.logsumexp(log_terms.clamp_min(neg), dim=1)
        return masked_softmax(log_density, mask), {**state.extras, "means": mu}
