"""The FastVC task (family ``fastvc``): target frames per source step from both voices'
records, pairs without them counted, the loss and its gradients, validation (duration
ratio, mapping against both voices' timings, figures), and the whole path from `aligner
train` to `aligner convert` (with --pace) and `aligner align` on a tiny parallel corpus."""

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
from aligner.data.manifest import read_manifest, write_manifest
from aligner.models.fastvc import step_durations, step_frames
from aligner.tasks import build_task
from aligner.tasks.fastvc import IGNORED, phone_loss
from aligner.train.tensorboard import Logger

from .speech_corpus import MEL, TEXTS, char_timings, make_corpus
from .test_guided_durations import FRAMES_PER_CHAR, _record

TINY = {"dim": 16, "encoder_layers": 1, "decoder_layers": 1, "heads": 2, "ff_hidden": 32,
        "predictor_hidden": 16, "reduction": 2}  # fmt: skip


def _cfg(durations="ali_tgt", sources="ali_src", **model) -> dict:
    data = {"mel": MEL, "durations": durations, "source_durations": sources}
    data["log"] = {"plot_items": 2, "griffin_lim_iters": 2}
    return {"task": "vc", "family": "fastvc", "data": data, "model": {**TINY, **model}}


def _frames(path: Path) -> int:
    return 1 + sf.info(path).frames // MEL["hop_length"]


