"""Fundamental frequency at the mel frame rate, cached: the pitch targets of a FastPitch
(`aligner.tasks.fastpitch`).

F0 by WORLD's DIO refined by StoneMask (pyworld, the ``aligner[vc]`` extra; seconds for a
corpus of a thousand sentences), one value per mel frame (0 where unvoiced), stored as
``cache_dir/<MelConfig.key()>-f0/<hash of the audio path>.npy`` beside the log-mels of
`aligner.data.cache` (the same key: path, size and modification time).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch

from aligner.audio.features import MelConfig
from aligner.audio.io import load_audio
from aligner.audio.world import modules
from aligner.data.cache import FeatureCache, _atomic_write, _npy_bytes


def frame_f0(wav: np.ndarray, cfg: MelConfig, floor: float = 60.0, ceil: float = 600.0):
    """F0 (Hz, 0 where unvoiced) of waveform `wav` (L,) for each of its mel frames
    ``(cfg.num_frames(L),)``: DIO and StoneMask every hop, frame k centred on sample k * hop
    as the mel's."""
    pyworld, _ = modules()
    x = np.ascontiguousarray(wav, dtype=np.float64)
    period = 1000.0 * cfg.hop_length / cfg.sample_rate
    f0, times = pyworld.dio(x, cfg.sample_rate, floor, ceil, frame_period=period)
    f0 = pyworld.stonemask(x, f0, times, cfg.sample_rate)
    n = cfg.num_frames(len(wav))
    out = np.zeros(n, dtype=np.float32)
    out[: min(n, len(f0))] = f0[:n]
    return out


class PitchCache(FeatureCache):
    """F0 ``(T,)`` per mel frame of audio files (`frame_f0`), computed on first use."""

    def __init__(self, cache_dir: str | os.PathLike, cfg: MelConfig) -> None:
        self.cfg, self.trim_db = cfg, None
        self.dir = Path(cache_dir) / f"{cfg.key()}-f0"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write_config()

    def compute(self, audio: str | os.PathLike) -> torch.Tensor:
        wav, _ = load_audio(audio, self.cfg.sample_rate, min_samples=self.cfg.win_length)
        return torch.from_numpy(frame_f0(wav.numpy(), self.cfg))

    def get(self, audio: str | os.PathLike) -> torch.Tensor:
        """Cached F0 ``(T,)`` float32 of ``audio``; computed and stored on a miss."""
        path = self.path_for(audio)
        try:
            f0 = np.load(path, allow_pickle=False)
            if f0.ndim == 1:
                return torch.from_numpy(f0)
        except (FileNotFoundError, ValueError, OSError, EOFError):
            pass  # a miss, or a leftover of a full disk: computed again
        f0 = self.compute(audio).numpy().astype(np.float32)
        _atomic_write(path, _npy_bytes(f0))
        return torch.from_numpy(f0)


def token_means(values: torch.Tensor, durations: torch.Tensor, voiced_only: bool) -> torch.Tensor:
    """Per-token means (N,) of per-frame `values` (T,) over each token's `durations` (N,)
    frames (summing to T); with `voiced_only`, over its frames with a value above 0 (0 for a
    token without any)."""
    index = torch.repeat_interleave(torch.arange(len(durations)), durations.long())
    weight = (values > 0).float() if voiced_only else torch.ones_like(values)
    sums = torch.zeros(len(durations)).index_add_(0, index, values.float() * weight)
    counts = torch.zeros(len(durations)).index_add_(0, index, weight)
    return torch.where(counts > 0, sums / counts.clamp(min=1), torch.zeros_like(sums))
