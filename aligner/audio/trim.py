"""Leading and trailing silence removal with ``librosa.effects.trim``."""

from __future__ import annotations

import math

import librosa
import torch


def trim_silence(
    wav: torch.Tensor,
    sr: int,
    top_db: float = 40.0,
    frame_length: int | None = None,
    hop_length: int | None = None,
) -> torch.Tensor:
    """Cut leading and trailing parts quieter than ``top_db`` below the peak.

    Args:
        wav: mono waveform ``(L,)``.
        sr: its sample rate; frames default to ~46 ms with a ~11.6 ms hop at ``sr``.
        top_db: threshold in dB below the loudest frame.

    Returns:
        the trimmed waveform ``(L',)`` (a copy, same dtype and device); all-silent
        input comes back empty.
    """
    if wav.dim() != 1:
        raise ValueError(f"trim_silence expects a mono waveform (L,), got {tuple(wav.shape)}")
    if wav.numel() == 0 or not bool(wav.abs().max() > 0):
        return wav[:0].clone()
    frame_length = frame_length or _pow2(sr * 0.046)
    hop_length = hop_length or max(1, frame_length // 4)
    y = wav.detach().to("cpu", torch.float32).numpy()
    _, (start, end) = librosa.effects.trim(
        y, top_db=top_db, frame_length=frame_length, hop_length=hop_length
    )
    return wav[int(start) : int(end)].clone()


def _pow2(x: float) -> int:
    """Nearest power of two to ``x`` (at least 16)."""
    return max(16, 2 ** round(math.log2(max(x, 1.0))))
