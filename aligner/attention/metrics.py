"""Alignment quality metrics on a padded batch of attention matrices.

Every function takes ``alignments (B, T_dec, T_enc)`` (weights of decoder step ``t`` over
source position ``n``) with ``dec_lengths (B,)`` and ``enc_lengths (B,)`` and returns one
value per item, ``(B,)``; only the valid ``dec_lengths[b] x enc_lengths[b]`` block of each
item is read. :func:`alignment_metrics` gathers them; :func:`summarize` averages a batch.

The hard path ``path[t] = argmax_n a[t, n]`` (over valid ``n``) is used by the skip,
repeat and duration metrics.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from .base import _check_shape, lengths_to_mask


def _masks(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> tuple[Tensor, Tensor]:
    """``dec_mask (B, T_dec)`` and ``enc_mask (B, T_enc)``, after checking the shapes."""
    batch, t_dec, t_enc = alignments.shape
    _check_shape("dec_lengths", dec_lengths, (batch,), "(B,)")
    _check_shape("enc_lengths", enc_lengths, (batch,), "(B,)")
    if int(dec_lengths.max()) > t_dec or int(enc_lengths.max()) > t_enc:
        raise ValueError(
            f"lengths exceed the alignments (B, T_dec, T_enc) = {tuple(alignments.shape)}: "
            f"max dec_length {int(dec_lengths.max())}, max enc_length {int(enc_lengths.max())}"
        )
    device = alignments.device
    return lengths_to_mask(dec_lengths.to(device), t_dec), lengths_to_mask(
        enc_lengths.to(device), t_enc
    )


def _masked(alignments: Tensor, dec_mask: Tensor, enc_mask: Tensor) -> Tensor:
    """Float32 copy with everything outside the valid block set to zero."""
    keep = dec_mask[:, :, None] & enc_mask[:, None, :]
    return alignments.float() * keep


def _step_mean(values: Tensor, dec_mask: Tensor) -> Tensor:
    """Mean of ``values (B, T_dec)`` over valid steps; 0 for an empty item."""
    count = dec_mask.sum(1).clamp_min(1)
    return (values * dec_mask).sum(1) / count


def argmax_path(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> Tensor:
    """``(B, T_dec)`` long: argmax source index per step (-1 on padded steps)."""
    dec_mask, enc_mask = _masks(alignments, dec_lengths, enc_lengths)
    scores = alignments.float().masked_fill(~enc_mask[:, None, :], -1.0)
    return scores.argmax(dim=2).masked_fill(~dec_mask, -1)


def focus_rate(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> Tensor:
    """Mean over decoder steps of the largest weight (1 = hard attention)."""
    dec_mask, enc_mask = _masks(alignments, dec_lengths, enc_lengths)
    return _step_mean(_masked(alignments, dec_mask, enc_mask).amax(dim=2), dec_mask)


def entropy(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> Tensor:
    """Mean over decoder steps of ``-sum_n a log a`` in nats (0 = hard attention)."""
    dec_mask, enc_mask = _masks(alignments, dec_lengths, enc_lengths)
    a = _masked(alignments, dec_mask, enc_mask)
    per_step = -(a * torch.log(a.clamp_min(1e-12))).sum(dim=2)
    return _step_mean(per_step, dec_mask)


def diagonality(
    alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor, band: float = 0.1
) -> Tensor:
    """Fraction of the attention mass within a band around the diagonal, in ``[0, 1]``.

    For item lengths ``T`` (decoder) and ``N`` (source), step ``t`` has its diagonal point
    at source position ``d_t = (t + 0.5) N / T - 0.5``; the band keeps positions with
    ``|n - d_t| <= max(1, band * N)``. The value is the band's mass summed over valid
    steps divided by the total mass (1 for a diagonal alignment, near ``2 band`` for a
    uniform one).
    """
    dec_mask, enc_mask = _masks(alignments, dec_lengths, enc_lengths)
    a = _masked(alignments, dec_mask, enc_mask)
    t = torch.arange(a.size(1), device=a.device, dtype=torch.float32)[None, :, None]
    n = torch.arange(a.size(2), device=a.device, dtype=torch.float32)[None, None, :]
    dec_len = dec_lengths.to(a.device).float().clamp_min(1)[:, None, None]
    enc_len = enc_lengths.to(a.device).float()[:, None, None]
    diag = (t + 0.5) * enc_len / dec_len - 0.5
    width = (band * enc_len).clamp_min(1.0)
    inside = (n - diag).abs() <= width
    total = a.sum(dim=(1, 2)).clamp_min(1e-12)
    return (a * inside).sum(dim=(1, 2)) / total


def durations(
    alignments: Tensor,
    dec_lengths: Tensor,
    enc_lengths: Tensor,
    reduction_factor: int = 1,
    n_frames: Tensor | None = None,
) -> Tensor:
    """``(B, T_enc)`` long: frames per source token from the argmax path.

    Each valid decoder step counts for its argmax token, so the durations sum exactly to
    ``dec_lengths``. With a reduction factor ``r > 1`` give ``n_frames (B,)``, the true
    number of frames: each step counts ``r`` frames and the surplus of the last, partial
    step (``steps * r - n_frames``) is taken off the token of the last step, so the
    durations sum to ``n_frames``.
    """
    path = argmax_path(alignments, dec_lengths, enc_lengths)
    valid = path >= 0
    counts = torch.zeros(alignments.shape[0], alignments.shape[2], dtype=torch.long)
    counts = counts.to(path.device).scatter_add_(1, path.clamp_min(0), valid.long())
    if reduction_factor == 1 and n_frames is None:
        return counts
    if n_frames is None:
        raise ValueError("durations: give n_frames (B,) with reduction_factor > 1")
    counts = counts * reduction_factor
    surplus = dec_lengths.to(path.device) * reduction_factor - n_frames.to(path.device)
    if bool((surplus < 0).any()) or bool((surplus >= reduction_factor).any()):
        raise ValueError(
            "durations: n_frames must satisfy ceil(n_frames / r) == dec_lengths, got "
            f"n_frames={n_frames.tolist()}, dec_lengths={dec_lengths.tolist()}, r={reduction_factor}"
        )
    last = path.gather(1, (dec_lengths.to(path.device) - 1).clamp_min(0)[:, None]).clamp_min(0)
    return counts.scatter_add_(1, last, -surplus[:, None])


def _runs(path: Tensor, length: int) -> list[int]:
    """Source indices of the consecutive runs of one item's path (first ``length`` steps)."""
    values = path[:length]
    if length == 0:
        return []
    return torch.unique_consecutive(values).tolist()


