"""Voice-conversion scores of one converted (or source) utterance against its target, as
VC papers report them: mel-cepstral distortion (MCD, dB), F0 RMSE and correlation,
voiced/unvoiced error and the duration difference.

- **MCD** (Kubichek 1993, as in unilight/seq2seq-vc): per frame pair
  ``10 / ln 10 * sqrt(2 * sum_{d=1..K} (c_d - c'_d)^2)`` dB over the SPTK mel-cepstra
  c1..cK of `aligner.audio.world` (c0, the energy, excluded), averaged over the frame
  pairs of the DTW path between the two utterances' non-silent frames (exact DTW,
  `librosa.sequence.dtw`, Euclidean cost on c1..cK).
- **F0** along the same path, on the pairs voiced in both: RMSE in Hz and in cents
  (1200 log2 of the ratio), Pearson correlation; the V/UV error is the share of pairs
  whose voicing differs.
- **Duration**: speech seconds (silence trimmed) of the converted minus the target, and
  their ratio.
"""

from __future__ import annotations

import math

import numpy as np

from aligner.audio.world import WorldFeatures

MCD_CONST = 10.0 * math.sqrt(2.0) / math.log(10.0)  # 10 / ln 10 * sqrt(2)


def mcd_frames(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, K), (N, K) paired cepstra c1..cK (no c0) -> (N,) MCD of each pair in dB."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return MCD_CONST * np.sqrt((diff**2).sum(axis=1))


def log_mel_cepstra(mel: np.ndarray, k: int = 24) -> np.ndarray:
    """(T, M) natural-log mel -> (T, k) cepstra c1..ck: the orthonormal DCT-II over the mel
    bins without c0 (the energy). The MCD of these (`mcd_dtw`) is a *mel distortion*: it
    compares acoustic models' mels without a vocoder, on another scale than SPTK's
    mel-cepstra of the audio."""
    import scipy.fft

    cep = scipy.fft.dct(np.asarray(mel, dtype=np.float64), type=2, norm="ortho", axis=-1)
    return cep[:, 1 : k + 1]


def dtw_path(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(Ta, K), (Tb, K) -> (N, 2) monotonic path of index pairs (i in a, j in b), in
    time order, minimising the summed Euclidean distance (exact DTW)."""
    import librosa

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    _, path = librosa.sequence.dtw(X=a.T, Y=b.T, metric="euclidean")
    return path[::-1].copy()


def mcd_dtw(a: np.ndarray, b: np.ndarray) -> float:
    """DTW-aligned MCD (dB) between (Ta, K) and (Tb, K) cepstra c1..cK (no c0)."""
    path = dtw_path(a, b)
    return float(mcd_frames(a[path[:, 0]], b[path[:, 1]]).mean())


def f0_scores(f0_a: np.ndarray, f0_b: np.ndarray) -> dict[str, float]:
    """(N,), (N,) paired F0 values in Hz (0 = unvoiced) -> RMSE in Hz and cents and
    Pearson correlation on the pairs voiced in both (NaN when fewer than two), V/UV error
    (share of pairs voiced in one only) and the number of pairs voiced in both."""
    f0_a, f0_b = np.asarray(f0_a, dtype=np.float64), np.asarray(f0_b, dtype=np.float64)
    va, vb = f0_a > 0, f0_b > 0
    both = va & vb
    scores = {
        "vuv_error": float((va != vb).mean()) if len(va) else float("nan"),
        "voiced_pairs": int(both.sum()),
        "f0_rmse_hz": float("nan"),
        "f0_rmse_cents": float("nan"),
        "f0_corr": float("nan"),
    }
    if both.sum() >= 2:
        a, b = f0_a[both], f0_b[both]
        scores["f0_rmse_hz"] = float(np.sqrt(np.mean((a - b) ** 2)))
        scores["f0_rmse_cents"] = float(np.sqrt(np.mean((1200 * np.log2(a / b)) ** 2)))
        if a.std() > 0 and b.std() > 0:
            scores["f0_corr"] = float(np.corrcoef(a, b)[0, 1])
    return scores


def compare(hyp: WorldFeatures, ref: WorldFeatures) -> dict[str, float]:
    """All scores (module docstring) of `hyp` (converted or source) against `ref` (the
    target), and ``path``-free summary numbers only: mcd, f0_*, vuv_error, voiced_pairs,
    seconds, target_seconds, duration_diff (s, hyp - ref), duration_ratio (hyp / ref)."""
    hi, ri = np.flatnonzero(hyp.speech), np.flatnonzero(ref.speech)
    a, b = hyp.mcep[hi, 1:], ref.mcep[ri, 1:]
    path = dtw_path(a, b)
    scores: dict[str, float] = {"mcd": float(mcd_frames(a[path[:, 0]], b[path[:, 1]]).mean())}
    scores.update(f0_scores(hyp.f0[hi[path[:, 0]]], ref.f0[ri[path[:, 1]]]))
    scores.update(
        seconds=hyp.seconds,
        target_seconds=ref.seconds,
        duration_diff=hyp.seconds - ref.seconds,
        duration_ratio=hyp.seconds / ref.seconds if ref.seconds > 0 else float("nan"),
    )
    return scores
