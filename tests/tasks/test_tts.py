"""The TTS task: build from a recipe, loss, validation figures, checkpoint symbols."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from aligner.config import ConfigError, ExperimentConfig
from aligner.models.tacotron import Tacotron
from aligner.tasks import build_task
from aligner.train.tensorboard import Logger

from .speech_corpus import MEL, TINY_MODEL, make_corpus


def _cfg(**model) -> ExperimentConfig:
    section = copy.deepcopy(TINY_MODEL)
    section["encoder"] = {"embed_dim": 16, "out_dim": 16}
    section.update(model)
    data = {"mel": MEL, "log": {"plot_items": 2, "griffin_lim_iters": 2}}
    return ExperimentConfig.from_dict({"task": "tts", "data": data, "model": section})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("tts"))


def test_build_loss_and_backward(corpus: Path) -> None:
    cfg = _cfg(loss={"guided": {"weight": 2.0, "mode": "linear", "until": 10}})
    task = build_task(cfg, corpus)
    assert len(task.train_set) == 4 and len(task.valid_set) == 2
    batch = task.collate([task.train_set[i] for i in range(3)])
    # targets are normalized with the training statistics
    mels = torch.cat([task.train_set[i]["mel"] for i in range(4)])
    torch.testing.assert_close(mels.mean(0), torch.zeros(16), atol=1e-4, rtol=0)
    loss, parts = task.loss(task.model, batch, step=5)
    loss.backward()
    assert torch.isfinite(loss) and parts["guided_weight"] == pytest.approx(1.0)
    _, later = task.loss(task.model, batch, step=10)
    assert "guided" not in later


def test_symbols_rebuild_the_model(corpus: Path) -> None:
    task = build_task(_cfg(), corpus)
    s = task.symbols
    assert s["task"] == "tts" and s["mel"]["n_mels"] == 16 and len(s["stats"]["mean"]) == 16
    assert s["model"]["n_symbols"] == len(task.table)
    model = Tacotron.from_symbols(s, task.model.state_dict()).eval()
    task.model.eval()
    batch = task.collate([task.valid_set[0]])
    for m in (model, task.model):
        m.decoder.prenet.always_dropout = False
    a = task.forward(model, batch)
    b = task.forward(task.model, batch)
    torch.testing.assert_close(a.mel_post, b.mel_post)


def test_validate_logs_fixed_items(corpus: Path, tmp_path: Path) -> None:
    from aligner.train.evolution import image_tags

    task = build_task(_cfg(), corpus)
    task.model.eval()
    batches = [task.collate([task.valid_set[i] for i in range(2)])]
    logger = Logger(tmp_path / "tb")
    metrics = task.validate(task.model, batches, step=3, logger=logger)
    logger.close()
    assert metrics["loss"] > 0 and 0 < metrics["focus_rate"] <= 1
    assert {"diagonality", "entropy", "skipped", "repeated", "items_with_skips"} <= set(metrics)
    tags = image_tags(tmp_path / "tb")
    assert "alignment/u4" in tags and "mel/u5/predicted" in tags and "mel/u4/target" in tags


def test_recipe_errors(corpus: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="model.decoder.attn_dimm"):
        build_task(_cfg(decoder={"attn_dimm": 3}), corpus)
    with pytest.raises(ConfigError, match="model.n_mels"):
        build_task(_cfg(n_mels=80), corpus)
    with pytest.raises(FileNotFoundError, match="train manifest"):
        build_task(_cfg(), tmp_path)