def repeated_tokens(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> Tensor:
    """Number of source tokens the argmax path returns to after leaving them.

    A token counts once however often it is revisited; any backwards jump of the path
    therefore yields at least one repeated token. A token held for long without leaving
    is reported by :func:`longest_hold`, not here.
    """
    path = argmax_path(alignments, dec_lengths, enc_lengths).cpu()
    out = []
    for b, length in enumerate(dec_lengths.tolist()):
        runs = torch.tensor(_runs(path[b], int(length)), dtype=torch.long)
        visits = torch.bincount(runs, minlength=1) if len(runs) else torch.zeros(1)
        out.append(int((visits > 1).sum()))
    return torch.tensor(out, device=alignments.device)


def skipped_tokens(
    alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor, **options: Any
) -> Tensor:
    """Number of valid source tokens that were never attended ``(B,)``: `skipped_mask`
    (with its `options`: ``min_weight``, ``required``, ``r``) summed."""
    return skipped_mask(alignments, dec_lengths, enc_lengths, **options).sum(dim=1)


def skipped_mask(
    alignments: Tensor,
    dec_lengths: Tensor,
    enc_lengths: Tensor,
    min_weight: float = 0.5,
    required: Tensor | None = None,
    r: int = 1,
) -> Tensor:
    """``(B, T_enc)`` bool: the valid source tokens that were never attended.

    A token is attended when it is the argmax of at least one step, or when its
    cumulative weight reaches ``min_weight`` frames' worth of attention (0.5 = half a
    frame; this spares short tokens that are passed quickly by a smooth alignment).
    Everything else is skipped. ``r``: output frames per decoder step (a Tacotron's
    reduction factor), each of which the step's weights attend: at r = 4 a token of one
    frame that the alignment gives exactly its frame holds a quarter of a step's weight,
    and is attended.

    ``required (B, T_enc)`` bool, optional: the positions that count (default: every valid
    one). Pass False for markers that are not part of the input and have no frames of
    their own, such as the ``</s>`` a TTS front end appends to the text.
    """
    dec_mask, enc_mask = _masks(alignments, dec_lengths, enc_lengths)
    counts = durations(alignments, dec_lengths, enc_lengths)
    cumulative = _masked(alignments, dec_mask, enc_mask).sum(dim=1)
    attended = (counts > 0) | (cumulative * r >= min_weight)
    if required is not None:
        enc_mask = enc_mask & required.to(enc_mask.device)
    return enc_mask & ~attended


def longest_hold(alignments: Tensor, dec_lengths: Tensor, enc_lengths: Tensor) -> Tensor:
    """Most consecutive decoder steps spent on one token by the argmax path ``(B,)``."""
    path = argmax_path(alignments, dec_lengths, enc_lengths).cpu()
    out = []
    for b, length in enumerate(dec_lengths.tolist()):
        _, counts = torch.unique_consecutive(path[b, : int(length)], return_counts=True)
        out.append(int(counts.max()) if len(counts) else 0)
    return torch.tensor(out, device=alignments.device)


def alignment_metrics(
    alignments: Tensor,
    dec_lengths: Tensor,
    enc_lengths: Tensor,
    required: Tensor | None = None,
    r: int = 1,
) -> dict[str, Tensor]:
    """All per-item metrics ``(B,)``: focus_rate, diagonality, entropy, skipped, repeated,
    longest_hold. ``required`` and ``r`` (frames per decoder step): as
    :func:`skipped_mask` takes them."""
    args = (alignments, dec_lengths, enc_lengths)
    return {
        "focus_rate": focus_rate(*args),
        "diagonality": diagonality(*args),
        "entropy": entropy(*args),
        "skipped": skipped_tokens(*args, required=required, r=r),
        "repeated": repeated_tokens(*args),
        "longest_hold": longest_hold(*args),
    }


def suspect(
    metrics: dict[str, Tensor],
    min_focus: float = 0.4,
    max_hold: int | None = None,
    skips: bool = True,
) -> Tensor:
    """``(B,)`` bool: items with a repeat, focus rate below ``min_focus``, a skip (unless
    not ``skips``: VC, whose decoder rightly passes over source frames where the source is
    slower or pauses longer) or (when ``max_hold`` is given) a token held for more than
    ``max_hold`` steps."""
    flags = (metrics["repeated"] > 0) | (metrics["focus_rate"] < min_focus)
    if skips:
        flags = flags | (metrics["skipped"] > 0)
    if max_hold is not None:
        flags = flags | (metrics["longest_hold"] > max_hold)
    return flags


def summarize(
    metrics: dict[str, Tensor], min_focus: float = 0.4, skips: bool = True
) -> dict[str, float]:
    """Batch means of every metric plus the fraction of items with skips, repeats and
    suspect alignments (see :func:`suspect`, `skips` as there) -- ready for TensorBoard
    scalars."""
    out = {name: float(value.float().mean()) for name, value in metrics.items()}
    out["items_with_skips"] = float((metrics["skipped"] > 0).float().mean())
    out["items_with_repeats"] = float((metrics["repeated"] > 0).float().mean())
    out["suspect"] = float(suspect(metrics, min_focus, skips=skips).float().mean())
    return out
