"""WORLD analysis (pyworld) and SPTK mel-cepstra (pysptk): the features voice-conversion
papers score with (mel-cepstral distortion, F0 RMSE), as unilight/seq2seq-vc does.

Per waveform: F0 by Harvest (Hz, 0 where unvoiced), the CheapTrick spectral envelope, its
mel-cepstrum c0..cK by ``pysptk.sp2mc`` (order K = 24, all-pass constant alpha =
``pysptk.util.mcepalpha(sr)``: 0.455 at 22,050 Hz, 0.41 at 16 kHz, 0.466 at 24 kHz), the
frame power in dB relative to the utterance's mean (silence detection), every 5 ms; and
the speech duration: leading and trailing silence (60 dB below the peak, 25 ms windows
every 5 ms, `librosa.effects.trim`) left out. The waveform is scaled to 16-bit range and high-passed at 70 Hz first (seq2seq-vc's
``world_extract``). pyworld and pysptk are the optional extra ``aligner[vc]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from aligner.audio.io import load_audio

HINT = "pip install 'aligner[vc]' (pyworld and pysptk; they build with a C compiler)"


class WorldUnavailable(ImportError):
    """pyworld or pysptk is not installed; the message is one line with the fix."""


@dataclass(frozen=True)
class WorldConfig:
    """Analysis settings (see the module docstring)."""

    frame_period: float = 5.0  # ms between frames
    order: int = 24  # mel-cepstrum order: c0..c24 (MCD uses c1..c24)
    alpha: float | None = None  # all-pass constant; None: pysptk.util.mcepalpha(sr)
    f0_floor: float = 60.0  # Hz, Harvest's search range
    f0_ceil: float = 500.0
    power_threshold: float = -20.0  # dB below the mean power: a silent frame
    trim_db: float = 60.0  # below the peak: silence, trimmed from the speech duration


@dataclass
class WorldFeatures:
    """One waveform's analysis; T frames of ``frame_period`` ms."""

    f0: np.ndarray  # (T,) Hz, 0 = unvoiced
    mcep: np.ndarray  # (T, order + 1) mel-cepstrum c0..cK
    npow: np.ndarray  # (T,) frame power in dB relative to the utterance mean
    speech: np.ndarray  # (T,) bool: above the power threshold (all True for a silent file)
    seconds: float  # speech duration: leading and trailing silence trimmed
    frame_period: float  # ms


def modules() -> tuple[Any, Any]:
    """(pyworld, pysptk), or WorldUnavailable with the install hint."""
    try:
        import pysptk
        import pyworld
    except ImportError as err:
        raise WorldUnavailable(f"WORLD analysis needs {err.name}: {HINT}") from None
    return pyworld, pysptk


def _low_cut(x: np.ndarray, sr: int, cutoff: float = 70.0) -> np.ndarray:
    """(L,) -> (L,): 255-tap FIR high-pass at `cutoff` Hz."""
    from scipy.signal import firwin, lfilter

    return lfilter(firwin(255, cutoff / (sr // 2), pass_zero=False), 1, x)


def _frame_power(sp: np.ndarray) -> np.ndarray:
    """(T, F) power spectral envelope -> (T,) power in dB relative to the mean frame."""
    fftl = 2 * (sp.shape[1] - 1)
    power = (sp[:, 0] + sp[:, -1] + 2.0 * sp[:, 1:-1].sum(axis=1)) / fftl
    power = np.maximum(power, 1e-20)
    return 10.0 * np.log10(power / power.mean())


def analyze(wav: np.ndarray, sr: int, cfg: WorldConfig | None = None) -> WorldFeatures:
    """(L,) float waveform in [-1, 1] at `sr` Hz -> `WorldFeatures` (module docstring)."""
    import librosa

    cfg = cfg or WorldConfig()
    pyworld, pysptk = modules()
    wav = np.asarray(wav, dtype=np.float64).reshape(-1)
    if len(wav) < sr * cfg.frame_period / 1000 * 4:  # WORLD needs a few frames
        wav = np.pad(wav, (0, int(sr * cfg.frame_period / 1000 * 4)))
    x = np.ascontiguousarray(_low_cut(wav * 32767.0, sr))
    f0, times = pyworld.harvest(
        x, sr, f0_floor=cfg.f0_floor, f0_ceil=cfg.f0_ceil, frame_period=cfg.frame_period
    )
    sp = pyworld.cheaptrick(x, f0, times, sr)
    alpha = pysptk.util.mcepalpha(sr) if cfg.alpha is None else cfg.alpha
    mcep = pysptk.sp2mc(sp, cfg.order, alpha)
    npow = _frame_power(sp)
    speech = npow > cfg.power_threshold
    frame, hop = int(0.025 * sr), int(0.005 * sr)  # 25 ms windows every 5 ms
    trimmed, _ = librosa.effects.trim(wav, top_db=cfg.trim_db, frame_length=frame, hop_length=hop)
    return WorldFeatures(
        f0, mcep, npow, speech if speech.any() else ~speech, len(trimmed) / sr, cfg.frame_period
    )


def analyze_file(path: str, sample_rate: int | None = None, cfg: WorldConfig | None = None):
    """`analyze` of an audio file, resampled to `sample_rate` when given (else its own
    rate): ``(WorldFeatures, sample rate)``. AudioError (one line) when unreadable."""
    wav, sr = load_audio(path, sample_rate, min_samples=1)
    return analyze(wav.numpy(), sr, cfg), sr
