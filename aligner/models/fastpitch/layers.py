"""The parts of a FastPitch network (Łańcucki 2021; FastSpeech 2, Ren et al. 2021): the
feed-forward Transformer block, sinusoidal positions, the variance predictors (duration,
pitch, energy: one value per token) and the length regulator, and what every duration
model's forward pass gives (`DurationOutput`: FastPitch's and FastVC's).

Every part takes a ``mask (B, L)``, True at the valid positions, and zeroes the padded
ones before each convolution, so that an item gives the same output in a padded batch as
alone (the padding then acts as the convolution's own zero padding).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class DurationOutput:
    """What a duration model's forward pass gives (FastPitch over tokens, FastVC over the
    source's encoder steps: N encoder positions).

    mel, mel_post: (B, T, M) before / after the postnet (the same without one), zero at
    padded frames; mel_mask (B, T); log_durations (B, N): predicted log(1 + frames) of each
    encoder position; enc_mask (B, N): the valid ones; durations (B, N): the whole frames
    each got (given, or predicted and rounded); phone_logits: FastVC's phone classes of
    each encoder position (B, N, K) and of each decoded frame (B, T, K) in teacher forcing,
    where its recipe learns them (None otherwise).
    """

    mel: torch.Tensor
    mel_post: torch.Tensor
    mel_mask: torch.Tensor
    log_durations: torch.Tensor
    enc_mask: torch.Tensor
    durations: torch.Tensor
    phone_logits: tuple[torch.Tensor, torch.Tensor] | None = None


def sinusoids(length: int, dim: int, device: torch.device | None = None) -> torch.Tensor:
    """Sinusoidal positions ``(length, dim)`` (Vaswani et al. 2017): sines in the first half
    of the channels, cosines in the second, wavelengths 2 pi .. 10000 * 2 pi."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=device) / max(half - 1, 1))
    angles = torch.arange(length, device=device, dtype=torch.float32)[:, None] * freqs[None]
    out = torch.cat([angles.sin(), angles.cos()], dim=1)
    return nn.functional.pad(out, (0, dim - 2 * half))


def kernel_pair(kernel_size: int | Sequence[int]) -> tuple[int, int]:
    """The kernels of a feed-forward's two convolutions: one size for both, or the pair
    (FastSpeech 2's [9, 1]); each odd."""
    pair = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    if len(pair) != 2 or any(int(k) < 1 or int(k) % 2 != 1 for k in pair):
        raise ValueError(f"ff_kernel must be an odd size or two odd sizes, got {kernel_size}")
    return int(pair[0]), int(pair[1])


