"""The speech tasks' losses: Tacotron's masked mel L1 + MSE (before and after the postnet), stop
BCE with a positive weight and the core's guided attention loss with a decaying weight; the
duration models' mel and duration losses (FastPitch, FastVC)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch.nn import functional as F

from aligner.attention.base import lengths_to_mask
from aligner.attention.guides import guide_divergence
from aligner.attention.losses import decoder_steps, diagonal_penalty
from aligner.models.tacotron.model import TacotronOutput


def masked_mel_loss(
    pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean absolute and mean squared error over valid frames.

    pred, target (B, T, M); mask (B, T) bool. Returns (l1, mse), each averaged over the
    ``mask.sum() * M`` valid elements.
    """
    m = mask[..., None].to(pred.dtype)
    count = (m.sum() * pred.size(-1)).clamp_min(1.0)
    diff = (pred - target) * m
    return diff.abs().sum() / count, diff.pow(2).sum() / count


def stop_targets(
    mel_lengths: torch.Tensor, r: int, steps: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-step stop targets for lengths (B,) frames and reduction factor r.

    Step s holds frames [s*r, s*r + r). Returns targets (B, S) float, 1 at the last valid
    step (the one holding the last frame), and the mask of valid steps (B, S) bool
    (s < ceil(length / r)).
    """
    n_steps = torch.div(mel_lengths + r - 1, r, rounding_mode="floor")
    index = torch.arange(steps, device=mel_lengths.device)[None]
    return (index == n_steps[:, None] - 1).float(), lengths_to_mask(n_steps, steps)


def stop_loss(
    logits: torch.Tensor, mel_lengths: torch.Tensor, r: int, pos_weight: float
) -> torch.Tensor:
    """Binary cross-entropy of stop logits (B, S) against ``stop_targets``, positives weighted by
    ``pos_weight``, averaged over valid steps."""
    target, mask = stop_targets(mel_lengths, r, logits.size(1))
    weight = torch.tensor(pos_weight, dtype=logits.dtype, device=logits.device)
    bce = F.binary_cross_entropy_with_logits(logits, target, pos_weight=weight, reduction="none")
    return (bce * mask).sum() / mask.sum().clamp_min(1)


@dataclass
class GuidedSchedule:
    """The guided attention loss (``model.loss.guided``): its weight at a training step and
    what it guides towards.

    mode "constant": ``weight``; "exp": ``weight * decay ** step``; "linear": ``weight`` falling
    linearly to zero at step ``until``; "none" (or weight 0): off. ``floor``: "exp" and
    "linear" fall no lower (a guide strong while the attention forms, weak after it).
    source "diagonal": the band around the diagonal (Tachibana et al. 2017, width ``guided_g``); "durations": the
    alignment model's durations of each item (``data.durations``; `aligner.tasks.guides`),
    with soft edges of ``width`` frames, scored by the KL divergence of the attention from
    that guide; an item without durations falls back to the diagonal.
    """

    weight: float = 1.0
    mode: Literal["constant", "exp", "linear", "none"] = "exp"
    decay: float = 0.9995
    until: int = 10000
    source: Literal["diagonal", "durations"] = "diagonal"
    width: float = 1.0
    floor: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in ("constant", "exp", "linear", "none"):
            raise ValueError(
                f"guided.mode must be constant, exp, linear or none, got {self.mode!r}"
            )
        if self.source not in ("diagonal", "durations"):
            raise ValueError(f"guided.source must be diagonal or durations, got {self.source!r}")
        if not self.width >= 0:
            raise ValueError(f"guided.width must be >= 0 frames, got {self.width!r}")
        if not 0 <= self.floor <= max(self.weight, 0.0):
            raise ValueError(
                f"guided.floor must be between 0 and the weight {self.weight}, got {self.floor!r}"
            )

    def __call__(self, step: int) -> float:
        if self.mode == "none" or self.weight == 0:
            return 0.0
        if self.mode == "exp":
            return max(self.floor, self.weight * math.pow(self.decay, step))
        if self.mode == "linear":
            return max(self.floor, self.weight * max(0.0, 1.0 - step / self.until))
        return self.weight


@dataclass
class TacotronLossConfig:
    """Loss weights. ``guided_g`` is g of Tachibana 2017."""

    mel_weight: float = 1.0
    stop_weight: float = 1.0
    stop_pos_weight: float = 5.0
    guided: GuidedSchedule | None = None
    guided_g: float = 0.2


def tacotron_loss(
    out: TacotronOutput,
    target: torch.Tensor,
    mel_lengths: torch.Tensor,
    r: int,
    step: int,
    cfg: TacotronLossConfig,
    guide: dict[str, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total loss and its named parts.

    total = mel_weight * (L1 + MSE before postnet + L1 + MSE after) + stop_weight * BCE
            + guided(step) * guided attention loss on alignments (B, S, T_enc).

    The guided loss is a mean per decoder step: with `guide` (``guide (B, S, T_enc)``,
    ``guided (B,)`` bool, `aligner.tasks.guides.Guides.batch`), the guided items' steps
    count the divergence from their guide, the others' the diagonal penalty.
    """
    l1, mse = masked_mel_loss(out.mel, target, out.mel_mask)
    l1_post, mse_post = masked_mel_loss(out.mel_post, target, out.mel_mask)
    mel = l1 + mse + l1_post + mse_post
    stop = stop_loss(out.stop_logits, mel_lengths, r, cfg.stop_pos_weight)
    total = cfg.mel_weight * mel + cfg.stop_weight * stop
    parts = {
        "mel_l1": l1.item(),
        "mel_mse": mse.item(),
        "post_l1": l1_post.item(),
        "post_mse": mse_post.item(),
        "stop": stop.item(),
    }
    weight = cfg.guided(step) if cfg.guided is not None else 0.0
    if weight > 0:
        enc_lengths = out.enc_mask.sum(1)
        per_item = diagonal_penalty(out.alignments, mel_lengths, enc_lengths, cfg.guided_g, r)
        steps = decoder_steps(mel_lengths.to(per_item.device), r)
        if guide is not None and bool(guide["guided"].any()):
            divergence = guide_divergence(out.alignments, guide["guide"], steps)
            per_item = torch.where(guide["guided"].to(per_item.device), divergence, per_item)
        guided = per_item.sum() / steps.sum().clamp_min(1)
        total = total + weight * guided
        parts.update(guided=guided.item(), guided_weight=weight)
    return total, parts


def masked_mean(err: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of `err` (B, L, ...) over the positions of `mask` (B, L)."""
    mask = mask.to(err.dtype)
    while mask.dim() < err.dim():
        mask = mask[..., None]
    return (err * mask).sum() / (mask.sum() * (err.numel() / mask.numel())).clamp(min=1)


def duration_loss(
    log_durations: torch.Tensor, durations: torch.Tensor, mask: torch.Tensor, cfg: Any
) -> torch.Tensor:
    """The MSE of predicted log(1 + frames) (B, N) against given frames (B, N) over the
    valid positions, on ``cfg.duration_scale`` (``log`` or ``frames``): what the duration
    models (FastPitch, FastVC) learn from."""
    given = durations.float()
    if cfg.duration_scale == "frames":
        return masked_mean((torch.expm1(log_durations.float()) - given) ** 2, mask)
    return masked_mean((log_durations - torch.log1p(given)) ** 2, mask)


def parallel_mel_loss(out: Any, mel: torch.Tensor, kind: str) -> torch.Tensor:
    """A duration model's mel loss (`aligner.models.fastpitch.layers.DurationOutput`
    ``out``): the L1 (``kind`` ``l1``) or MSE (``mse``) against the target mel (B, T', M)
    over the valid frames, plus the postnet's where there is one."""
    target = mel[:, : out.mel.size(1)].to(out.mel.dtype)
    dist = F.l1_loss if kind == "l1" else F.mse_loss
    loss = masked_mean(dist(out.mel, target, reduction="none"), out.mel_mask)
    if out.mel_post is not out.mel:
        loss = loss + masked_mean(dist(out.mel_post, target, reduction="none"), out.mel_mask)
    return loss
