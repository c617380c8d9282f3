"""The HiFi-GAN release format: a randomly initialized generator saved as the release saves
it (weight-normalized convolutions, ``{"generator": state_dict}`` beside ``config.json``)
loads and gives the very waveform the weight-normalized network gives; the mel convention
matches the release's ``mel_spectrogram`` half a hop apart; mismatched features are refused."""

from __future__ import annotations

import json
import warnings

import librosa
import numpy as np
import pytest
import torch

from aligner.audio.features import LogMel, MelConfig
from aligner.models.vocoders.base import VocoderError, load_vocoder
from aligner.models.vocoders.hifigan import HiFiGANConfig, HiFiGANGenerator

# a small V3-like generator (resblock 2) and a small V1-like one (resblock 1)
SMALL = {
    "1": dict(
        resblock="1",
        upsample_rates=[8, 8, 4],
        upsample_kernel_sizes=[16, 16, 8],
        upsample_initial_channel=32,
        resblock_kernel_sizes=[3, 7],
        resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]],
    ),
    "2": dict(
        resblock="2",
        upsample_rates=[8, 8, 4],
        upsample_kernel_sizes=[16, 16, 8],
        upsample_initial_channel=32,
        resblock_kernel_sizes=[3, 5, 7],
        resblock_dilation_sizes=[[1, 2], [2, 6], [3, 12]],
    ),
}
FEATURES = dict(
    num_mels=80, sampling_rate=22050, hop_size=256, n_fft=1024, win_size=1024, fmin=0, fmax=8000
)


def weight_normed(cfg: HiFiGANConfig, seed: int) -> HiFiGANGenerator:
    """The generator with PyTorch's (old, hook-based) weight norm on every convolution, as
    the release trains it, and gains g that differ from ||v||."""
    torch.manual_seed(seed)
    gen = HiFiGANGenerator(cfg)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for module in list(gen.modules()):
            if isinstance(module, torch.nn.Conv1d | torch.nn.ConvTranspose1d):
                torch.nn.utils.weight_norm(module)
                with torch.no_grad():
                    module.weight_g.mul_(torch.rand_like(module.weight_g) + 0.5)
    return gen.eval()


def save_release(folder, kind: str, seed: int = 0, **changes) -> HiFiGANGenerator:
    config = {**SMALL[kind], **FEATURES, **changes, "segment_size": 8192, "num_gpus": 0}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    gen = weight_normed(HiFiGANConfig.from_dict(config), seed)
    torch.save({"generator": gen.state_dict()}, folder / "g_02500000")
    return gen


@pytest.mark.parametrize("kind", ["1", "2"])
def test_a_release_generator_loads_and_equals_the_weight_normed_network(tmp_path, kind):
    reference = save_release(tmp_path / "release", kind, seed=3)
    state = torch.load(tmp_path / "release" / "g_02500000", weights_only=True)["generator"]
    assert "conv_pre.weight_g" in state and "ups.0.weight_v" in state  # the release's names
    block = "convs1.0" if kind == "1" else "convs.0"
    assert f"resblocks.0.{block}.weight_v" in state
    vocoder = load_vocoder(f"hifigan:{tmp_path / 'release'}", MelConfig())
    mel = torch.randn(23, 80) - 4.0
    with torch.no_grad():
        expected = reference(mel.T[None])[0, 0]
    got = vocoder(mel)
    assert got.shape == (23 * 256,) and torch.allclose(got, expected, atol=1e-5)
    assert vocoder.features.hop_length == 256 and vocoder.features.sample_rate == 22050


