"""Audio I/O: round trip, mono mix-down, resampling and one clear error per bad-file case."""

import math

import numpy as np
import pytest
import soundfile as sf
import torch

from aligner.audio.io import AudioError, load_audio, save_audio


def _tone(sr: int, seconds: float = 0.5, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(sr * seconds)) / sr
    return (0.5 * np.sin(2 * math.pi * freq * t)).astype(np.float32)


def test_round_trip_pcm16(tmp_path):
    wav = torch.from_numpy(_tone(16000))
    save_audio(tmp_path / "a.wav", wav, 16000)
    back, sr = load_audio(tmp_path / "a.wav")
    assert sr == 16000
    assert torch.allclose(back, wav, atol=1 / 32768 + 1e-6)


def test_mono_mixdown_is_channel_mean(tmp_path):
    left, right = _tone(16000, freq=300), _tone(16000, freq=500)
    sf.write(tmp_path / "st.wav", np.stack([left, right], 1), 16000, subtype="FLOAT")
    wav, _ = load_audio(tmp_path / "st.wav")
    assert torch.allclose(wav, torch.from_numpy((left + right) / 2), atol=1e-6)


def test_resample_preserves_tone_frequency(tmp_path):
    sf.write(tmp_path / "t.wav", _tone(44100, 1.0, 1000.0), 44100, subtype="FLOAT")
    wav, sr = load_audio(tmp_path / "t.wav", sample_rate=16000)
    assert sr == 16000 and abs(wav.numel() - 16000) <= 1
    peak_hz = torch.fft.rfft(wav).abs().argmax().item() * sr / wav.numel()
    assert abs(peak_hz - 1000.0) < 2.0


def test_refuses_overwrite_without_force(tmp_path):
    save_audio(tmp_path / "a.wav", torch.zeros(2000), 16000)
    with pytest.raises(FileExistsError):
        save_audio(tmp_path / "a.wav", torch.zeros(2000), 16000, force=False)


def _truncated(tmp_path):
    sf.write(tmp_path / "full.wav", _tone(16000), 16000)
    data = (tmp_path / "full.wav").read_bytes()
    (tmp_path / "bad.wav").write_bytes(data[: len(data) // 2])


def _truncated_flac(tmp_path):
    sf.write(tmp_path / "full.flac", _tone(16000), 16000)
    data = (tmp_path / "full.flac").read_bytes()
    (tmp_path / "bad.flac").write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    "name, make, reason",
    [
        ("missing.wav", lambda p: None, "not found"),
        ("bad.wav", lambda p: (p / "bad.wav").write_bytes(b""), "empty"),
        ("bad.wav", lambda p: (p / "bad.wav").write_bytes(b"not audio at all" * 20), "readable"),
        ("bad.wav", _truncated, "truncated"),
        ("bad.flac", _truncated_flac, "flac"),
        (
            "bad.wav",
            lambda p: sf.write(p / "bad.wav", np.zeros((0,), np.float32), 16000),
            "0 frames",
        ),
        (
            "bad.wav",
            lambda p: sf.write(
                p / "bad.wav", np.array([0.1, np.nan] * 2000, np.float32), 16000, subtype="FLOAT"
            ),
            "NaN",
        ),
        (
            "bad.wav",
            lambda p: sf.write(
                p / "bad.wav", np.array([0.1, np.inf] * 2000, np.float32), 16000, subtype="FLOAT"
            ),
            "infinite",
        ),
        ("bad.wav", lambda p: sf.write(p / "bad.wav", _tone(16000, 0.01), 16000), "too short"),
    ],
)
def test_bad_files_raise_audio_error_naming_file(tmp_path, name, make, reason):
    make(tmp_path)
    with pytest.raises(AudioError) as err:
        load_audio(tmp_path / name, min_samples=1024)
    assert name in str(err.value) and reason.lower() in str(err.value).lower()
    assert isinstance(err.value, ValueError)


def test_min_samples_counts_at_output_rate(tmp_path):
    sf.write(tmp_path / "a.wav", _tone(48000, 0.03), 48000)  # 1440 samples at 48 kHz
    load_audio(tmp_path / "a.wav", min_samples=1024)
    with pytest.raises(AudioError, match="too short"):
        load_audio(tmp_path / "a.wav", sample_rate=16000, min_samples=1024)  # 480 samples
