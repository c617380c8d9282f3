"""Mel-cepstral distortion between two utterances, DTW-aligned.

Mel-cepstra here are the orthonormal DCT-II of the natural-log mel spectrum (c0, the
energy, is dropped). Per frame pair MCD = 10 * sqrt(2) / ln(10) * ||c - c'|| dB; an
utterance's MCD is the mean over the DTW path (librosa.sequence.dtw, Euclidean cost).
"""

from __future__ import annotations

import math

import numpy as np

MCD_CONST = 10.0 * math.sqrt(2.0) / math.log(10.0)


def mel_cepstra(log_mel: np.ndarray, n_coeffs: int | None = None) -> np.ndarray:
    """(T, M) natural-log mel -> (T, K) cepstra c1..cK (c0 dropped; K = M - 1 by default)."""
    import scipy.fft

    c = scipy.fft.dct(np.asarray(log_mel, dtype=np.float64), type=2, norm="ortho", axis=-1)
    return c[:, 1 : None if n_coeffs is None else n_coeffs + 1]


def mcd_dtw(log_mel_a: np.ndarray, log_mel_b: np.ndarray, n_coeffs: int | None = None) -> float:
    """DTW-aligned mel-cepstral distortion in dB between two (T, M) log-mels."""
    import librosa

    a, b = mel_cepstra(log_mel_a, n_coeffs), mel_cepstra(log_mel_b, n_coeffs)
    _, path = librosa.sequence.dtw(X=a.T, Y=b.T, metric="euclidean")
    dist = np.linalg.norm(a[path[:, 0]] - b[path[:, 1]], axis=1)
    return float(MCD_CONST * dist.mean())
