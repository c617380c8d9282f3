"""The reconstruction losses of the vocoder task (`aligner.tasks.vocoder`): the
multi-resolution STFT loss (Yamamoto et al. 2020), APNet's phase losses (Ai and Ling 2023)
and the ``model.loss`` section that weighs them with the full-band mel L1."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn.functional as F


@dataclass
class VocoderLoss:
    """``model.loss``: weights of the full-band mel L1, of the multi-resolution STFT loss
    (and its (n_fft, hop) resolutions) and of the phase losses (`phase_loss`; 0: off)."""

    mel_weight: float = 1.0
    stft_weight: float = 1.0
    phase_weight: float = 0.0
    resolutions: list[list[int]] = field(
        default_factory=lambda: [[512, 128], [1024, 256], [2048, 512]]
    )


def stft_loss(pred: torch.Tensor, target: torch.Tensor, n_fft: int, hop: int) -> torch.Tensor:
    """Spectral convergence plus log-magnitude L1 of (B, L) waveforms at one resolution."""
    window = torch.hann_window(n_fft, device=pred.device)

    def mag(x: torch.Tensor) -> torch.Tensor:
        spec = torch.stft(x.float(), n_fft, hop, n_fft, window, return_complex=True)
        return spec.abs().clamp(min=1e-7)

    p, t = mag(pred), mag(target)
    convergence = torch.linalg.norm(t - p) / torch.linalg.norm(t).clamp(min=1e-7)
    return convergence + F.l1_loss(p.log(), t.log())


def anti_wrap(x: torch.Tensor) -> torch.Tensor:
    """|x| of a phase difference taken to (-pi, pi]: 2 pi apart is no difference."""
    return (x - 2 * torch.pi * torch.round(x / (2 * torch.pi))).abs()


def phase_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The phase losses of APNet (Ai and Ling 2023) between complex STFTs (B, F, T):
    instantaneous phase, group delay (its difference across frequency) and instantaneous
    frequency (across time), each anti-wrapped and weighted by the target's magnitude,
    so that silent bins, whose phase is noise, count for little."""
    weight = target.abs()
    weight = weight / weight.mean(dim=(1, 2), keepdim=True).clamp(min=1e-7)
    dp = torch.angle(pred) - torch.angle(target)
    ip = (anti_wrap(dp) * weight).mean()
    gd = (anti_wrap(dp.diff(dim=1)) * weight[:, 1:]).mean()
    iaf = (anti_wrap(dp.diff(dim=2)) * weight[:, :, 1:]).mean()
    return ip + gd + iaf
