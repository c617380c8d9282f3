"""Alignment losses: the guided attention loss (Tachibana et al. 2017), aware of the
reduction factor, and the forward-sum and binarization losses of an alignment model
(Badlani et al. 2021)."""

from __future__ import annotations

import torch
from torch import Tensor

from .base import _check_shape, lengths_to_mask


def guided_attention_weights(n_steps: int, n_tokens: int, g: float = 0.2) -> Tensor:
    """``(n_steps, n_tokens)`` penalty ``W[n, t] = 1 - exp(-(n/N - t/T)^2 / (2 g^2))``."""
    n = torch.arange(n_steps, dtype=torch.float32)[:, None] / n_steps
    t = torch.arange(n_tokens, dtype=torch.float32)[None, :] / n_tokens
    return 1.0 - torch.exp(-((n - t) ** 2) / (2 * g**2))


def decoder_steps(n_frames: Tensor, reduction_factor: int = 1) -> Tensor:
    """``ceil(n_frames / r)``: decoder steps that emit ``n_frames`` frames, ``r`` a step."""
    return torch.div(n_frames + reduction_factor - 1, reduction_factor, rounding_mode="floor")


def guided_attention_loss(
    alignments: Tensor,
    frame_lengths: Tensor,
    enc_lengths: Tensor,
    g: float = 0.2,
    reduction_factor: int = 1,
) -> Tensor:
    """Expected off-diagonal penalty per decoder step: ``sum_{n,t} W[n,t] A[n,t] / sum_b N_b``.

    Each valid row of ``A`` sums to one, so the loss is in ``[0, 1]`` whatever the source
    length: 0 on the diagonal band, near 1 far from it. (Averaging over all ``N * T`` cells
    instead, as some implementations do, divides the gradient by the source length and
    makes the guide too weak to speed up alignment on long sentences.) The arguments are
    `diagonal_penalty`'s.
    """
    penalty = diagonal_penalty(alignments, frame_lengths, enc_lengths, g, reduction_factor)
    steps = decoder_steps(frame_lengths.to(alignments.device), reduction_factor)
    return penalty.sum() / steps.sum().clamp_min(1)


def diagonal_penalty(
    alignments: Tensor,
    frame_lengths: Tensor,
    enc_lengths: Tensor,
    g: float = 0.2,
    reduction_factor: int = 1,
) -> Tensor:
    """``(B,)`` per item, ``sum_{n,t} W[n,t] A[n,t]`` over its valid cells: the sums that
    `guided_attention_loss` divides by the number of decoder steps.

    Args:
        alignments: ``(B, S, T_enc)`` attention weights, one row per decoder step.
        frame_lengths: ``(B,)`` target lengths in frames (``mel_lengths``); each item has
            ``N = ceil(frames / r)`` decoder steps.
        enc_lengths: ``(B,)`` source lengths ``T``.
        g: width of the band around the diagonal (0.2).
        reduction_factor: frames emitted per decoder step ``r``.

    ``W`` is built per item from its own ``N`` and ``T``; padded cells do not count.
    """
    batch, n_max, t_max = alignments.shape
    _check_shape("frame_lengths", frame_lengths, (batch,), "(B,)")
    _check_shape("enc_lengths", enc_lengths, (batch,), "(B,)")
    steps = decoder_steps(frame_lengths.to(alignments.device), reduction_factor)
    enc = enc_lengths.to(alignments.device)
    if int(steps.max()) > n_max or int(enc.max()) > t_max:
        raise ValueError(
            f"guided_attention_loss: alignments (B, S, T_enc) = {tuple(alignments.shape)} is "
            f"smaller than the lengths (max steps {int(steps.max())} = ceil(frames / "
            f"{reduction_factor}), max tokens {int(enc.max())})"
        )
    n = torch.arange(n_max, device=alignments.device, dtype=torch.float32)[None, :, None]
    t = torch.arange(t_max, device=alignments.device, dtype=torch.float32)[None, None, :]
    big_n = steps.float().clamp_min(1)[:, None, None]
    big_t = enc.float().clamp_min(1)[:, None, None]
    weights = 1.0 - torch.exp(-((n / big_n - t / big_t) ** 2) / (2 * g**2))
    valid = (n < steps[:, None, None]) & (t < enc[:, None, None])
    return (weights * alignments.float() * valid).sum((1, 2))


def forward_sum_loss(
    log_scores: Tensor,
    frame_lengths: Tensor,
    token_lengths: Tensor,
    blank_logprob: float = -1.0,
    required: Tensor | None = None,
) -> Tensor:
    """Minus the log-likelihood of all monotonic paths through an alignment, per token.

    Each frame's scores over its ``N_b`` tokens and one blank (with the constant score
    `blank_logprob`) are normalized by a log-softmax; the likelihood of the token sequence
    ``1..N_b`` then sums over every path that visits each token, in order, for at least one
    frame, blanks allowed between them: CTC with distinct targets
    (``torch.nn.functional.ctc_loss``), as in RAD-TTS. Divided by ``N_b`` and averaged
    over the batch; an item with fewer frames than tokens contributes 0.

    Args:
        log_scores: ``(B, T, N)`` attention log-scores (e.g. minus distances plus a log
            prior); padded cells are ignored.
        frame_lengths: ``(B,)`` ``T_b``.
        token_lengths: ``(B,)`` ``N_b``.
        blank_logprob: the blank's score before normalization.
        required: ``(B, N)`` bool, the tokens every path must visit (None: all of them);
            the others are never on a path (their frames go to neighbours or the blank).
    """
    batch, t_max, n_max = log_scores.shape
    _check_shape("frame_lengths", frame_lengths, (batch,), "(B,)")
    _check_shape("token_lengths", token_lengths, (batch,), "(B,)")
    scores = log_scores.float()
    valid = lengths_to_mask(token_lengths.to(scores.device), n_max)[:, None, :]
    scores = scores.masked_fill(~valid, torch.finfo(scores.dtype).min / 2)
    blank = scores.new_full((batch, t_max, 1), blank_logprob)
    log_probs = torch.log_softmax(torch.cat([blank, scores], dim=2), dim=2)
    positions = torch.arange(1, n_max + 1, device=scores.device).expand(batch, n_max)
    target_lengths = token_lengths.to(scores.device)
    targets = positions
    if required is not None:  # the required positions first, in order
        keep = required.to(scores.device) & valid[:, 0, :]
        targets = torch.sort(torch.where(keep, positions, positions + n_max), dim=1).values
        targets = targets.clamp(max=n_max)
        target_lengths = keep.sum(1)
    loss = torch.nn.functional.ctc_loss(
        log_probs.transpose(0, 1),
        targets,
        frame_lengths.to(scores.device),
        target_lengths,
        blank=0,
        reduction="none",
        zero_infinity=True,
    )
    return (loss / target_lengths.to(loss).clamp_min(1)).mean()


def binarization_loss(hard: Tensor, log_soft: Tensor) -> Tensor:
    """``-sum(hard * log_soft) / sum(hard)``: the mean negative log-probability that the
    soft alignment gives the cells of the hard one (a KL divergence of the hard alignment
    against the soft one, up to the hard one's zero entropy).

    Args:
        hard: ``(B, T, N)`` 0/1 hard alignment (zero on padding).
        log_soft: ``(B, T, N)`` log-probabilities of the soft alignment.
    """
    hard = hard.to(log_soft.dtype)
    picked = (hard * log_soft.clamp_min(-1e4)).sum()
    return -picked / hard.sum().clamp_min(1)
