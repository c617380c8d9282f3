"""Log-mel spectrogram features (torchaudio) and per-bin normalization statistics.

The mel filterbank uses the Slaney mel scale and Slaney area normalization, so it
equals ``librosa.filters.mel`` (the Tacotron 2 convention), applied to the STFT
magnitude (``power=1``). Frames are centred with reflect padding:
``T = 1 + L // hop_length``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
import torchaudio
from torch import nn

from aligner.audio.trim import FLOOR_MARGIN_DB, edge_bounds, noise_floor, silence_threshold


@dataclass(frozen=True)
class MelConfig:
    """Feature settings; :meth:`key` identifies them in the feature cache."""

    sample_rate: int = 22050
    n_fft: int = 1024
    hop_length: int = 256
    win_length: int = 1024
    n_mels: int = 80
    f_min: float = 0.0
    f_max: float = 8000.0
    log_floor: float = 1e-5
    power: float = 1.0

    def __post_init__(self) -> None:
        if self.win_length > self.n_fft:
            raise ValueError(f"win_length {self.win_length} exceeds n_fft {self.n_fft}")
        if not 0 <= self.f_min < self.f_max <= self.sample_rate / 2:
            raise ValueError(
                f"need 0 <= f_min < f_max <= sample_rate/2, got f_min={self.f_min}, "
                f"f_max={self.f_max}, sample_rate={self.sample_rate}"
            )
        if min(self.hop_length, self.n_mels, self.log_floor, self.power) <= 0:
            raise ValueError("hop_length, n_mels, log_floor and power must be positive")

    def key(self) -> str:
        """A short stable hash of every setting (12 hex digits)."""
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha1(blob).hexdigest()[:12]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MelConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown mel setting(s) {unknown}; known: {sorted(known)}")
        return cls(**data)

    def num_frames(self, num_samples: int) -> int:
        """Frames :class:`LogMel` gives for ``num_samples`` samples."""
        return 1 + num_samples // self.hop_length


def mel_filterbank(cfg: MelConfig) -> torch.Tensor:
    """Slaney mel filterbank ``(n_fft // 2 + 1, n_mels)``, as torchaudio applies it."""
    return torchaudio.functional.melscale_fbanks(
        n_freqs=cfg.n_fft // 2 + 1,
        f_min=cfg.f_min,
        f_max=cfg.f_max,
        n_mels=cfg.n_mels,
        sample_rate=cfg.sample_rate,
        norm="slaney",
        mel_scale="slaney",
    )


class LogMel(nn.Module):
    """Waveform ``(..., L)`` -> natural-log mel spectrogram ``(..., T, n_mels)``."""

    def __init__(self, cfg: MelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=cfg.sample_rate,
            n_fft=cfg.n_fft,
            win_length=cfg.win_length,
            hop_length=cfg.hop_length,
            f_min=cfg.f_min,
            f_max=cfg.f_max,
            n_mels=cfg.n_mels,
            power=cfg.power,
            center=True,
            pad_mode="reflect",
            norm="slaney",
            mel_scale="slaney",
        )

    def forward(self, wav: torch.Tensor) -> torch.Tensor:
        mel = self.mel(wav.float())  # (..., n_mels, T)
        return torch.log(torch.clamp(mel, min=self.cfg.log_floor)).transpose(-1, -2)


_MODULES: dict[tuple[str, str], LogMel] = {}


def log_mel(wav: torch.Tensor, cfg: MelConfig) -> torch.Tensor:
    """Convenience: ``LogMel(cfg)(wav)`` with the module cached per settings and device."""
    key = (cfg.key(), str(wav.device))
    if key not in _MODULES:
        _MODULES[key] = LogMel(cfg).to(wav.device)
    with torch.no_grad():
        return _MODULES[key](wav)


@dataclass
class MelStats:
    """Per-bin mean and standard deviation of log-mels, ``(n_mels,)`` each."""

    mean: torch.Tensor
    std: torch.Tensor

    def normalize(self, mel: torch.Tensor) -> torch.Tensor:
        """``(..., n_mels)`` -> zero mean, unit variance per bin."""
        return (mel - self.mean.to(mel)) / self.std.to(mel)

    def denormalize(self, mel: torch.Tensor) -> torch.Tensor:
        """Inverse of :meth:`normalize`."""
        return mel * self.std.to(mel) + self.mean.to(mel)

    @classmethod
    def compute(cls, mels: Iterable[torch.Tensor], min_std: float = 1e-3) -> MelStats:
        """Statistics over all frames of ``mels`` (each ``(T, n_mels)``), in float64.

        ``min_std`` keeps a constant bin from dividing by zero.
        """
        count, total, total_sq = 0, None, None
        for mel in mels:
            m = mel.detach().to("cpu", torch.float64).reshape(-1, mel.shape[-1])
            total = m.sum(0) if total is None else total + m.sum(0)
            total_sq = (m * m).sum(0) if total_sq is None else total_sq + (m * m).sum(0)
            count += m.shape[0]
        if count == 0:
            raise ValueError("MelStats.compute needs at least one frame")
        mean = total / count
        var = (total_sq / count - mean * mean).clamp(min=0.0)
        std = var.sqrt().clamp(min=min_std)
        return cls(mean.float(), std.float())

    def to_dict(self) -> dict[str, list[float]]:
        return {"mean": self.mean.tolist(), "std": self.std.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MelStats:
        mean = torch.tensor(data["mean"], dtype=torch.float32)
        std = torch.tensor(data["std"], dtype=torch.float32)
        if mean.shape != std.shape or mean.dim() != 1:
            raise ValueError(f"mel stats need equal 1-D mean/std, got {mean.shape}, {std.shape}")
        return cls(mean, std)


def speech_spans(
    log_mel: torch.Tensor,
    lengths: torch.Tensor,
    top_db: float = 40.0,
    power: float = 1.0,
    margin_db: float = FLOOR_MARGIN_DB,
) -> torch.Tensor:
    """``(B, 2)`` long: per utterance the first frame with sound and one past the last, from
    its natural-log mel ``(B, T, M)`` (not normalized) of ``lengths (B,)`` frames; a frame
    has sound when its summed mel is at most `top_db` below the utterance's loudest frame,
    or `margin_db` above its noise floor where that is higher
    (`aligner.audio.trim.silence_threshold`; `power`: the mel's exponent of the magnitude,
    1 or 2). An utterance with no frame that quiet, or all silent, spans all its frames.
    Real recordings start and end in silence (or breath and noise, which count as sound):
    the span is where the words can be."""
    level = frame_levels(log_mel, power)
    t = torch.arange(log_mel.size(1), device=log_mel.device)
    valid = t[None, :] < lengths.to(log_mel.device)[:, None]
    level = level.masked_fill(~valid, float("-inf"))
    rows = level.detach().cpu().numpy()
    threshold = torch.tensor(
        [silence_threshold(row, top_db, margin_db) for row in rows], device=level.device
    )
    loud = level >= threshold[:, None]
    loud &= valid
    any_loud = loud.any(dim=1)
    first = torch.where(any_loud, loud.float().argmax(dim=1), torch.zeros_like(lengths))
    last = t.numel() - 1 - loud.flip(1).float().argmax(dim=1)
    end = torch.where(any_loud, last + 1, lengths.to(log_mel.device))
    return torch.stack([first, end], dim=1).long()


def frame_levels(log_mel: torch.Tensor, power: float = 1.0) -> torch.Tensor:
    """``(B, T)`` each frame's level in dB (its summed mel) from natural-log mels ``(B, T, M)``
    (`power`: the mel's exponent of the magnitude, 1 or 2)."""
    return torch.logsumexp(log_mel.float(), dim=2) * (20.0 / (power * math.log(10.0)))


def fill_edge_padding(
    mel: torch.Tensor,
    log_mel: torch.Tensor,
    lengths: torch.Tensor,
    power: float = 1.0,
    top_db: float = 40.0,
) -> torch.Tensor:
    """`mel` ``(B, T, M)`` (the natural-log mels `log_mel`, same shape, in any
    normalization) with the digital silence a noisy recording was padded with replaced by
    its own background. In an utterance of ``lengths (B,)`` frames whose noise floor
    (`aligner.audio.trim.noise_floor`) lies less than `top_db` below its loudest frame
    (where `speech_spans` reads silence over the floor), the frames outside its
    `aligner.audio.trim.edge_bounds` become the per-bin median of its background frames
    (those less than `FLOOR_MARGIN_DB` above the floor). Every other utterance (clean, such
    as Festival's quiet edges; unpadded) is left as it is. A model trained on noisy
    recordings never met mels that low: 0.15 s of zeros before each noisy test file cost
    the alignment model 9.5 ms on words, this fill 0.6 (egs/festival/align1/RESULTS.md)."""
    levels = frame_levels(log_mel, power).detach().cpu().numpy()
    out = mel
    for b, n in enumerate(lengths.tolist()):
        level = levels[b, :n]
        floor = noise_floor(level)
        if floor is None or floor < level.max() - top_db:
            continue
        first, last = edge_bounds(level)
        frames = np.arange(n)
        background = (level < floor + FLOOR_MARGIN_DB) & (frames >= first) & (frames < last)
        if (first == 0 and last == n) or not background.any():
            continue
        if out is mel:
            out = mel.clone()
        rows = torch.as_tensor(np.flatnonzero(background), device=mel.device)
        fill = mel[b, rows].median(dim=0).values
        out[b, :first] = fill
        out[b, last:n] = fill
    return out
