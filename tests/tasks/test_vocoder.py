"""The vocoder task: the Vocos network's shapes and batch independence, the STFT loss, and
`aligner train` of a vocoder whose checkpoint then plays mels through --vocoder EXP."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from click.testing import CliRunner

from aligner.audio.features import MelConfig, log_mel
from aligner.cli import main
from aligner.models.vocoders.base import VocoderError, load_vocoder
from aligner.models.vocoders.vocos import Vocos, VocosConfig
from aligner.tasks.vocoder import segment
from aligner.tasks.vocoder_losses import stft_loss

from .speech_corpus import MEL, make_corpus

TINY = {"dim": 16, "intermediate": 32, "layers": 2, "kernel": 3}


def test_vocos_gives_t_minus_one_hops_and_a_batch_equals_its_items():
    torch.manual_seed(0)
    net = Vocos(VocosConfig(n_mels=16, n_fft=256, hop_length=80, win_length=256, **TINY)).eval()
    mels = torch.randn(3, 16, 25)
    with torch.no_grad():
        together = net(mels)
        alone = torch.stack([net(m[None])[0] for m in mels])
    assert together.shape == (3, 24 * 80)
    assert torch.allclose(together, alone, atol=1e-5)


def test_stft_loss_is_zero_for_the_target_and_grows_with_the_difference():
    torch.manual_seed(0)
    x = torch.randn(2, 4000)
    assert stft_loss(x, x, 512, 128) < 1e-5
    small = stft_loss(x + 0.01 * torch.randn_like(x), x, 512, 128)
    large = stft_loss(x + 0.5 * torch.randn_like(x), x, 512, 128)
    assert 0 < small < large


def test_phase_loss_ignores_2_pi_and_sees_a_shift():
    from aligner.tasks.vocoder_losses import phase_loss

    torch.manual_seed(0)
    spec = torch.polar(torch.rand(2, 9, 7) + 0.1, torch.rand(2, 9, 7) * 6 - 3)
    wrapped = torch.polar(spec.abs(), spec.angle() + 2 * torch.pi)
    assert phase_loss(wrapped, spec) < 1e-5
    shifted = torch.polar(spec.abs(), spec.angle() + 0.5)
    # a constant shift: instantaneous phase off by 0.5, its differences unchanged
    assert phase_loss(shifted, spec) == pytest.approx(0.5, abs=1e-4)


def test_segments_are_cut_or_padded_to_length():
    wav = torch.arange(10.0)
    assert segment(wav, 4, start=3).tolist() == [3, 4, 5, 6]
    assert segment(wav, 12).tolist() == [*range(10), 0, 0]
    assert len(segment(wav, 7)) == 7


def test_a_segment_too_short_for_the_stft_loss_is_one_line(tmp_path):
    data = make_corpus(tmp_path / "data")
    mel = f"data.mel={MEL}".replace("'", '"')
    args = ["train", "recipes/vocoder/vocos_small.yaml", "--data", str(data), "--out"]
    r = CliRunner().invoke(
        main, [*args, str(tmp_path / "e"), "--set", mel, "--set", "data.segment_frames=4"]
    )
    assert r.exit_code == 1 and "n_fft [1024, 2048]" in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_a_trained_vocoder_plays_mels_through_the_cli(tmp_path):
    data = make_corpus(tmp_path / "data")
    exp = tmp_path / "exp"
    sets = [f"data.mel={MEL}".replace("'", '"'), "data.segment_frames=8"]
    sets += [f"model.{k}={v}" for k, v in TINY.items()]
    sets += ["train.max_steps=6", "train.eval_every=3", "train.batch_size=4"]
    sets += ["model.loss.resolutions=[[128, 32], [256, 64]]"]
    args = ["train", "recipes/vocoder/vocos_small.yaml", "--data", data, "--out", exp]
    r = CliRunner().invoke(main, [str(a) for a in args] + [x for s in sets for x in ("--set", s)])
    assert r.exit_code == 0, r.output
    assert "valid step 6" in r.output
    cfg = MelConfig(**MEL)
    vocoder = load_vocoder(str(exp), cfg)
    assert vocoder.features.hop_length == 80
    t = torch.arange(4000) / 8000
    mel = log_mel(0.3 * torch.sin(2 * torch.pi * 300 * t), cfg)
    wav = vocoder(mel)
    assert wav.shape == ((len(mel) - 1) * 80,) and torch.isfinite(wav).all()
    from aligner.inference import InferenceError, load_model, load_speech_model

    assert load_model(exp).features.sample_rate == 8000  # load_model knows vocoders too
    with pytest.raises(
        InferenceError, match="is a vocos vocoder checkpoint, not a speech model.*use --vocoder"
    ):
        load_speech_model(exp, "synthesize")
    with pytest.raises(VocoderError, match="sample rate 8000 \\(the mels: 22050\\)"):
        load_vocoder(str(exp), MelConfig())
    (tmp_path / "mels").mkdir()
    np.save(tmp_path / "mels" / "m.npy", mel.numpy())
    settings = {**cfg.to_dict(), "layout": "frames x n_mels", "log": "natural"}
    (tmp_path / "mels" / "mel_config.json").write_text(json.dumps(settings))
    r = CliRunner().invoke(
        main,
        [
            "vocode",
            "--in",
            str(tmp_path / "mels"),
            "--out",
            str(tmp_path / "w"),
            "--vocoder",
            str(exp),
        ],
    )
    assert r.exit_code == 0, r.output
    got, sr = sf.read(tmp_path / "w" / "m.wav")
    assert sr == 8000 and len(got) == len(wav)


@pytest.mark.slow
def test_eval_vocoder_scores_a_trained_vocoder_beside_griffin_lim(tmp_path):
    """scripts/eval_vocoder.py: analysis-synthesis scores of each system and its speed."""
    import importlib.util
    from pathlib import Path

    pytest.importorskip("pyworld")
    pytest.importorskip("pysptk")
    data = make_corpus(tmp_path / "data")
    exp = tmp_path / "exp"
    sets = [f"data.mel={MEL}".replace("'", '"'), "data.segment_frames=8", "train.max_steps=2"]
    sets += [f"model.{k}={v}" for k, v in TINY.items()]
    sets += ["model.loss.resolutions=[[128, 32], [256, 64]]", "train.batch_size=4"]
    args = ["train", "recipes/vocoder/vocos_small.yaml", "--data", str(data), "--out", str(exp)]
    r = CliRunner().invoke(main, args + [x for s in sets for x in ("--set", s)])
    assert r.exit_code == 0, r.output
    path = Path(__file__).resolve().parents[2] / "scripts" / "eval_vocoder.py"
    spec = importlib.util.spec_from_file_location("eval_vocoder", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "eval.json"
    argv = ["--data", str(data / "valid.jsonl"), "--vocoder", str(exp), "--griffin-lim", "4"]
    assert module.main([*argv, "--no-world", "--out", str(out)]) == 0
    totals = json.loads(out.read_text())["totals"]
    assert set(totals) == {str(exp), "Griffin-Lim 4 it."}
    assert all(t["mcd"] > 0 and t["x_real_time"] > 0 for t in totals.values())


def test_audio_keys_pick_the_voices_of_a_parallel_corpus(tmp_path):
    """data.audio_keys: [target_audio] learns the VC target voice, both keys every voice; an
    item without a named key is one line naming the manifest, the item and the option."""
    from aligner.tasks.vocoder import AudioSet

    data = make_corpus(tmp_path / "data", parallel=True)
    sr = 16000
    src = AudioSet(data / "train.jsonl", sr)
    tgt = AudioSet(data / "train.jsonl", sr, ["target_audio"])
    both = AudioSet(data / "train.jsonl", sr, ["audio", "target_audio"])
    assert len(src) == len(tgt) and len(both) == 2 * len(src)
    assert [len(w) for w in both.waves[1::2]] == [len(w) for w in tgt.waves]
    assert any(len(a) != len(b) for a, b in zip(src.waves, tgt.waves))  # other recordings
    plain = make_corpus(tmp_path / "plain")
    mel = f"data.mel={MEL}".replace("'", '"')
    args = ["train", "recipes/vocoder/vocos_small.yaml", "--data", str(plain), "--out"]
    r = CliRunner().invoke(
        main, [*args, str(tmp_path / "e"), "--set", mel, "--set", "data.audio_keys=[target_audio]"]
    )
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "train.jsonl: item 1" in r.output and "has no 'target_audio'" in r.output


TINY_HIFIGAN = {
    "kind": "hifigan",
    "upsample_rates": [5, 4, 4],
    "upsample_kernel_sizes": [9, 8, 8],  # k - u even: exactly u samples a frame
    "upsample_initial_channel": 16,
    "resblock_kernel_sizes": [3],
    "resblock_dilation_sizes": [[1, 3]],
}


def test_one_update_is_a_generator_step_and_a_discriminator_step():
    """GANVocoder's losses route their gradients apart: back-propagating their sum gives
    the discriminators the gradient of their own loss alone and the generator that of its
    losses alone (the discriminators held fixed)."""
    from aligner.models.vocoders.discriminators import DiscriminatorConfig, discriminator_loss
    from aligner.models.vocoders.gan import GANVocoder
    from aligner.models.vocoders.hifigan import HiFiGANConfig, HiFiGANGenerator

    torch.manual_seed(0)
    cfg = {k: v for k, v in TINY_HIFIGAN.items() if k != "kind"}
    generator = HiFiGANGenerator(HiFiGANConfig.from_dict({**cfg, "num_mels": 16, "hop_size": 80}))
    adv = DiscriminatorConfig(periods=(2, 3), resolutions=((128, 32),), channels=4)
    gan = GANVocoder(generator, adv)
    mel, wav = torch.randn(2, 16, 9), 0.1 * torch.randn(2, 700)
    pred, losses = gan(mel, wav)
    assert pred.shape == (2, 700)  # 9 frames x 80 = 720 samples, cut to the target's
    (losses["disc"] + losses["adv"] + 2 * losses["feature"]).backward()
    d_params = list(gan.discriminators.parameters())
    g_params = list(gan.generator.parameters())
    together_d = [p.grad.clone() for p in d_params]
    together_g = [p.grad.clone() for p in g_params]
    gan.zero_grad()
    fake = generator(mel)[:, 0, :700].detach()
    discriminator_loss(gan.discriminators(wav), gan.discriminators(fake)).backward()
    assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(together_d, d_params))
    assert all(p.grad is None or p.grad.abs().sum() == 0 for p in g_params)
    gan.zero_grad()
    _, again = gan(mel, wav)
    (again["adv"] + 2 * again["feature"]).backward()
    assert all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(together_g, g_params))
    assert all(p.grad is None or p.grad.abs().sum() == 0 for p in d_params)


def test_period_discriminators_take_any_length():
    from aligner.models.vocoders.discriminators import DiscriminatorConfig, Discriminators

    disc = Discriminators(DiscriminatorConfig(periods=(3, 7), resolutions=((64, 16),), channels=4))
    for length in (300, 301, 322):
        scores = disc(torch.randn(2, length))
        assert len(scores) == 3 and all(s.shape[0] == 2 and len(maps) == 6 for s, maps in scores)


def test_bad_adversarial_settings_are_one_line(tmp_path):
    data = make_corpus(tmp_path / "data")
    mel = f"data.mel={MEL}".replace("'", '"')
    args = ["train", "recipes/vocoder/hifigan_v1.yaml", "--data", str(data), "--out"]
    bad = {
        "model.adversarial.kinds=[msd]": "kinds must be some of mpd, mrd",
        "model.upsample_kernel_sizes=[16,16,4]": "multiply to 128, data.mel.hop_length is 80",
        "model.kind=wavenet": "model.kind 'wavenet' and family 'hifigan' differ",
    }
    for setting, message in bad.items():
        sizes = ["model.upsample_rates=[8,8,2]"] if "upsample" in setting else []
        sizes = sizes or [
            "model.upsample_rates=[5,4,2,2]",
            "model.upsample_kernel_sizes=[10,8,4,4]",
        ]
        extra = [x for s in sizes for x in ("--set", s)]
        r = CliRunner().invoke(
            main, [*args, str(tmp_path / "e"), "--set", mel, *extra, "--set", setting]
        )
        assert r.exit_code == 1 and message in r.output and "Traceback" not in r.output, r.output


@pytest.mark.slow
def test_a_hifigan_trained_with_discriminators_resumes_and_plays_mels(tmp_path):
    data = make_corpus(tmp_path / "data")
    exp = tmp_path / "exp"
    sets = [f"data.mel={MEL}".replace("'", '"'), "data.segment_frames=8"]
    sets += [f"model.{k}={json.dumps(v)}" for k, v in TINY_HIFIGAN.items() if k != "kind"]
    sets += ["model.adversarial.periods=[2,3]", "model.adversarial.resolutions=[[128,32]]"]
    sets += ["model.adversarial.channels=4", "model.loss.resolutions=[[128, 32], [256, 64]]"]
    sets += ["train.max_steps=4", "train.eval_every=2", "train.checkpoint_every=2"]
    sets += ["train.log_every=1", "train.batch_size=4"]
    args = ["train", "recipes/vocoder/hifigan_v1.yaml", "--data", str(data), "--out", str(exp)]
    flags = [x for s in sets for x in ("--set", s)]
    r = CliRunner().invoke(main, args + flags)
    assert r.exit_code == 0, r.output
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(exp / "tb"))
    events.Reload()
    assert {"train/disc", "train/adv", "train/feature"} <= set(events.Tags()["scalars"])
    state = torch.load(exp / "checkpoints" / "ckpt-00000004.pt", weights_only=False)
    assert any(k.startswith("discriminators.") for k in state["model"])
    assert state["symbols"]["model"]["kind"] == "hifigan"
    cfg = MelConfig(**MEL)
    vocoder = load_vocoder(str(exp), cfg)
    mel = log_mel(0.3 * torch.sin(2 * torch.pi * 300 * torch.arange(4000) / 8000), cfg)
    wav = vocoder(mel)
    assert wav.shape == (len(mel) * 80,) and torch.isfinite(wav).all()
    # resume: two more steps from the last checkpoint
    sets[-4:] = [
        "train.max_steps=6",
        "train.eval_every=2",
        "train.checkpoint_every=2",
        "train.batch_size=4",
    ]
    r = CliRunner().invoke(main, args + [x for s in sets for x in ("--set", s)] + ["--resume"])
    assert r.exit_code == 0 and (exp / "checkpoints" / "ckpt-00000006.pt").exists(), r.output
