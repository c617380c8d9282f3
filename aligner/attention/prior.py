"""The beta-binomial alignment prior (Badlani et al. 2021, "One TTS Alignment To Rule Them
All"; FastPitch), in the log domain.

For an utterance of ``T`` frames and ``N`` tokens, frame ``t`` (1-based) puts on token
``k`` (0-based) the probability of a beta-binomial distribution over ``0..N-1`` with
``alpha = s * t`` and ``beta = s * (T - t + 1)`` (``s``, the scaling, widens or narrows
it): a soft band around the diagonal that moves from the first token to the last. Added to
the attention's log-scores while training, it lets a distance-based alignment find the
diagonal from the first steps.
"""

from __future__ import annotations

import torch
from torch import Tensor


def _log_beta(a: Tensor, b: Tensor) -> Tensor:
    return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a + b)


def beta_binomial_log_prior(
    frame_lengths: Tensor, token_lengths: Tensor, scaling: float = 1.0
) -> Tensor:
    """``(B, T_max, N_max)`` log-probabilities of the prior (float32, on the lengths' device).

    Row ``t`` of item ``b`` is ``log P(k | t)`` over its ``N_b`` tokens (``logsumexp`` 0);
    padded frames and tokens are 0 (no effect when added before a masked softmax).

    Args:
        frame_lengths: ``(B,)`` frames ``T_b``.
        token_lengths: ``(B,)`` tokens ``N_b``.
        scaling: ``s`` > 0; smaller values spread the band.
    """
    if scaling <= 0:
        raise ValueError(f"prior scaling must be > 0, got {scaling}")
    device = frame_lengths.device
    big_t = frame_lengths.to(torch.float64)[:, None, None]
    n = (token_lengths.to(device, torch.float64) - 1)[:, None, None]
    t = torch.arange(1, int(frame_lengths.max()) + 1, device=device, dtype=torch.float64)
    k = torch.arange(int(token_lengths.max()), device=device, dtype=torch.float64)
    t, k = t[None, :, None], k[None, None, :]
    alpha, beta = scaling * t, scaling * (big_t - t + 1)
    n_k = (n - k).clamp_min(0)
    log_choose = torch.lgamma(n + 1) - torch.lgamma(k + 1) - torch.lgamma(n_k + 1)
    log_p = log_choose + _log_beta(k + alpha, n_k + beta) - _log_beta(alpha, beta)
    valid = (t <= big_t) & (k <= n)
    return torch.where(valid, log_p, torch.zeros_like(log_p)).float()


def spanned_log_prior(
    frame_lengths: Tensor, token_lengths: Tensor, spans: Tensor, scaling: float = 1.0
) -> Tensor:
    """``(B, T_max, N_max)``: the prior of `beta_binomial_log_prior` laid over each
    utterance's frames ``spans[b, 0] <= t < spans[b, 1]`` (where it has sound); a frame
    before the span takes the span's first row (the first token: a ``<s>`` that holds the
    leading silence), a frame after it the last row. Spans of ``(0, T_b)`` give the plain
    prior. Padded frames and tokens are 0.

    Args:
        frame_lengths: ``(B,)`` frames ``T_b``; token_lengths: ``(B,)`` tokens ``N_b``.
        spans: ``(B, 2)`` first frame and one past the last of the span (``0 <= a < b <=
            T_b``).
    """
    spans = spans.to(frame_lengths.device).long()
    start = spans[:, 0].clamp(min=0)
    inner = (spans[:, 1].minimum(frame_lengths) - start).clamp_min(1)
    prior = beta_binomial_log_prior(inner, token_lengths, scaling)
    t = torch.arange(int(frame_lengths.max()), device=frame_lengths.device)
    rows = (t[None, :] - start[:, None]).clamp(min=0).minimum(inner[:, None] - 1)
    out = torch.gather(prior, 1, rows[:, :, None].expand(-1, -1, prior.size(2)))
    return out * (t[None, :, None] < frame_lengths[:, None, None])
