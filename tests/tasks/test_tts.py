"""The TTS task: build from a recipe, loss, validation figures, checkpoint symbols."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from aligner.config import ConfigError, ExperimentConfig
from aligner.models.tacotron.model import Tacotron
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


def test_validation_measures_word_boundaries_against_the_reference(corpus: Path) -> None:
    """valid/word_boundary_ms: within half a frame (5 ms) for an alignment that follows the
    characters' known durations; lagging one character (40 ms) behind moves every boundary
    but the first start and the last end by 40 ms."""
    from types import SimpleNamespace

    from aligner.tasks.truth import TruthErrors

    task = build_task(_cfg(), corpus)
    batch = task.collate([task.valid_set[0]])  # "cede a dab": 10 characters, 4 frames each
    n, frames = int(batch["token_lengths"][0]), int(batch["mel_lengths"][0])
    assert n == 11 and frames == 41  # + </s>; center=True gives one more frame

    def errors(lag: int) -> float:
        steps = -(-frames // 2)
        weights = torch.zeros(1, steps, n)
        for s in range(steps):  # r = 2: step s covers frames 2s, 2s+1; char c frames 4c..4c+3
            weights[0, s, min(max(s // 2 - lag, 0), n - 1)] = 1.0
        truth = TruthErrors()
        task.truth(SimpleNamespace(alignments=weights), batch, truth)
        return truth.means()["word_boundary_ms"]

    assert errors(0) <= 5.0 + 1e-6
    assert 4 * 35 / 6 <= errors(1) <= (4 * 45 + 10) / 6
    task.model.eval()
    metrics = task.validate(task.model, [batch], step=1, logger=None)
    assert metrics["word_boundary_ms"] >= 0 and "phone_boundary_ms" not in metrics


def test_skips_count_the_tokens_of_sounds_only(corpus: Path) -> None:
    """A word separator, punctuation and </s> may rightly get no frames (a Tacotron guided
    by an alignment model's durations passes separators by): they are no skip."""
    task = build_task(_cfg(), corpus)
    batch = task.collate([task.train_set[0]])  # "a cab" + </s>
    tokens = task.table.decode(batch["tokens"][0].tolist())
    required = task.required_positions(batch)[0].tolist()
    assert [t for t, r in zip(tokens, required) if not r] == [" ", "</s>"]
    assert all(required[i] for i, t in enumerate(tokens) if t not in (" ", "</s>"))
