"""Log-mel features against librosa, the config key, and normalization statistics."""

import librosa
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.audio.features import LogMel, MelConfig, MelStats, log_mel, mel_filterbank

CONFIGS = [
    MelConfig(),
    MelConfig(
        sample_rate=16000,
        n_fft=512,
        hop_length=160,
        win_length=400,
        n_mels=40,
        f_min=50.0,
        f_max=7600.0,
    ),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_filterbank_matches_librosa(cfg):
    ours = mel_filterbank(cfg).double().numpy().T
    ref = librosa.filters.mel(
        sr=cfg.sample_rate,
        n_fft=cfg.n_fft,
        n_mels=cfg.n_mels,
        fmin=cfg.f_min,
        fmax=cfg.f_max,
        dtype=np.float64,
    )
    assert ours.shape == ref.shape
    assert np.abs(ours - ref).max() < 1e-5


@pytest.mark.parametrize("cfg", CONFIGS)
def test_log_mel_matches_librosa_melspectrogram(cfg):
    rng = np.random.default_rng(0)
    t = np.arange(cfg.sample_rate // 2) / cfg.sample_rate
    y = (0.3 * np.sin(2 * np.pi * 330 * t) + 0.05 * rng.standard_normal(t.size)).astype(np.float32)
    ref = librosa.feature.melspectrogram(
        y=y.astype(np.float64),
        sr=cfg.sample_rate,
        n_fft=cfg.n_fft,
        hop_length=cfg.hop_length,
        win_length=cfg.win_length,
        window="hann",
        center=True,
        pad_mode="reflect",
        power=1.0,
        n_mels=cfg.n_mels,
        fmin=cfg.f_min,
        fmax=cfg.f_max,
        htk=False,
        norm="slaney",
    )
    ref_log = np.log(np.maximum(ref, cfg.log_floor)).T  # (T, n_mels)
    ours = LogMel(cfg)(torch.from_numpy(y)).numpy()
    assert ours.shape == ref_log.shape == (cfg.num_frames(y.size), cfg.n_mels)
    assert np.abs(ours - ref_log).max() < 1e-3


def test_log_floor_and_batch_dims():
    cfg = MelConfig()
    silent = torch.zeros(2, 3, 4096)
    out = log_mel(silent, cfg)
    assert out.shape == (2, 3, cfg.num_frames(4096), cfg.n_mels)
    assert torch.allclose(out, torch.full_like(out, float(np.log(cfg.log_floor))))


def test_key_changes_with_any_setting_and_round_trips():
    base = MelConfig()
    assert base.key() == MelConfig().key() and len(base.key()) == 12
    for change in [{"hop_length": 200}, {"n_mels": 64}, {"f_max": 7000.0}, {"log_floor": 1e-4}]:
        assert MelConfig(**{**base.to_dict(), **change}).key() != base.key()
    assert MelConfig.from_dict(base.to_dict()) == base
    with pytest.raises(ValueError, match="unknown mel setting"):
        MelConfig.from_dict({"hop": 3})
    with pytest.raises(ValueError, match="f_max"):
        MelConfig(f_max=20000.0)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(1, 30), min_size=1, max_size=5),
    st.floats(-5, 5),
    st.floats(0.1, 3),
)
def test_mel_stats_match_concatenation(lengths, shift, scale):
    mels = [torch.randn(n, 4, dtype=torch.float64) * scale + shift for n in lengths]
    stats = MelStats.compute(mels)
    allm = torch.cat(mels)
    assert torch.allclose(stats.mean.double(), allm.mean(0), atol=1e-4)
    assert torch.allclose(
        stats.std.double(), allm.std(0, unbiased=False).clamp(min=1e-3), atol=1e-4
    )
    x = mels[0].float()
    assert torch.allclose(stats.denormalize(stats.normalize(x)), x, atol=1e-4)
    back = MelStats.from_dict(stats.to_dict())
    assert torch.equal(back.mean, stats.mean) and torch.equal(back.std, stats.std)


def test_normalized_training_set_is_standard():
    mels = [torch.randn(50, 3) * torch.tensor([1.0, 2.0, 5.0]) + 7 for _ in range(4)]
    stats = MelStats.compute(mels)
    z = torch.cat([stats.normalize(m) for m in mels])
    assert torch.allclose(z.mean(0), torch.zeros(3), atol=1e-4)
    assert torch.allclose(z.std(0, unbiased=False), torch.ones(3), atol=1e-3)
