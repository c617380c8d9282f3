"""VC scores (aligner.audio.world, aligner.audio.distortion): MCD is 0 for a signal against
itself and grows with distortion, equals the reference formula, F0 RMSE on tones of known
pitch, duration ratio."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("pyworld")
pytest.importorskip("pysptk")

from aligner.audio.distortion import MCD_CONST, compare, dtw_path, f0_scores, mcd_dtw  # noqa: E402
from aligner.audio.world import WorldConfig, analyze  # noqa: E402

SR = 16000


def harmonic(f0: float, seconds: float = 0.6, sr: int = SR, seed: int = 0) -> np.ndarray:
    """(L,) a vowel-like tone: 10 harmonics of `f0` with falling amplitude, a little noise,
    10 ms fades."""
    t = np.arange(int(seconds * sr)) / sr
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 11))
    x = 0.2 * x / np.abs(x).max() + 1e-3 * np.random.default_rng(seed).standard_normal(len(t))
    fade = np.minimum(1.0, np.minimum(np.arange(len(t)), np.arange(len(t))[::-1]) / (0.01 * sr))
    return x * fade


def test_mcd_constant_and_hand_value():
    assert MCD_CONST == pytest.approx(10 / math.log(10) * math.sqrt(2))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 24))
    assert mcd_dtw(a, a) == pytest.approx(0.0, abs=1e-12)
    # DTW absorbs a time stretch: every frame twice
    assert mcd_dtw(np.repeat(a, 2, axis=0), a) == pytest.approx(0.0, abs=1e-12)
    # c1 shifted by d on every frame: 10 / ln 10 * sqrt(2) * d
    shifted = a.copy()
    shifted[:, 0] += 0.5
    assert mcd_dtw(shifted, a) == pytest.approx(MCD_CONST * 0.5, rel=1e-9)


def test_dtw_path_is_monotonic_and_complete():
    rng = np.random.default_rng(1)
    path = dtw_path(rng.standard_normal((12, 3)), rng.standard_normal((17, 3)))
    assert path[0].tolist() == [0, 0] and path[-1].tolist() == [11, 16]
    assert (np.diff(path, axis=0) >= 0).all() and (np.diff(path, axis=0).sum(1) >= 1).all()


def test_mcd_of_a_signal_against_itself_is_zero_and_grows_with_noise():
    x = harmonic(150.0)
    ref = analyze(x, SR)
    assert compare(ref, ref)["mcd"] == pytest.approx(0.0, abs=1e-9)
    rng = np.random.default_rng(2)
    mcds = [
        compare(analyze(x + level * rng.standard_normal(len(x)), SR), ref)["mcd"]
        for level in (0.003, 0.01, 0.03)
    ]
    assert 0 < mcds[0] < mcds[1] < mcds[2]


def test_mcd_equals_the_reference_formula_on_a_fixed_signal():
    """seq2seq-vc's evaluate (world_extract, extfrm at -20 dB, DTW, then
    ``10 / ln 10 * sqrt(2 * sum (c - c')^2)`` averaged), c0 left out, written out here
    with pyworld and pysptk directly."""
    import librosa
    import pysptk
    import pyworld
    from scipy.signal import firwin, lfilter

    a, b = harmonic(140.0, seed=3), harmonic(180.0, seconds=0.5, seed=4)

    def mcep(x):
        x = lfilter(firwin(255, 70 / (SR // 2), pass_zero=False), 1, x * 32767.0)
        f0, t = pyworld.harvest(x, SR, f0_floor=60.0, f0_ceil=500.0, frame_period=5.0)
        sp = pyworld.cheaptrick(x, f0, t, SR)
        power = (sp[:, 0] + sp[:, -1] + 2 * sp[:, 1:-1].sum(1)) / (2 * (sp.shape[1] - 1))
        keep = 10 * np.log10(power / power.mean()) > -20
        return pysptk.sp2mc(sp, 24, pysptk.util.mcepalpha(SR))[keep, 1:]

    ca, cb = mcep(a), mcep(b)
    _, wp = librosa.sequence.dtw(X=ca.T, Y=cb.T, metric="euclidean")
    diff = ca[wp[:, 0]] - cb[wp[:, 1]]
    expected = np.mean(10.0 / np.log(10.0) * np.sqrt(2 * np.sum(diff**2, axis=1)))
    assert compare(analyze(a, SR), analyze(b, SR))["mcd"] == pytest.approx(expected, rel=1e-9)
    assert pysptk.util.mcepalpha(22050) == pytest.approx(0.455)  # the documented constant


def test_f0_rmse_on_tones_of_known_pitch():
    scores = compare(analyze(harmonic(220.0), SR), analyze(harmonic(200.0), SR))
    assert scores["f0_rmse_hz"] == pytest.approx(20.0, abs=2.0)
    assert scores["f0_rmse_cents"] == pytest.approx(1200 * math.log2(1.1), abs=15.0)
    assert scores["vuv_error"] < 0.1 and scores["voiced_pairs"] > 50
    same = compare(analyze(harmonic(200.0, seed=5), SR), analyze(harmonic(200.0), SR))
    assert same["f0_rmse_hz"] < 1.0


def test_f0_scores_by_hand():
    s = f0_scores(np.array([100.0, 0, 200, 300, 0]), np.array([110.0, 0, 190, 0, 120]))
    assert s["voiced_pairs"] == 2 and s["vuv_error"] == pytest.approx(2 / 5)
    assert s["f0_rmse_hz"] == pytest.approx(10.0)
    assert s["f0_corr"] == pytest.approx(1.0)
    none = f0_scores(np.zeros(4), np.zeros(4))
    assert math.isnan(none["f0_rmse_hz"]) and none["vuv_error"] == 0.0


def test_duration_difference_and_ratio_ignore_silence():
    x = harmonic(150.0, seconds=0.5)
    padded = np.concatenate([np.zeros(SR // 2), harmonic(150.0, seconds=1.0), np.zeros(SR)])
    hyp, ref = analyze(padded, SR), analyze(x, SR)
    assert hyp.seconds == pytest.approx(1.0, abs=0.1) and ref.seconds == pytest.approx(0.5, abs=0.1)
    s = compare(hyp, ref)
    assert s["duration_ratio"] == pytest.approx(hyp.seconds / ref.seconds)
    assert s["duration_diff"] == pytest.approx(hyp.seconds - ref.seconds)


def test_settings_are_the_documented_ones():
    cfg = WorldConfig()
    assert (cfg.order, cfg.frame_period, cfg.power_threshold) == (24, 5.0, -20.0)
    feats = analyze(harmonic(150.0), SR)
    assert feats.mcep.shape[1] == 25 and len(feats.f0) == len(feats.mcep) == len(feats.speech)


def test_log_mel_cepstra_are_the_dct_without_c0():
    """A flat mel has no cepstrum beyond c0; one DCT basis row has exactly that coefficient
    (sqrt(M / 2) for a unit cosine under the orthonormal DCT-II)."""
    from aligner.audio.distortion import log_mel_cepstra

    m = 80
    flat = np.full((3, m), -4.0)
    assert np.allclose(log_mel_cepstra(flat), 0.0)
    n = np.arange(m)
    row = np.cos(np.pi * 3 * (2 * n + 1) / (2 * m))[None]
    cep = log_mel_cepstra(row, k=10)
    assert cep.shape == (1, 10)
    assert cep[0, 2] == pytest.approx(np.sqrt(m / 2)) and np.allclose(np.delete(cep[0], 2), 0)
