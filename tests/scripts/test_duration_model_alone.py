"""scripts/duration_model_alone.py: a FastPitch's duration branch trained alone on a tiny
corpus; the branch is every parameter the duration loss reaches, and nothing else moves."""

from __future__ import annotations

import json
from pathlib import Path

import duration_model_alone
import pytest
import torch
import yaml

from aligner.config import ExperimentConfig
from aligner.tasks import build_task
from aligner.tasks.speech_losses import duration_loss
from tests.tasks.speech_corpus import MEL
from tests.tasks.test_fastpitch import fastpitch_corpus

TINY = {"dim": 16, "encoder_layers": 1, "decoder_layers": 1, "heads": 2, "ff_hidden": 32}


def _cfg(**model) -> dict:
    data = {"mel": MEL, "durations": "ali", "log": {"plot_items": 0}}
    model = {**TINY, "predictor_hidden": 16, "pitch": False, "energy": False, **model}
    train = {"batch_size": 2, "warmup_steps": 1}
    return {"task": "tts", "family": "fastpitch", "data": data, "model": model, "train": train}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fastpitch_corpus(tmp_path_factory.mktemp("durations_alone"))


@pytest.mark.parametrize(
    "encoder", [{"duration_encoder": "lstm", "duration_encoder_layers": 1}, {}]
)  # its own encoder, or the text encoder's
def test_the_branch_is_what_the_duration_loss_reaches(corpus: Path, encoder: dict) -> None:
    task = build_task(ExperimentConfig.from_dict(_cfg(**encoder)), corpus)
    model = task.model
    batch = task.collate([task.train_set[i] for i in range(len(task.train_set))])
    predicted, mask = duration_model_alone.log_durations(model, batch)
    duration_loss(predicted, batch["durations"], mask, task.loss_cfg).backward()
    reached = {id(p) for p in model.parameters() if p.grad is not None and p.grad.abs().sum() > 0}
    branch = {id(p) for p in duration_model_alone.duration_branch(model)}
    assert reached <= branch
    assert model.duration.out.weight.grad.abs().sum() > 0
    assert not any(id(p) in branch for p in model.decoder.parameters())
    assert all(id(p) in branch for p in model.encoder.parameters()) == (not encoder)


def test_trains_the_branch_alone_and_prints_its_validation(corpus: Path, tmp_path: Path, capsys):
    recipe = tmp_path / "tiny.yaml"
    cfg = _cfg(duration_encoder="lstm", duration_encoder_layers=1)
    recipe.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    torch.manual_seed(0)  # the script's seed: the same initial weights
    before = build_task(ExperimentConfig.from_dict(cfg), corpus).model.state_dict()
    args = ["--recipe", str(recipe), "--data", str(corpus), "--steps", "3", "--eval-every", "2"]
    after = duration_model_alone.main([*args, "--threads", "1", "--seed", "0"]).model.state_dict()
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["step"] for line in lines] == [2, 3]
    assert all(line["duration_frames"] >= 0 for line in lines)
    for name, value in after.items():  # the text encoder, decoder, projection: untouched
        if not name.startswith("duration"):
            assert torch.equal(value, before[name]), name
    assert not torch.equal(after["duration.out.weight"], before["duration.out.weight"])
