"""A Vocos vocoder (Siuzdak 2023): log-mel ``(B, n_mels, T)`` -> ConvNeXt blocks at the
frame rate -> the complex STFT of the waveform (a magnitude and a phase per bin) -> the
inverse STFT. Everything runs at the frame rate, so it is fast on a CPU; the STFT head
predicts every bin up to the Nyquist frequency, so it also generates the band above the
mel's ``f_max`` from what the mel carries.

Frames are centred as `aligner.audio.features.LogMel` centres them: ``T`` frames give
``(T - 1) * hop`` samples (``torch.istft(center=True)``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import torch
from torch import nn

MAX_LOG_MAGNITUDE = 7.0  # exp(7) ~ 1100: a bin's magnitude is clipped there (Vocos: 1e2)


@dataclass(frozen=True)
class VocosConfig:
    """The network; `n_fft`, `hop_length`, `win_length` are the STFT of its head (the
    mels' hop: one STFT frame per mel frame)."""

    n_mels: int = 80
    dim: int = 256
    intermediate: int = 768
    layers: int = 8
    kernel: int = 7
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VocosConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown vocoder model option(s) {unknown}; known: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ConvNeXtBlock(nn.Module):
    """Depthwise convolution over time, LayerNorm, a pointwise MLP, a learned per-channel
    scale of the residual branch (Liu et al. 2022, as Vocos uses it)."""

    def __init__(self, dim: int, intermediate: int, kernel: int, scale: float) -> None:
        super().__init__()
        self.dwconv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, intermediate)
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(intermediate, dim)
        self.gamma = nn.Parameter(torch.full((dim,), scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, dim, T) -> (B, dim, T)."""
        y = self.dwconv(x).transpose(1, 2)
        y = self.pwconv2(self.act(self.pwconv1(self.norm(y))))
        return x + (self.gamma * y).transpose(1, 2)


class Vocos(nn.Module):
    """Log-mel ``(B, n_mels, T)`` -> waveform ``(B, (T - 1) * hop_length)``."""

    def __init__(self, cfg: VocosConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Conv1d(cfg.n_mels, cfg.dim, cfg.kernel, padding=cfg.kernel // 2)
        self.norm = nn.LayerNorm(cfg.dim, eps=1e-6)
        self.blocks = nn.ModuleList(
            ConvNeXtBlock(cfg.dim, cfg.intermediate, cfg.kernel, 1.0 / cfg.layers)
            for _ in range(cfg.layers)
        )
        self.final_norm = nn.LayerNorm(cfg.dim, eps=1e-6)
        self.head = nn.Linear(cfg.dim, cfg.n_fft + 2)
        self.register_buffer("window", torch.hann_window(cfg.win_length), persistent=False)

    @property
    def hop(self) -> int:
        return self.cfg.hop_length

    def spectrum(self, mel: torch.Tensor) -> torch.Tensor:
        """(B, n_mels, T) -> complex STFT (B, n_fft // 2 + 1, T)."""
        x = self.norm(self.embed(mel).transpose(1, 2)).transpose(1, 2)
        for block in self.blocks:
            x = block(x)
        out = self.head(self.final_norm(x.transpose(1, 2))).transpose(1, 2).float()
        log_mag, phase = out.chunk(2, dim=1)
        mag = torch.exp(log_mag.clamp(max=MAX_LOG_MAGNITUDE))
        return torch.polar(mag, phase)

    def forward(self, mel: torch.Tensor, return_spectrum: bool = False):
        """(B, n_mels, T) -> waveform (B, (T - 1) * hop); with `return_spectrum` also the
        complex STFT it came from (B, n_fft // 2 + 1, T), for phase losses."""
        cfg = self.cfg
        spec = self.spectrum(mel)
        wav = torch.istft(
            spec,
            cfg.n_fft,
            hop_length=cfg.hop_length,
            win_length=cfg.win_length,
            window=self.window,
            center=True,
        )
        return (wav, spec) if return_spectrum else wav