def _records(root: Path, skip: tuple[str, ...] = ()) -> dict[str, tuple[list, list]]:
    """Both voices' records of the tiny parallel corpus (the target's characters, reversed,
    spread evenly over its frames); the source and target frames per token by id."""
    out = {}
    for i, text in enumerate(TEXTS):
        uid = f"u{i}"
        if uid in skip:
            continue
        tokens = ["<s>", *text, "</s>"]
        src = [0, *[FRAMES_PER_CHAR] * len(text), 1]
        n_tgt = _frames(root / "wavs" / f"t{i}.wav")
        tgt = [0, *[(n_tgt - 1) // len(text)] * len(text), 0]
        tgt[-1] = n_tgt - sum(tgt)
        _record(root / "ali_src", uid, tokens, src)
        _record(root / "ali_tgt", uid, tokens, tgt)
        out[uid] = (src, tgt)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_corpus(tmp_path_factory.mktemp("fastvc"), parallel=True)
    _records(root)
    valid = read_manifest(root / "valid.jsonl")  # timings of both voices: the mapping's truth
    for item in valid:
        text = item["text"]
        item["timings"] = char_timings(text)
        item["target_timings"] = {**char_timings(text), "duration": 0.04 * len(text) / 1.4}
    write_manifest(root / "valid.jsonl", valid)
    return root


def test_targets_are_the_steps_target_frames(corpus: Path) -> None:
    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    src, tgt = _records(corpus)["u0"]
    example = task.train_set[0]
    assert example["id"] == "u0"
    expected = step_frames(torch.tensor(src), torch.tensor(tgt), 2)
    assert example["step_frames"].tolist() == pytest.approx(expected.tolist())
    whole = step_durations(torch.tensor(src), torch.tensor(tgt), 2)
    assert example["durations"].tolist() == whole.tolist()
    assert int(example["durations"].sum()) == len(example["mel"])
    assert len(example["durations"]) == -(-len(example["src_mel"]) // 2)


def test_loss_parts_and_gradients(corpus: Path) -> None:
    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    batch = task.collate([task.train_set[i] for i in range(3)])
    loss, parts = task.loss(task.model, batch, step=0)
    assert set(parts) == {"mel", "duration"}
    assert loss.item() == pytest.approx(parts["mel"] + parts["duration"], rel=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in task.model.parameters() if p.requires_grad)


def test_phone_classes_name_each_step_and_frame(corpus: Path) -> None:
    cfg = _cfg()
    cfg["model"]["loss"] = {"phones": 0.5}
    task = build_task(ExperimentConfig.from_dict(cfg), corpus)
    records = _records(corpus)
    names = sorted({t for i, text in enumerate(TEXTS[:4]) for t in ["<s>", *text, "</s>"]})
    assert task.model.config.phone_classes == len(names)
    example = task.train_set[0]
    tokens = ["<s>", *TEXTS[0], "</s>"]
    src, tgt = records["u0"]
    ids = torch.tensor([names.index(t) for t in tokens])
    assert example["phones"].tolist() == torch.repeat_interleave(ids, torch.tensor(tgt)).tolist()
    per_frame = torch.repeat_interleave(ids, torch.tensor(src))
    assert example["src_phones"].tolist() == per_frame[::2].tolist()
    assert len(example["phones"]) == len(example["mel"])
    assert len(example["src_phones"]) == len(example["durations"])
    batch = task.collate([task.train_set[i] for i in range(3)])
    assert (batch["phones"][2, len(task.train_set[2]["phones"]) :] == IGNORED).all()
    loss, parts = task.loss(task.model, batch, step=0)
    assert set(parts) == {"mel", "duration", "phones"}
    expected = parts["mel"] + parts["duration"] + 0.5 * parts["phones"]
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    loss.backward()
    assert all(p.grad is not None for p in task.model.phone_heads.parameters())


def test_without_the_phones_weight_the_network_has_no_phone_heads(corpus: Path) -> None:
    task = build_task(ExperimentConfig.from_dict(_cfg(phone_classes=7)), corpus)
    assert task.model.phone_heads is None and "phones" not in task.train_set[0]
    cfg = _cfg()
    cfg["model"]["loss"] = {"phones": -1}
    with pytest.raises(ConfigError, match="model.loss.phones must be >= 0"):
        build_task(ExperimentConfig.from_dict(cfg), corpus)


def test_phone_loss_leaves_out_ignored_positions() -> None:
    torch.manual_seed(0)
    steps, frames = torch.randn(2, 3, 5), torch.randn(2, 4, 5)
    step_ids = torch.tensor([[1, 2, IGNORED], [0, IGNORED, IGNORED]])
    frame_ids = torch.tensor([[4, 4, 3], [2, 1, IGNORED]])  # one frame short: padded
    got = phone_loss((steps, frames), step_ids, frame_ids)
    ce = torch.nn.functional.cross_entropy
    by_hand = [
        ce(torch.stack([steps[0, 0], steps[0, 1], steps[1, 0]]), torch.tensor([1, 2, 0])),
        ce(
            torch.stack([frames[0, 0], frames[0, 1], frames[0, 2], frames[1, 0], frames[1, 1]]),
            torch.tensor([4, 4, 3, 2, 1]),
        ),
    ]
    assert got.item() == pytest.approx(float(sum(by_hand) / 2), rel=1e-6)


def test_validation_measures_length_mapping_and_draws_figures(corpus: Path, tmp_path: Path):
    from aligner.train.evolution import image_tags

    task = build_task(ExperimentConfig.from_dict(_cfg()), corpus)
    task.model.eval()
    batches = [task.collate([task.valid_set[i] for i in range(2)])]
    logger = Logger(tmp_path / "tb")
    metrics = task.validate(task.model, batches, step=3, logger=logger)
    logger.close()
    assert metrics["duration_frames"] >= 0 and metrics["duration_ratio"] > 0
    assert metrics["mapping_ms"] >= 0  # the valid items have both voices' timings
    tags = image_tags(tmp_path / "tb")
    for tag in (
        "mel/u4/converted",
        "mel/u5/target",
        "durations/u4/given",
        "durations/u4/predicted",
    ):
        assert tag in tags


def test_recipe_errors_are_one_line(corpus: Path) -> None:
    with pytest.raises(ConfigError, match="durations of both voices"):
        build_task(ExperimentConfig.from_dict(_cfg(sources=None)), corpus)
    with pytest.raises(ConfigError, match="model.reduction must be >= 1"):
        build_task(ExperimentConfig.from_dict(_cfg(reduction=0)), corpus)
    with pytest.raises(ConfigError, match="model.widths"):
        build_task(ExperimentConfig.from_dict(_cfg(widths=3)), corpus)


def test_pairs_without_durations_are_left_out_and_counted(tmp_path: Path, capsys) -> None:
    root = make_corpus(tmp_path / "c", parallel=True)
    _records(root, skip=("u5",))
    task = build_task(ExperimentConfig.from_dict(_cfg()), root)
    assert "1 of 2 validation pairs have no durations of both voices" in capsys.readouterr().err
    assert [it["id"] for it in task.valid_set.items] == ["u4"]


def invoke(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.mark.slow
def test_train_convert_align_and_resume(corpus: Path, tmp_path: Path) -> None:
    recipe = _cfg()
    recipe["train"] = {"batch_size": 2, "max_steps": 3, "eval_every": 3, "checkpoint_every": 3}
    recipe["train"] |= {"log_every": 1, "valid_batches": 1, "lr": 1e-3, "warmup_steps": 1}
    (tmp_path / "vc.yaml").write_text(yaml.safe_dump(recipe))
    exp = tmp_path / "exp"
    result = invoke("train", tmp_path / "vc.yaml", "--data", corpus, "--out", exp)
    assert result.exit_code == 0, result.output
    src = corpus / "wavs" / "u4.wav"
    args = ["convert", "--checkpoint", exp, "--in", src, "--griffin-lim-iters", "2"]
    result = invoke(*args, "--out", tmp_path / "c.wav", "--alignment", tmp_path / "c.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.png").exists()
    audio, sr = sf.read(tmp_path / "c.wav")
    assert sr == MEL["sample_rate"] and len(audio) > 0 and np.isfinite(audio).all()
    result = invoke(*args, "--out", tmp_path / "fast.wav", "--pace", "2")
    assert result.exit_code == 0, result.output
    assert len(sf.read(tmp_path / "fast.wav")[0]) <= len(audio)
    out = tmp_path / "conv"
    result = invoke("convert", "--checkpoint", exp, "--in", corpus / "valid.jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    assert len(read_manifest(out / "manifest.jsonl")) == 2
    aligned = tmp_path / "aligned"
    result = invoke("align", "--checkpoint", exp, "--in", corpus / "valid.jsonl", "--out", aligned)
    assert result.exit_code == 0, result.output
    record = json.loads((aligned / "u4.durations.json").read_text())
    assert sum(record["frames"]) == record["total_frames"] == _frames(corpus / "wavs" / "t4.wav")
    summary = json.loads((aligned / "summary.json").read_text())
    assert summary["mean"]["mapping_ms"] >= 0
    recipe["train"]["max_steps"] = 5
    (tmp_path / "vc.yaml").write_text(yaml.safe_dump(recipe))
    result = invoke("train", tmp_path / "vc.yaml", "--data", corpus, "--out", exp, "--resume")
    assert result.exit_code == 0, result.output
    ckpt = torch.load(exp / "checkpoints" / "ckpt-00000005.pt", weights_only=False)
    assert ckpt["step"] == 5 and ckpt["config"]["family"] == "fastvc"


def test_validation_under_bf16_autocast_logs_audio(corpus: Path, tmp_path: Path) -> None:
    """A bf16 run (``train.precision: bf16``, on the CPU too) validates under autocast: the
    logged audio is vocoded in fp32 (Griffin-Lim has no bf16)."""
    from aligner.train.evolution import image_tags

    cfg = _cfg()
    cfg["data"]["log"]["audio_items"] = 1
    task = build_task(ExperimentConfig.from_dict(cfg), corpus)
    task.model.eval()
    batches = [task.collate([task.valid_set[i] for i in range(2)])]
    logger = Logger(tmp_path / "tb")
    with torch.autocast("cpu", dtype=torch.bfloat16):
        metrics = task.validate(task.model, batches, step=1, logger=logger)
    logger.close()
    assert np.isfinite(metrics["loss"]) and "mel/u4/converted" in image_tags(tmp_path / "tb")