class ConvFeedForward(nn.Module):
    """The position-wise feed-forward of FastSpeech: conv (k1) -> ReLU -> conv (k2), with
    dropout; (B, L, D) -> (B, L, D). ``kernel_size``: k1 = k2, or the pair (k1, k2)."""

    def __init__(
        self, dim: int, hidden: int, kernel_size: int | Sequence[int], dropout: float
    ) -> None:
        super().__init__()
        k1, k2 = kernel_pair(kernel_size)
        self.conv1 = nn.Conv1d(dim, hidden, k1, padding=k1 // 2)
        self.conv2 = nn.Conv1d(hidden, dim, k2, padding=k2 // 2)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """x (B, L, D), mask (B, L) or None (every position valid) -> (B, L, D)."""
        h = x.transpose(1, 2)
        if mask is None:
            h = torch.relu(self.conv1(h.contiguous()))
        else:
            keep = mask[:, None, :].to(x.dtype)  # (B, 1, L)
            h = torch.relu(self.conv1(h * keep)) * keep
        h = self.conv2(self.dropout(h))
        return self.dropout(h.transpose(1, 2))


class FFTBlock(nn.Module):
    """Feed-forward Transformer block: masked self-attention and a convolutional
    feed-forward, each residual and post-normalized (FastSpeech); (B, L, D) -> (B, L, D),
    zero at the padded positions."""

    def __init__(
        self, dim: int, heads: int, hidden: int, kernel_size: int | Sequence[int], dropout: float
    ) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = ConvFeedForward(dim, hidden, kernel_size, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """x (B, L, D), mask (B, L) True at valid positions, or None where every position is
        (a batch of one: no masking at all) -> (B, L, D)."""
        x = self.norm1(x + self.dropout(self.attention(x, mask)))
        x = self.norm2(x + self.ff(x, mask))
        return x if mask is None else x.masked_fill(~mask[..., None], 0.0)

    def attention(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """Multi-head self-attention with ``attn``'s weights through
        `scaled_dot_product_attention` (one fused kernel); (B, L, D) -> (B, L, D)."""
        b, length, dim = x.shape
        attn, heads = self.attn, self.attn.num_heads
        qkv = nn.functional.linear(x, attn.in_proj_weight, attn.in_proj_bias)
        q, k, v = qkv.view(b, length, 3, heads, dim // heads).permute(2, 0, 3, 1, 4)
        keys = None if mask is None else mask[:, None, None, :]  # (B, 1, 1, L)
        p = attn.dropout if self.training else 0.0
        h = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=keys, dropout_p=p)
        return attn.out_proj(h.transpose(1, 2).reshape(b, length, dim))


class FFTStack(nn.Module):
    """Sinusoidal positions added to the input, then ``layers`` FFT blocks;
    (B, L, D), mask (B, L) -> (B, L, D)."""

    def __init__(
        self,
        dim: int,
        layers: int,
        heads: int,
        hidden: int,
        kernel_size: int | Sequence[int],
        dropout: float,
    ) -> None:
        super().__init__()
        self.dim = dim
        self.blocks = nn.ModuleList(
            FFTBlock(dim, heads, hidden, kernel_size, dropout) for _ in range(layers)
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + sinusoids(x.size(1), self.dim, x.device)[None].to(x.dtype)
        x = x.masked_fill(~mask[..., None], 0.0)
        valid = None if bool(mask.all()) else mask  # no padding: no masks to apply
        for block in self.blocks:
            x = block(x, valid)
        return x


class VariancePredictor(nn.Module):
    """Two (conv, ReLU, LayerNorm, dropout) layers and a linear output: one value per
    position (FastSpeech's duration predictor; FastPitch's pitch and energy);
    (B, N, D), mask (B, N) -> (B, N), zero at padded positions."""

    def __init__(self, dim: int, hidden: int, kernel_size: int, dropout: float) -> None:
        super().__init__()
        pad = kernel_size // 2
        self.convs = nn.ModuleList(
            [nn.Conv1d(dim, hidden, kernel_size, padding=pad)]
            + [nn.Conv1d(hidden, hidden, kernel_size, padding=pad)]
        )
        self.norms = nn.ModuleList(nn.LayerNorm(hidden) for _ in range(2))
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        keep = mask[..., None].to(x.dtype)
        for conv, norm in zip(self.convs, self.norms):
            h = conv((x * keep).transpose(1, 2)).transpose(1, 2)
            x = self.dropout(norm(torch.relu(h)))
        return self.out(x * keep).squeeze(-1) * mask.to(x.dtype)


def regulate_length(
    x: torch.Tensor, durations: torch.Tensor, max_frames: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The length regulator: each token's vector repeated for its frames.

    x: (B, N, D) token vectors; durations: (B, N) whole frames per token (>= 0, zero at
    padded tokens). Returns frames (B, T, D), T = the longest item's frames (or
    `max_frames`, cutting longer ones), zero after an item's end, and frame lengths (B,).
    """
    durations = durations.long().clamp(min=0)
    ends = durations.cumsum(1)  # (B, N)
    lengths = ends[:, -1] if ends.size(1) else ends.new_zeros(x.size(0))
    total = int(lengths.max()) if lengths.numel() else 0
    if max_frames is not None:
        total = min(total, max_frames)
        lengths = lengths.clamp(max=max_frames)
    frames = torch.arange(total, device=x.device)
    # the token of each frame: the first whose end lies after it
    index = torch.searchsorted(ends, frames[None].expand(x.size(0), -1).contiguous(), right=True)
    index = index.clamp(max=max(x.size(1) - 1, 0))
    out = torch.gather(x, 1, index[..., None].expand(-1, -1, x.size(2)))
    valid = frames[None] < lengths[:, None]
    return out.masked_fill(~valid[..., None], 0.0), lengths


def token_path(durations: torch.Tensor, n_frames: int | None = None) -> torch.Tensor:
    """One item's durations (N,) -> its hard alignment ``(T, N)``: 1 where frame t belongs to
    token n (T = the durations' sum, or `n_frames`, cut or zero-padded)."""
    durations = durations.long().clamp(min=0)
    n = durations.numel()
    index = torch.repeat_interleave(torch.arange(n, device=durations.device), durations)
    total = int(durations.sum()) if n_frames is None else n_frames
    path = torch.zeros(total, n, device=durations.device)
    index = index[:total]
    path[torch.arange(len(index), device=durations.device), index] = 1.0
    return path


def round_along(frames: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Fractional frames per position (B, N) -> whole frames (B, N), rounded along the
    utterance (each position's end rounded, not its length), so every boundary lies within
    half a frame of the fractional one, no rounding error builds up along the utterance and
    the total is the rounded sum; zero at padded positions (``mask (B, N)`` False)."""
    ends = torch.cumsum(frames.clamp(min=0) * mask, dim=1).round()  # halves to even
    starts = torch.nn.functional.pad(ends[:, :-1], (1, 0))
    return (ends - starts).long() * mask.long()


def whole_frames(
    frames: torch.Tensor, mask: torch.Tensor, required: torch.Tensor | None = None
) -> torch.Tensor:
    """Predicted fractional frames (B, N) -> the whole frames (B, N) a duration model
    speaks with: rounded along the utterance (`round_along`), and each position of
    ``required (B, N)`` bool (a phone) given one frame where it would get none, so that
    no sound of the text is dropped; zero at padded positions (``mask (B, N)``)."""
    durations = round_along(frames, mask)
    if required is not None:
        durations = torch.maximum(durations, (required.to(mask.device) & mask).long())
    return durations


def fit_durations(
    frames: torch.Tensor, n_frames: int, required: torch.Tensor | None = None
) -> torch.Tensor:
    """Predicted frames per token (N,) (floats >= 0) scaled to a recording of `n_frames`:
    whole frames (N,) summing to `n_frames`, rounded along the utterance (`round_along`:
    every boundary within half a frame of the scaled one), each token of `required` (N,)
    bool given at least one frame where there are enough (taken from the longest tokens).
    The timing a duration model gives a recording whose length is known."""
    frames = frames.detach().double().clamp(min=0).cpu()
    n = frames.numel()
    if n == 0:
        raise ValueError("no tokens to give frames to")
    share = frames if float(frames.sum()) > 0 else torch.ones(n, dtype=torch.float64)
    target = share * (n_frames / float(share.sum()))
    out = round_along(target[None], torch.ones(1, n, dtype=torch.bool))[0]
    need = required.cpu() if required is not None else torch.zeros(n, dtype=torch.bool)
    if int(need.sum()) <= n_frames:
        for k in torch.nonzero(need & (out == 0)).flatten().tolist():
            spare = out - need.long()  # a required token keeps its one frame
            out[int(torch.argmax(spare))] -= 1
            out[k] += 1
    return out