def test_mismatched_features_and_bad_releases_are_one_line(tmp_path):
    save_release(tmp_path / "r16k", "2", sampling_rate=16000, fmax=7600)
    with pytest.raises(VocoderError, match="sample rate 16000 .*f_max 7600.0"):
        load_vocoder(f"hifigan:{tmp_path / 'r16k'}", MelConfig())
    save_release(tmp_path / "ok", "2")
    (tmp_path / "ok" / "generator_other").write_bytes(b"x")
    with pytest.raises(VocoderError, match="expected one generator file"):
        load_vocoder(f"hifigan:{tmp_path / 'ok'}", MelConfig())
    with pytest.raises(VocoderError, match="not a HiFi-GAN generator"):
        load_vocoder(f"hifigan:{tmp_path / 'ok' / 'generator_other'}", MelConfig())
    with pytest.raises(VocoderError, match="nowhere does not exist"):
        load_vocoder(f"hifigan:{tmp_path / 'nowhere'}", MelConfig())
    (tmp_path / "empty").mkdir()
    with pytest.raises(VocoderError, match="no config.json"):
        load_vocoder(f"hifigan:{tmp_path / 'empty'}", MelConfig())
    with pytest.raises(VocoderError, match="give griffin-lim, hifigan:DIR"):
        load_vocoder("wavenet", MelConfig())


def release_mel(y: torch.Tensor, cfg: MelConfig) -> torch.Tensor:
    """The release's `mel_spectrogram` (meldataset.py), restated: reflect padding of
    (n_fft - hop) / 2, no centring, magnitude sqrt(re^2 + im^2 + 1e-9), librosa's Slaney
    filterbank, natural log with a 1e-5 floor; (n_mels, T)."""
    pad = (cfg.n_fft - cfg.hop_length) // 2
    y = torch.nn.functional.pad(y[None, None], (pad, pad), mode="reflect")[0]
    spec = torch.stft(
        y,
        cfg.n_fft,
        hop_length=cfg.hop_length,
        win_length=cfg.win_length,
        window=torch.hann_window(cfg.win_length),
        center=False,
        return_complex=True,
    )
    spec = torch.sqrt(spec.real**2 + spec.imag**2 + 1e-9)
    basis = librosa.filters.mel(
        sr=cfg.sample_rate, n_fft=cfg.n_fft, n_mels=cfg.n_mels, fmin=cfg.f_min, fmax=cfg.f_max
    )
    return torch.log(torch.clamp(torch.from_numpy(basis) @ spec, min=1e-5))[0]


def test_log_mel_is_the_release_convention_half_a_hop_earlier():
    """The release's frame t covers the audio around t * hop + hop / 2, ours around
    t * hop: ours of the signal advanced by hop / 2 equals theirs, away from
    the edges (where the reflect padding differs)."""
    cfg = MelConfig()
    rng = np.random.default_rng(0)
    t = np.arange(22050) / 22050
    y = 0.3 * np.sin(2 * np.pi * 220 * t * (1 + t)) + 0.05 * rng.standard_normal(len(t))
    y = torch.from_numpy(y.astype(np.float32))
    theirs = release_mel(y, cfg).T  # (T, n_mels)
    ours = LogMel(cfg)(y[cfg.hop_length // 2 :])
    inner = slice(4, min(len(theirs), len(ours)) - 4)
    assert torch.allclose(ours[inner], theirs[inner], atol=2e-3)
    unshifted = LogMel(cfg)(y)
    assert (unshifted[inner] - theirs[inner]).abs().max() > 0.05  # the offset is real


def test_save_release_round_trips_through_the_release_layout(tmp_path):
    torch.manual_seed(5)
    gen = HiFiGANGenerator(HiFiGANConfig.from_dict({**SMALL["1"], **FEATURES})).eval()
    from aligner.models.vocoders.hifigan import save_release

    file = save_release(gen, tmp_path / "export")
    state = torch.load(file, weights_only=True)["generator"]
    assert "conv_post.weight_g" in state and "conv_post.weight" not in state
    mel = torch.randn(9, 80)
    with torch.no_grad():
        expected = gen(mel.T[None])[0, 0]
    got = load_vocoder(f"hifigan:{tmp_path / 'export'}", MelConfig())(mel)
    assert torch.allclose(got, expected, atol=1e-5)
