"""A non-autoregressive voice conversion network (family ``fastvc``): the source mel
encoded at a reduced frame rate, target frames predicted for each encoder step, the steps
spread over those frames (the length regulator) and decoded to the target voice's mel all
at once. The alignment-aware, non-autoregressive conversion of AAS-VC (Huang et al. 2023)
with FastPitch's parts (`aligner.models.fastpitch.layers`).

It never learns an alignment: training gives each encoder step its target frames from the
alignment model's durations of both voices (`step_frames`); converting, it predicts
them, so it cannot skip or repeat and needs no text.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.config import from_dict
from aligner.models.fastpitch.layers import (
    DurationOutput,
    FFTStack,
    VariancePredictor,
    regulate_length,
    round_along,
    whole_frames,
)
from aligner.models.fastpitch.model import DurationModelConfig
from aligner.models.tacotron.postnet import Postnet


@dataclass
class FastVCConfig(DurationModelConfig):
    """``model:`` of a FastVC recipe: `DurationModelConfig` (its encoder over the source's
    steps, its duration predictor giving each step's target frames) and ``reduction``:
    source frames stacked into one encoder step (a step then gets the target frames of
    that stretch of the source: 0, 1, 2, ...). ``frame_context``: with a number C, each
    target frame's decoder input also gets the source frame it maps to through the steps'
    durations, read with C frames on each side (a convolution over the source mel at its
    full rate: the detail of each frame that the steps' vectors summarize); None: the
    steps' vectors alone. ``phone_classes``: K > 0 adds two linear heads that name the
    phone of each encoder step and of each decoded frame from their vectors (the
    text-supervised multi-task learning of Zhang et al. 2019: the network is made to keep
    what is said, apart from how the voice says it); used in training only (the task sets
    K from the training tokens when ``model.loss.phones`` weighs them).
    """

    reduction: int = 2
    frame_context: int | None = None
    phone_classes: int = 0
    dim: int = 192
    encoder_layers: int = 3
    decoder_layers: int = 3
    ff_hidden: int = 384
    predictor_hidden: int = 192
    max_duration: int = 32

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, where: str = "model") -> FastVCConfig:
        cfg = from_dict(cls, data, where)
        if cfg.reduction < 1:
            raise ValueError(f"{where}.reduction must be >= 1, got {cfg.reduction}")
        if cfg.phone_classes < 0:
            raise ValueError(f"{where}.phone_classes must be >= 0, got {cfg.phone_classes}")
        if cfg.frame_context is not None and cfg.frame_context < 0:
            raise ValueError(
                f"{where}.frame_context must be >= 0 (or null: no source frames), got "
                f"{cfg.frame_context}"
            )
        return cfg


def step_frames(
    src_durations: torch.Tensor, tgt_durations: torch.Tensor, reduction: int
) -> torch.Tensor:
    """Target frames of each encoder step, fractional, from the frames per token of both
    voices (N,): a token's target frames shared evenly over its source frames (a token the
    source passes over gives its frames to the source frame where the next one starts),
    summed over each step's ``reduction`` source frames. Returns (ceil(S / reduction),)
    float64 summing to the target's frames, S the source's. The duration predictor's
    target: the same timing as whole frames (`step_durations`) without their rounding
    noise."""
    src = torch.as_tensor(src_durations).long()
    tgt = torch.as_tensor(tgt_durations).long()
    if src.shape != tgt.shape or src.dim() != 1:
        raise ValueError(
            f"source and target durations must be (N,) of one length, got {tuple(src.shape)} "
            f"and {tuple(tgt.shape)}"
        )
    n_src = int(src.sum())
    if bool((src < 0).any() | (tgt < 0).any()) or n_src < 1:
        raise ValueError("durations must be >= 0, with at least one source frame")
    rates = torch.zeros(n_src, dtype=torch.float64)
    per_frame = tgt.double() / src.clamp(min=1).double()
    rates += torch.repeat_interleave(per_frame, src)
    starts = (torch.cumsum(src, 0) - src).clamp(max=n_src - 1)
    passed = src == 0
    rates.index_add_(0, starts[passed], tgt[passed].double())
    rates = nn.functional.pad(rates, (0, (-n_src) % reduction))
    return rates.view(-1, reduction).sum(1)


def step_durations(
    src_durations: torch.Tensor, tgt_durations: torch.Tensor, reduction: int
) -> torch.Tensor:
    """Whole target frames of each encoder step (ceil(S / reduction),) long: `step_frames`
    rounded along the utterance (`round_along`), summing to the target's frames."""
    frames = step_frames(src_durations, tgt_durations, reduction)[None]
    return round_along(frames, torch.ones_like(frames, dtype=torch.bool))[0]


def source_frame_index(durations: torch.Tensor, reduction: int, total: int) -> torch.Tensor:
    """The source frame each target frame maps to (B, T) long, T = `total`, from the
    target frames of each encoder step (B, N) long: a step of ``reduction`` source frames
    and d target frames gives its j-th target frame the source frame at (j + 1/2) r / d
    into it. Frames after an item's end map to its last step."""
    durations = durations.long().clamp(min=0)
    ends = durations.cumsum(1)
    frames = torch.arange(total, device=durations.device)[None].expand(durations.size(0), -1)
    step = torch.searchsorted(ends, frames.contiguous(), right=True)
    step = step.clamp(max=max(durations.size(1) - 1, 0))
    length = durations.gather(1, step)
    offset = frames - (ends.gather(1, step) - length)
    within = torch.div((2 * offset + 1) * reduction, 2 * length.clamp(min=1), rounding_mode="floor")
    return step * reduction + within.clamp(max=reduction - 1)


class SourceFrames(nn.Module):
    """Source mel (B, S, M) -> one vector per source frame (B, S, D): a convolution over
    ``2 context + 1`` frames, ReLU, a linear map; what the decoder reads of the source
    frame each target frame maps to (`source_frame_index`)."""

    def __init__(self, n_mels: int, dim: int, context: int, dropout: float) -> None:
        super().__init__()
        self.conv = nn.Conv1d(n_mels, dim, 2 * context + 1, padding=context)
        self.out = nn.Sequential(nn.ReLU(), nn.Dropout(dropout), nn.Linear(dim, dim))

    def forward(
        self, mel: torch.Tensor, lengths: torch.Tensor, index: torch.Tensor
    ) -> torch.Tensor:
        """mel (B, S, M), lengths (B,), index (B, T) -> the mapped frames' vectors (B, T, D)."""
        mask = lengths_to_mask(lengths.to(mel.device), mel.size(1))
        mel = mel.masked_fill(~mask[..., None], 0.0)
        frames = self.out(self.conv(mel.transpose(1, 2)).transpose(1, 2))
        last = (lengths.to(index.device) - 1).clamp(min=0)[:, None]
        index = torch.minimum(index, last)
        return frames.gather(1, index[..., None].expand(-1, -1, frames.size(2)))


class MelEncoder(nn.Module):
    """Source mel (B, S, M) -> encoder steps (B, ceil(S / reduction), D): ``reduction``
    frames stacked, projected and passed through FFT blocks."""

    def __init__(self, cfg: FastVCConfig) -> None:
        super().__init__()
        self.reduction = cfg.reduction
        self.proj = nn.Linear(cfg.n_mels * cfg.reduction, cfg.dim)
        stack = (cfg.heads, cfg.ff_hidden, cfg.ff_kernel, cfg.dropout)
        self.blocks = FFTStack(cfg.dim, cfg.encoder_layers, *stack)

    def reduced_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        """Encoder steps (B,) for source lengths (B,): ``ceil(lengths / reduction)``."""
        return torch.div(lengths + self.reduction - 1, self.reduction, rounding_mode="floor")

    def forward(
        self, mel: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """mel (B, S, M), lengths (B,) -> (steps (B, N, D), mask (B, N))."""
        b, s, m = mel.shape
        r = self.reduction
        frame_mask = lengths_to_mask(lengths.to(mel.device), s)
        mel = mel.masked_fill(~frame_mask[..., None], 0.0)
        mel = nn.functional.pad(mel, (0, 0, 0, (-s) % r))
        stacked = mel.reshape(b, -1, r * m)
        mask = lengths_to_mask(self.reduced_lengths(lengths.to(mel.device)), stacked.size(1))
        return self.blocks(self.proj(stacked), mask), mask


class FastVC(nn.Module):
    """Source mels (B, S, M) -> target mels (B, T, M) through given or predicted durations
    per encoder step."""

    r = 1  # one target frame per alignment row

    def __init__(self, cfg: FastVCConfig) -> None:
        super().__init__()
        self.config = cfg
        stack = (cfg.heads, cfg.ff_hidden, cfg.ff_kernel, cfg.dropout)
        self.encoder = MelEncoder(cfg)
        self.duration = VariancePredictor(
            cfg.dim, cfg.predictor_hidden, cfg.predictor_kernel, cfg.predictor_dropout
        )
        self.source_frames = (
            SourceFrames(cfg.n_mels, cfg.dim, cfg.frame_context, cfg.dropout)
            if cfg.frame_context is not None
            else None
        )
        self.decoder = FFTStack(cfg.dim, cfg.decoder_layers, *stack)
        self.proj = nn.Linear(cfg.dim, cfg.n_mels)
        p = cfg.postnet
        self.postnet = (
            Postnet(cfg.n_mels, p.channels, p.n_convs, p.kernel_size, p.dropout) if p else None
        )
        k = cfg.phone_classes
        self.phone_heads = (
            nn.ModuleList([nn.Linear(cfg.dim, k), nn.Linear(cfg.dim, k)]) if k else None
        )

    @classmethod
    def from_symbols(
        cls, symbols: dict[str, Any], state_dict: dict[str, torch.Tensor] | None = None
    ) -> FastVC:
        """Rebuild the network of a checkpoint from its ``symbols["model"]`` (and its
        weights, if given)."""
        model = cls(FastVCConfig.from_dict(symbols["model"]))
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model

    def forward(
        self, src: torch.Tensor, src_lengths: torch.Tensor, durations: torch.Tensor
    ) -> DurationOutput:
        """Teacher forcing: source mels (B, S, M), lengths (B,), target frames of each
        encoder step (B, N). With phone heads, ``phone_logits``: (B, N, K) of the encoder
        steps and (B, T, K) of the decoded frames."""
        enc, mask, log_durations = self.encode(src, src_lengths)
        durations = durations[:, : mask.size(1)] * mask
        out, hidden = self._decode(enc, mask, log_durations, durations, src, src_lengths)
        if self.phone_heads is None:
            return out
        logits = (self.phone_heads[0](enc), self.phone_heads[1](hidden))
        return dataclasses.replace(out, phone_logits=logits)

    @torch.no_grad()
    def infer(
        self,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        pace: float = 1.0,
        required: torch.Tensor | None = None,
    ) -> DurationOutput:
        """Conversion: the durations predicted, divided by `pace` (2: twice as fast),
        at most ``max_duration`` frames a step, rounded along the utterance
        (`whole_frames`; ``required (B, N)`` bool: steps kept at one frame or more)."""
        if not pace > 0:  # NaN too
            raise ValueError(f"pace must be positive, got {pace}")
        enc, mask, log_durations = self.encode(src, src_lengths)
        frames = torch.expm1(log_durations.float()).clamp(0, self.config.max_duration) / pace
        durations = whole_frames(frames, mask, required)
        durations[:, 0] += (durations.sum(1) == 0).long()  # every item says something
        return self._decode(enc, mask, log_durations, durations, src, src_lengths)[0]

    def encode(
        self, src: torch.Tensor, src_lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Source mels (B, S, M), lengths (B,) -> (encoder steps (B, N, D), step mask
        (B, N), predicted log(1 + target frames) (B, N))."""
        enc, mask = self.encoder(src, src_lengths)
        return enc, mask, self.duration(enc, mask)

    def _decode(
        self,
        enc: torch.Tensor,
        mask: torch.Tensor,
        log_durations: torch.Tensor,
        durations: torch.Tensor,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
    ) -> tuple[DurationOutput, torch.Tensor]:
        """Steps spread over their frames (with the source frames they map to, where the
        model reads them), decoded to mels; and the decoder's vectors (B, T, D)."""
        frames, lengths = regulate_length(enc * mask[..., None].to(enc.dtype), durations)
        mel_mask = lengths_to_mask(lengths, frames.size(1))
        if self.source_frames is not None:
            index = source_frame_index(durations, self.config.reduction, frames.size(1))
            mapped = self.source_frames(src, src_lengths, index)
            frames = frames + mapped.masked_fill(~mel_mask[..., None], 0.0).to(frames.dtype)
        hidden = self.decoder(frames, mel_mask)
        mel = self.proj(hidden).masked_fill(~mel_mask[..., None], 0.0)
        post = self.postnet(mel, mel_mask) if self.postnet is not None else mel
        out = DurationOutput(mel, post, mel_mask, log_durations, mask, durations.long())
        return out, hidden
