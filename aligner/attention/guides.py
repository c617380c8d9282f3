"""Attention guides from a known alignment: the target attention of every decoder step,
taken from a path that gives each output frame its place in the source (pre-alignment
guided attention, Zhu et al. 2019; the static prior of RAD-TTS, Badlani et al. 2021).

A path is one float per output (mel) frame: the source position that frame belongs to.
TTS: the token a forced alignment gives the frame (`duration_positions`). VC: the source
encoder position that a pair of forced alignments of the same text maps the target frame
to (`pair_positions`). `path_guide` turns paths into guides ``(B, S, N)`` of decoder
steps of ``r`` frames: each valid row sums to one, padded rows and columns are zero.
`guide_divergence` scores attention against a guide (KL, zero when they are equal).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch.nn import functional as F

from .base import _check_shape


def duration_positions(durations: Tensor) -> Tensor:
    """The token of every frame of a hard alignment.

    Args:
        durations: ``(N,)`` frames of each token (>= 0; a token of 0 frames gets none).

    Returns:
        ``(T,)`` float token index of each frame, ``T = durations.sum()``.
    """
    durations = torch.as_tensor(durations).long()
    if durations.dim() != 1 or bool((durations < 0).any()):
        raise ValueError(f"durations must be (N,) and >= 0, got {durations.tolist()}")
    tokens = torch.arange(len(durations), dtype=torch.float32)
    return torch.repeat_interleave(tokens, durations)


def pair_positions(src_durations: Tensor, tgt_durations: Tensor, reduction: int = 1) -> Tensor:
    """Where each target frame lies in the source, from forced alignments of the same
    tokens on both sides: token by token, linear within a token (frame centres to frame
    centres), in encoder positions after a time reduction by `reduction`.

    Args:
        src_durations: ``(N,)`` source frames of each token.
        tgt_durations: ``(N,)`` target frames of each token.
        reduction: source frames per encoder position.

    Returns:
        ``(T_tgt,)`` float encoder positions in ``[0, ceil(T_src / reduction) - 1]``. A
        target frame of a token that has no source frames sits on the boundary between the
        source tokens around it.
    """
    src, tgt = torch.as_tensor(src_durations).long(), torch.as_tensor(tgt_durations).long()
    if src.shape != tgt.shape or src.dim() != 1:
        raise ValueError(
            f"source and target durations must be (N,) of one length, got {tuple(src.shape)} "
            f"and {tuple(tgt.shape)}"
        )
    if bool((src < 0).any() | (tgt < 0).any()) or int(src.sum()) < 1:
        raise ValueError("durations must be >= 0, with at least one source frame")
    src_start = torch.cumsum(src, 0) - src
    token = duration_positions(tgt).long()  # (T_tgt,)
    tgt_start = (torch.cumsum(tgt, 0) - tgt)[token]
    offset = torch.arange(len(token), dtype=torch.float32) - tgt_start + 0.5  # in the token
    scale = src[token].float() / tgt[token].float()
    frame = src_start[token].float() + offset * scale - 0.5  # a source frame (centre)
    n_enc = math.ceil(int(src.sum()) / reduction)
    return ((frame + 0.5) / reduction - 0.5).clamp(0, n_enc - 1)


def path_guide(
    paths: list[Tensor],
    n_sources: Tensor,
    n_steps: int,
    n_cols: int,
    r: int = 1,
    width: float = 0.0,
) -> Tensor:
    """Guides ``(B, n_steps, n_cols)`` from one path per item.

    Frame ``f`` of item ``b`` puts its weight on source position ``paths[b][f]`` (shared
    linearly between the two positions around a fractional one); with ``width > 0`` each
    frame's weight is spread over its neighbours in time by a Gaussian of that standard
    deviation in frames (soft edges between tokens; truncated at 3 widths and renormalized
    at the ends of the utterance). Decoder step ``s`` holds frames ``[s r, s r + r)``: its
    row is the mean of its valid frames' rows.

    Args:
        paths: B tensors ``(T_b,)``, source positions in ``[0, n_sources[b] - 1]``.
        n_sources: ``(B,)`` source lengths ``N_b <= n_cols``.
        n_steps: ``S >= ceil(max T_b / r)``, the rows of the guide (the model's steps).
        n_cols: the columns of the guide (the padded source length).
        r: frames per decoder step.
        width: the Gaussian's standard deviation in frames (0: hard edges).

    Returns:
        ``(B, S, n_cols)`` float; the rows of the ``ceil(T_b / r)`` valid steps sum to
        one, other rows and the columns ``>= N_b`` are zero.
    """
    batch = len(paths)
    _check_shape("n_sources", n_sources, (batch,), "(B,)")
    longest = max((len(p) for p in paths), default=0)
    if n_steps * r < longest or int(n_sources.max()) > n_cols:
        raise ValueError(
            f"path_guide: {n_steps} steps of {r} frames and {n_cols} columns are smaller "
            f"than the paths (longest {longest} frames, most sources {int(n_sources.max())})"
        )
    frames = torch.zeros(batch, n_steps * r, n_cols)
    valid = torch.zeros(batch, n_steps * r)
    for b, path in enumerate(paths):
        path = path.float().clamp(0, max(int(n_sources[b]) - 1, 0))
        low = path.floor().long()
        high = (low + 1).clamp(max=int(n_sources[b]) - 1)
        share = path - low.float()
        rows = torch.arange(len(path))
        frames[b, rows, low] += 1 - share
        frames[b, rows, high] += share
        valid[b, : len(path)] = 1
    if width > 0:
        frames, valid_spread = (
            _smooth(frames, width, valid),
            _smooth(valid[..., None], width, valid),
        )
        valid = _mask(paths, n_steps * r)
        frames = frames / valid_spread.clamp_min(1e-12) * valid[..., None]
    steps = frames.view(batch, n_steps, r, n_cols).sum(2)
    counts = valid.view(batch, n_steps, r).sum(2, keepdim=True)
    return steps / counts.clamp_min(1)


def _mask(paths: list[Tensor], length: int) -> Tensor:
    """``(B, length)`` 1.0 on the frames of each path."""
    lengths = torch.tensor([len(p) for p in paths])
    return (torch.arange(length)[None] < lengths[:, None]).float()


def _smooth(x: Tensor, width: float, valid: Tensor) -> Tensor:
    """``x (B, T, C)`` convolved over T with a Gaussian of std `width` frames, the frames
    outside ``valid (B, T)`` counted as zero."""
    half = max(1, math.ceil(3 * width))
    taps = torch.arange(-half, half + 1, dtype=torch.float32)
    kernel = torch.exp(-0.5 * (taps / width) ** 2)
    batch, length, channels = x.shape
    flat = (x * valid[..., None]).permute(0, 2, 1).reshape(batch * channels, 1, length)
    out = F.conv1d(flat, kernel.view(1, 1, -1), padding=half)
    return out.view(batch, channels, length).permute(0, 2, 1)


def guide_divergence(alignments: Tensor, guide: Tensor, steps: Tensor, eps: float = 1e-4) -> Tensor:
    """Per item, the KL divergence of the attention from the guide summed over its valid
    decoder steps: ``sum_s sum_t G[s,t] (log G[s,t] - log(A[s,t] + eps))``; zero (up to
    `eps`) when the attention equals the guide, and larger the more weight lies elsewhere.

    Args:
        alignments: ``(B, S, T_enc)`` attention weights.
        guide: ``(B, S, T_enc)`` from `path_guide` (rows of valid steps sum to one).
        steps: ``(B,)`` valid decoder steps of each item.

    Returns:
        ``(B,)`` sums; divide by the steps for a mean per step.
    """
    _check_shape("guide", guide, tuple(alignments.shape), "(B, S, T_enc) as the alignments")
    _check_shape("steps", steps, (alignments.size(0),), "(B,)")
    g = guide.to(alignments.device, torch.float32)
    a = alignments.float()
    cells = torch.where(g > 0, g * (torch.log(g.clamp_min(1e-12)) - torch.log(a + eps)), 0.0)
    valid = torch.arange(a.size(1), device=a.device)[None] < steps.to(a.device)[:, None]
    return (cells.sum(2) * valid).sum(1)
