"""The moving average of the weights (``train.ema``): its formula, that it leaves the
training itself unchanged, exact resume with it, and what the checkpoints hold."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from test_trainer import CFG, Crash, CrashingTask, make_trainer
from tiny_task import TinyModel

from aligner.checkpoint import load_checkpoint
from aligner.config import ConfigError, TrainConfig
from aligner.train.ema import WeightAverage, warmed_decay
from aligner.train.trainer import Trainer
from aligner.train.validation import validation_batches

EMA = replace(CFG, ema=0.9)


def test_warmed_decay_formula():
    assert warmed_decay(0.999, 0) == pytest.approx(0.1)
    assert warmed_decay(0.999, 90) == pytest.approx(91 / 100)
    assert warmed_decay(0.9, 1000) == 0.9  # capped by the decay
    assert all(warmed_decay(0.99, s) <= warmed_decay(0.99, s + 1) for s in range(500))


def test_update_follows_the_recurrence():
    torch.manual_seed(0)
    model = TinyModel(hidden=4, dropout=0.0)
    average = WeightAverage(model, decay=0.8)
    expected = {k: v.clone() for k, v in model.state_dict().items()}
    for step in range(25):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        average.update(model, step)
        d = min(0.8, (1 + step) / (10 + step))
        for k, v in model.state_dict().items():
            expected[k] = d * expected[k] + (1 - d) * v
    for k, v in average.state_dict().items():
        torch.testing.assert_close(v, expected[k], rtol=1e-5, atol=1e-6)
    assert not any(p.requires_grad for p in average.module.parameters())


def test_decay_out_of_range_is_refused():
    with pytest.raises(ConfigError, match="train.ema"):
        TrainConfig(ema=1.0)
    with pytest.raises(ConfigError, match="train.ema"):
        TrainConfig(ema=0)
    with pytest.raises(ValueError, match="train.ema"):
        WeightAverage(TinyModel(), 1.5)


def test_the_average_leaves_training_unchanged(tmp_path):
    plain = make_trainer(tmp_path / "plain")
    plain.fit()
    averaged = make_trainer(tmp_path / "ema", EMA)
    averaged.fit()
    for k, v in plain.task.model.state_dict().items():
        assert torch.equal(v, averaged.task.model.state_dict()[k]), k
    last = load_checkpoint(tmp_path / "ema" / "checkpoints" / "ckpt-00000014.pt")
    trained, kept = last["raw_model"], last["model"]
    for k, v in averaged.task.model.state_dict().items():
        assert torch.equal(trained[k], v), k
    assert any(not torch.equal(kept[k], trained[k]) for k in kept)  # the average, not the last
    for k, v in averaged.average.state_dict().items():
        assert torch.equal(kept[k], v), k


def test_validation_and_best_are_the_average(tmp_path):
    trainer = make_trainer(tmp_path, EMA)
    trainer.fit()
    best = load_checkpoint(tmp_path / "checkpoints" / "best.pt")
    model = TinyModel()
    model.load_state_dict(best["model"])
    with torch.no_grad():
        loss = trainer.task.validate(
            model.eval(), validation_batches(trainer.task, EMA, torch.device("cpu")), 0, None
        )["loss"]
    assert loss == pytest.approx(trainer.best_loss)


def test_resume_with_the_average_is_exact(tmp_path):
    straight = make_trainer(tmp_path / "a", EMA)
    straight.fit()
    torch.manual_seed(0)
    crashing = Trainer(CrashingTask(crash_step=9), EMA, tmp_path / "b")
    with pytest.raises(Crash):
        crashing.fit()
    resumed = make_trainer(tmp_path / "b", EMA, init_seed=123)
    assert resumed.resume().name == "ckpt-00000008.pt"
    resumed.fit()
    for mine, theirs in (
        (straight.task.model, resumed.task.model),
        (straight.average.module, resumed.average.module),
    ):
        for k, v in mine.state_dict().items():
            assert torch.equal(v, theirs.state_dict()[k]), k


def test_a_run_without_average_resumes_with_one(tmp_path):
    plain = make_trainer(tmp_path, replace(CFG, max_steps=8))
    plain.fit()
    resumed = make_trainer(tmp_path, replace(EMA, max_steps=8), init_seed=5)
    resumed.resume()
    for k, v in plain.task.model.state_dict().items():
        assert torch.equal(resumed.average.state_dict()[k], v), k
        assert torch.equal(resumed.task.model.state_dict()[k], v), k
