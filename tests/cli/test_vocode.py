"""`aligner vocode` and `--vocoder`: saved mels to audio with Griffin-Lim or a HiFi-GAN
release, bad items named and counted, mismatched vocoders refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from click.testing import CliRunner

from aligner.audio.features import LogMel, MelConfig
from aligner.cli import main
from aligner.models.vocoders.hifigan import HiFiGANConfig, HiFiGANGenerator, save_release

from .test_speech_cli import MEL, make_checkpoint

CFG = MelConfig(**MEL)


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def saved_mels(folder, names=("a", "b")):
    """What --save-mel writes: NAME.npy (frames x mels, natural log) and mel_config.json."""
    folder.mkdir(parents=True)
    t = torch.arange(8000) / 8000
    for k, name in enumerate(names):
        wav = 0.3 * torch.sin(2 * torch.pi * (200 + 100 * k) * t)
        np.save(folder / f"{name}.npy", LogMel(CFG)(wav).numpy())
    settings = {**CFG.to_dict(), "layout": "frames x n_mels", "log": "natural"}
    (folder / "mel_config.json").write_text(json.dumps(settings))
    return folder


def release(folder, **changes):
    """A HiFi-GAN release for the fixtures' 8 kHz, hop 64, 16-mel features."""
    config = {
        "resblock": "2",
        "upsample_initial_channel": 16,
        "resblock_kernel_sizes": [3, 5],
        "resblock_dilation_sizes": [[1, 2], [2, 6]],
        "upsample_rates": [4, 4, 4],
        "upsample_kernel_sizes": [8, 8, 8],
        "num_mels": 16,
        "sampling_rate": 8000,
        "hop_size": 64,
        "n_fft": 256,
        "win_size": 256,
        "fmin": 0,
        "fmax": 4000,
        **changes,
    }
    torch.manual_seed(1)
    save_release(HiFiGANGenerator(HiFiGANConfig.from_dict(config)), folder, "generator_v3")
    return folder


def test_vocode_a_folder_with_griffin_lim_and_with_a_release(tmp_path):
    mels = saved_mels(tmp_path / "mels")
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "gl", "--griffin-lim-iters", "4")
    assert r.exit_code == 0, r.output
    frames = np.load(mels / "a.npy").shape[0]
    wav, sr = sf.read(tmp_path / "gl" / "a.wav")
    assert sr == 8000 and len(wav) == (frames - 1) * 64
    hifigan = release(tmp_path / "hifigan")
    r = invoke(
        "vocode",
        "--in",
        mels / "b.npy",
        "--out",
        tmp_path / "b.wav",
        "--vocoder",
        f"hifigan:{hifigan}",
    )
    assert r.exit_code == 0, r.output
    assert "hifigan:" in r.output
    wav, sr = sf.read(tmp_path / "b.wav")
    assert sr == 8000 and len(wav) == frames * 64 and np.abs(wav).max() <= 1.0
    r = invoke("vocode", "--in", mels / "b.npy", "--out", tmp_path / "b.wav")
    assert r.exit_code == 1 and "exists; pass --force" in r.output


def test_bad_mels_are_named_and_counted_and_good_ones_written(tmp_path):
    mels = saved_mels(tmp_path / "mels", names=("good", "nan", "wide"))
    np.save(mels / "nan.npy", np.full((20, 16), np.nan, np.float32))
    np.save(mels / "wide.npy", np.zeros((20, 80), np.float32))
    (mels / "junk.npy").write_bytes(b"not numpy")
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "out", "--griffin-lim-iters", "2")
    assert r.exit_code == 1
    assert (tmp_path / "out" / "good.wav").is_file()
    assert "nan.npy: the mel holds NaN" in r.output and "expected frames x 16 mels" in r.output
    assert "junk.npy is not a .npy array" in r.output and "3 bad input(s)" in r.output
    assert "Traceback" not in r.output


def test_a_mel_of_one_frame_is_a_bad_item_not_the_end_of_the_folder(tmp_path, monkeypatch):
    """A trained vocoder's inverse STFT failed on a 1-frame mel with a traceback and the
    rest of the folder unwritten; a vocoder's own error on one item is that item's too."""
    mels = saved_mels(tmp_path / "mels", names=("a", "b", "c"))
    np.save(mels / "a.npy", np.load(mels / "a.npy")[:1])
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "out", "--griffin-lim-iters", "2")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "a.npy: 1 frame, too few to vocode" in r.output
    assert (tmp_path / "out" / "b.wav").is_file() and (tmp_path / "out" / "c.wav").is_file()
    from aligner.inference import vocode

    def fails(mel):
        raise RuntimeError("istft: window overlap\nmore")

    monkeypatch.setattr(vocode, "load_vocoder", lambda *a, **k: _Calls("stub", CFG, fails))
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "out2", "--griffin-lim-iters", "2")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "b.npy: could not be vocoded (istft: window overlap)" in r.output
    assert "c.npy: could not be vocoded" in r.output


def test_a_vocoder_of_other_features_and_a_missing_config_are_one_line(tmp_path):
    mels = saved_mels(tmp_path / "mels")
    other = release(tmp_path / "h22k", sampling_rate=22050)
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "o", "--vocoder", f"hifigan:{other}")
    assert r.exit_code == 1 and "sample rate 22050 (the mels: 8000)" in r.output
    (mels / "mel_config.json").unlink()
    r = invoke("vocode", "--in", mels, "--out", tmp_path / "o")
    assert r.exit_code == 1 and "no mel_config.json" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("command", ["synthesize", "convert"])
def test_synthesize_and_convert_take_a_release(tmp_path, command):
    task = "tts" if command == "synthesize" else "vc"
    ckpt = make_checkpoint(tmp_path, task)
    hifigan = release(tmp_path / "hifigan")
    if command == "synthesize":
        inputs = ["--text", "a cat."]
    else:
        sf.write(tmp_path / "src.wav", 0.1 * np.sin(np.arange(4000) / 5.0), 8000)
        inputs = ["--in", tmp_path / "src.wav"]
    out = tmp_path / "out.wav"
    args = [command, "--checkpoint", ckpt, *inputs, "--out", out, "--max-length-ratio", "2"]
    r = invoke(*args, "--vocoder", f"hifigan:{hifigan}")
    assert r.exit_code == 0, r.output
    wav, sr = sf.read(out)
    assert sr == 8000 and len(wav) % 64 == 0
    r = invoke(*args, "--force", "--vocoder", "nonsense")
    assert r.exit_code == 1 and "give griffin-lim, hifigan:DIR" in r.output


class _Calls:
    """A vocoder stand-in: `name`, `features` and a call that fails."""

    def __init__(self, name, features, call):
        self.name, self.features, self._call = name, features, call

    def __call__(self, mel):
        return self._call(mel)


def test_audio_given_to_vocode_is_named_as_not_a_mel(tmp_path):
    mels = saved_mels(tmp_path / "mels")
    sf.write(mels / "x.wav", np.zeros(800, np.float32), 8000)
    r = invoke("vocode", "--in", mels / "x.wav", "--out", tmp_path / "x_out.wav")
    assert (
        r.exit_code == 1 and "x.wav is not a .npy mel" in r.output and "Traceback" not in r.output
    )
    (mels / "t.npy").write_text("some text\n")
    r = invoke("vocode", "--in", mels / "t.npy", "--out", tmp_path / "t.wav")
    assert r.exit_code == 1 and "t.npy is not a .npy array" in r.output
    assert "allow_pickle" not in r.output
