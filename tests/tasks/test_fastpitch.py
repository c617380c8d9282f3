"""The FastPitch task (family ``fastpitch``): durations, pitch and energy targets from an
alignment model's records and the audio, the loss, validation metrics and figures, and the
whole path from `aligner train` to `aligner synthesize` and `aligner align` on a tiny
corpus, resumed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
import yaml
from click.testing import CliRunner

from aligner.cli import main
from aligner.config import ConfigError, ExperimentConfig
from aligner.tasks import build_task
from aligner.tasks.fastpitch import FastPitchLoss, duration_loss
from aligner.train.tensorboard import Logger

from .speech_corpus import MEL, TEXTS, make_corpus
from .test_guided_durations import FRAMES_PER_CHAR, _char_record

TINY = {
    "dim": 16,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "heads": 2,
    "ff_hidden": 32,
    "predictor_hidden": 16,
}


def _cfg(durations="ali", **model) -> dict:
    data = {"mel": MEL, "durations": durations, "log": {"plot_items": 2, "griffin_lim_iters": 2}}
    return {"task": "tts", "family": "fastpitch", "data": data, "model": {**TINY, **model}}


def fastpitch_corpus(folder: Path) -> Path:
    """The tiny speech corpus in `folder` with a duration record per item under ``ali``."""
    root = make_corpus(folder)
    for i, text in enumerate(TEXTS):
        _char_record(root / "ali", f"u{i}", text)
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fastpitch_corpus(tmp_path_factory.mktemp("fastpitch"))


def test_targets_are_the_records_durations_pitch_and_energy(corpus: Path) -> None:
    from aligner.audio.features import MelConfig
    from aligner.audio.io import load_audio
    from aligner.data.pitch import frame_f0

    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    example = task.train_set[0]  # "a cab" and </s>
    text = TEXTS[0]
    durations = [FRAMES_PER_CHAR] * len(text) + [1]
    assert example["durations"].tolist() == durations
    assert int(example["durations"].sum()) == len(example["mel"])
    wav = load_audio(task.train_set.items[0]["audio"], MEL["sample_rate"])[0].numpy()
    f0 = frame_f0(wav, MelConfig.from_dict(MEL))
    stats, expected, start = task.train_set.stats, [], 0
    for n in durations:  # the mean log-F0 of each token's voiced frames, normalized
        voiced = f0[start : start + n][f0[start : start + n] > 0]
        expected.append((np.log(voiced).mean() - stats.mean) / stats.std if len(voiced) else 0.0)
        start += n
    torch.testing.assert_close(example["pitch"], torch.tensor(expected, dtype=torch.float32))
    assert task.symbols["pitch"] == {"mean": stats.mean, "std": stats.std}
    mel = example["mel"]
    energy = [float(mel[FRAMES_PER_CHAR * k : FRAMES_PER_CHAR * (k + 1)].mean()) for k in range(2)]
    torch.testing.assert_close(example["energy"][:2], torch.tensor(energy))


def test_frame_f0_finds_a_tone_at_the_mel_frame_rate() -> None:
    from aligner.audio.features import MelConfig
    from aligner.data.pitch import frame_f0

    cfg = MelConfig.from_dict(MEL)
    t = np.arange(int(0.5 * MEL["sample_rate"])) / MEL["sample_rate"]
    f0 = frame_f0(0.3 * np.sin(2 * np.pi * 240.0 * t), cfg)
    assert len(f0) == cfg.num_frames(len(t))
    inner = f0[2:-2]  # the edge frames see half a window
    assert (inner > 0).all() and np.abs(inner - 240.0).max() < 2.0


def test_token_means_against_a_loop() -> None:
    from aligner.data.pitch import token_means

    values = torch.tensor([0.0, 2.0, 4.0, 0.0, 0.0, 6.0, 1.0])
    durations = torch.tensor([3, 0, 2, 2])
    voiced = token_means(values, durations, voiced_only=True)
    every = token_means(values, durations, voiced_only=False)
    torch.testing.assert_close(voiced, torch.tensor([3.0, 0.0, 0.0, 3.5]))
    torch.testing.assert_close(every, torch.tensor([2.0, 0.0, 0.0, 3.5]))


def test_loss_parts_and_gradients(corpus: Path) -> None:
    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    batch = task.collate([task.train_set[i] for i in range(3)])
    loss, parts = task.loss(task.model, batch, step=0)
    loss.backward()
    assert set(parts) == {"mel", "duration", "pitch", "energy"}
    weighted = parts["mel"] + 0.1 * (parts["duration"] + parts["pitch"] + parts["energy"])
    assert float(loss.detach()) == pytest.approx(weighted, rel=1e-5)
    assert all(p.grad is not None for p in task.model.duration.parameters())


def test_the_duration_loss_on_either_scale() -> None:
    given = torch.tensor([[3, 0, 7], [2, 5, 0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    predicted = torch.tensor([[4.0, 1.0, 5.0], [2.0, 2.0, 9.0]])
    log = duration_loss(torch.log1p(predicted), given, mask, FastPitchLoss())
    on_frames = FastPitchLoss(duration_scale="frames")
    frames = duration_loss(torch.log1p(predicted), given, mask, on_frames)
    valid = mask.flatten()
    expected_log = ((torch.log1p(predicted) - torch.log1p(given.float())) ** 2).flatten()[valid]
    assert float(log) == pytest.approx(float(expected_log.mean()), rel=1e-5)
    assert float(frames) == pytest.approx((1 + 1 + 4 + 0 + 9) / 5, rel=1e-5)


def test_the_durations_learn_the_targets_below_one_frame(corpus: Path) -> None:
    """``duration_target: sub_frame`` gives each item float targets beside its whole frames
    (a record without a phones tier: the same frames), and the duration loss reads them."""
    cfg = _cfg(loss={"duration_scale": "frames", "duration_target": "sub_frame"})
    task = build_task(ExperimentConfig.from_dict(cfg), corpus)
    example = task.train_set[0]
    assert example["duration_targets"].dtype == torch.float32
    torch.testing.assert_close(example["duration_targets"], example["durations"].float())
    batch = task.collate([task.train_set[i] for i in range(2)])
    task.model.eval()  # no dropout: the two losses differ by their targets alone
    _, parts = task.loss(task.model, batch, step=0)
    batch["duration_targets"] = batch["duration_targets"] + 0.5 * batch["durations"].gt(0)
    _, moved = task.loss(task.model, batch, step=0)
    assert moved["duration"] != pytest.approx(parts["duration"])
    assert moved["mel"] == pytest.approx(parts["mel"])  # the mel is spread over whole frames
    with pytest.raises(ConfigError, match="duration_target"):
        build_task(ExperimentConfig.from_dict(_cfg(loss={"duration_target": "half"})), corpus)


def test_validation_measures_durations_and_word_boundaries(corpus: Path, tmp_path: Path):
    from aligner.train.evolution import image_tags

    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    task.model.eval()
    batches = [task.collate([task.valid_set[i] for i in range(2)])]
    logger = Logger(tmp_path / "tb")
    metrics = task.validate(task.model, batches, step=3, logger=logger)
    logger.close()
    assert metrics["loss"] > 0 and metrics["duration_frames"] >= 0
    frame_ms = 1000 * MEL["hop_length"] / MEL["sample_rate"]
    assert metrics["duration_ms"] == pytest.approx(metrics["duration_frames"] * frame_ms)
    assert metrics["word_boundary_ms"] >= 0  # the items have reference timings
    tags = image_tags(tmp_path / "tb")
    for tag in (
        "mel/u4/synthesized",
        "mel/u5/target",
        "durations/u4/given",
        "durations/u4/predicted",
    ):
        assert tag in tags


def test_recipe_errors_are_one_line(corpus: Path) -> None:
    with pytest.raises(ConfigError, match="data.durations: a FastPitch learns from durations"):
        build_task(ExperimentConfig.from_dict(_cfg(durations=None)), corpus)
    with pytest.raises(ConfigError, match="model.dims"):
        build_task(ExperimentConfig.from_dict(_cfg(dims=3)), corpus)
    with pytest.raises(ConfigError, match="model.n_mels"):
        build_task(ExperimentConfig.from_dict(_cfg(n_mels=7)), corpus)


def test_items_without_durations_are_left_out_and_counted(tmp_path: Path, capsys) -> None:
    root = make_corpus(tmp_path / "c")
    for i, text in enumerate(TEXTS[:5]):
        _char_record(root / "ali", f"u{i}", text)
    task = build_task(ExperimentConfig.from_dict(_cfg(pitch=False)), root)
    assert "1 of 2 validation items have no durations and are left out" in capsys.readouterr().err
    assert [it["id"] for it in task.valid_set.items] == ["u4"]
    assert task.valid_set[0]["pitch"].abs().sum() == 0


def invoke(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


def _bench():
    import importlib.util

    path = Path(__file__).parents[2] / "scripts" / "bench_synthesis.py"
    spec = importlib.util.spec_from_file_location("bench_synthesis", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_train_synthesize_align_bench_and_resume(corpus: Path, tmp_path: Path, capfd) -> None:
    recipe = _cfg()
    recipe["train"] = {"batch_size": 2, "max_steps": 3, "eval_every": 3, "checkpoint_every": 3}
    recipe["train"] |= {"log_every": 1, "valid_batches": 1, "lr": 1e-3, "warmup_steps": 1}
    (tmp_path / "fp.yaml").write_text(yaml.safe_dump(recipe))
    exp = tmp_path / "exp"
    result = invoke("train", tmp_path / "fp.yaml", "--data", corpus, "--out", exp)
    assert result.exit_code == 0, result.output
    wav = tmp_path / "say.wav"
    args = ["synthesize", "--checkpoint", exp, "--text", "a bad cab.", "--griffin-lim-iters", "2"]
    result = invoke(*args, "--out", wav, "--alignment", tmp_path / "say.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "say.png").exists()
    audio, sr = sf.read(wav)
    assert sr == MEL["sample_rate"] and len(audio) > 0 and np.isfinite(audio).all()
    result = invoke(*args, "--out", tmp_path / "fast.wav", "--pace", "2", "--window", "0,2")
    assert result.exit_code == 0, result.output
    assert len(sf.read(tmp_path / "fast.wav")[0]) <= len(audio)
    assert "--window 0,2: this model has no attention" in result.output  # not silently dropped
    out = tmp_path / "aligned"
    result = invoke("align", "--checkpoint", exp, "--in", corpus / "valid.jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    assert "is a duration model: what it writes is its own timing" in result.output
    record = json.loads((out / "u4.durations.json").read_text())
    n_frames = FRAMES_PER_CHAR * len(TEXTS[4]) + 1
    assert sum(record["frames"]) == record["total_frames"] == n_frames
    assert len(record["tokens"]) == len(TEXTS[4]) + 1
    from aligner.inference import load_speech_model

    speech = load_speech_model(exp, "align")
    ids = speech.encode_text(TEXTS[4])
    path = speech.teacher_force([ids], [torch.zeros(n_frames, MEL["n_mels"])])[0]
    assert record["frames"] == path.sum(0).long().tolist()  # the model's timing, as written
    with torch.no_grad():  # durations of a fraction of a frame: synthesis keeps every phone
        speech.model.duration.out.bias.fill_(-2.0)
    spoken = speech.generate([ids, ids[:3]], batch_size=2)
    for got, src in zip(spoken, [ids, ids[:3]]):
        frames = got.alignment.sum(0)
        assert (frames[speech.required(src)] >= 1).all(), frames
    (tmp_path / "say.txt").write_text("a bad cab. a dead bee.")
    bench = ["--in", str(tmp_path / "say.txt"), "--repeats", "1", "--threads", "1"]
    _bench().main([str(exp), *bench])
    # the same checkpoint timed again to the first one's length: the same frames, no stop
    _bench().main([str(exp), str(exp), *bench, "--same-length"])
    rows = [json.loads(line) for line in capfd.readouterr().out.strip().splitlines()[-2:]]
    assert all(r["family"] == "FastPitchModel" and r["frames_per_s_batch1"] > 0 for r in rows)
    assert 0 < rows[1]["frames"] <= rows[0]["frames"]  # capped at the first one's length
    recipe["train"]["max_steps"] = 5
    (tmp_path / "fp.yaml").write_text(yaml.safe_dump(recipe))
    result = invoke("train", tmp_path / "fp.yaml", "--data", corpus, "--out", exp, "--resume")
    assert result.exit_code == 0, result.output
    assert "resum" in result.output.lower(), result.output
    ckpt = torch.load(exp / "checkpoints" / "ckpt-00000005.pt", weights_only=False)
    assert ckpt["step"] == 5 and ckpt["config"]["family"] == "fastpitch"


def test_a_tacotron_refuses_pace_in_one_line(tmp_path: Path) -> None:
    """`synthesize` and `convert` name --pace's models; a Tacotron's timing is its attention's."""
    from cli.test_speech_cli import make_checkpoint

    ckpt = make_checkpoint(tmp_path, "tts")
    args = ["synthesize", "--checkpoint", ckpt, "--text", "hello world.", "--out"]
    result = invoke(*args, tmp_path / "x.wav", "--pace", "1.5")
    assert result.exit_code == 1 and "--pace is for a model that predicts its durations" in (
        result.output
    )
    assert "Traceback" not in result.output and not (tmp_path / "x.wav").exists()
    vc = make_checkpoint(tmp_path / "vc", "vc")
    wav = next((tmp_path / "vc").rglob("*.wav"))
    result = invoke("convert", "--checkpoint", vc, "--in", wav, "--out", tmp_path / "y.wav",
                    "--pace", "1.5")  # fmt: skip
    assert result.exit_code == 1 and "--pace is for a model that predicts its durations" in (
        result.output
    )
    assert "Traceback" not in result.output and not (tmp_path / "y.wav").exists()
