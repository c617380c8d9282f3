"""The VC task: parallel mel -> mel, encoder time reduction, per-voice statistics."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from aligner.config import ConfigError, ExperimentConfig
from aligner.models.encoders import MelEncoder
from aligner.models.tacotron import Tacotron
from aligner.tasks import build_task

from .speech_corpus import MEL, TINY_MODEL, make_corpus


def _cfg(**encoder) -> ExperimentConfig:
    section = copy.deepcopy(TINY_MODEL)
    section["encoder"] = {"prenet_dims": [16], "conv_dim": 16, "out_dim": 16, **encoder}
    data = {"mel": MEL, "log": {"plot_items": 1, "audio_items": 0}}
    return ExperimentConfig.from_dict({"task": "vc", "data": data, "model": section})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("vc"), parallel=True)


def test_vc_task_trains_with_reduced_memory(corpus: Path) -> None:
    task = build_task(_cfg(reduction=2, reduce_mode="pool"), corpus)
    assert isinstance(task.model.encoder, MelEncoder)
    batch = task.collate([task.train_set[i] for i in range(4)])
    out = task.forward(task.model, batch)
    expected = (batch["src_lengths"] + 1) // 2
    assert out.enc_mask.sum(1).tolist() == expected.tolist()
    assert out.alignments.shape[-1] == int(expected.max())
    loss, _ = task.loss(task.model, batch, 0)
    loss.backward()
    assert torch.isfinite(loss)
    task.model.eval()
    metrics = task.validate(
        task.model, [task.collate([task.valid_set[0], task.valid_set[1]])], 1, None
    )
    assert metrics["loss"] > 0 and 0 < metrics["focus_rate"] <= 1


def test_vc_statistics_per_voice(corpus: Path) -> None:
    task = build_task(_cfg(), corpus)
    src = torch.cat([task.train_set[i]["src_mel"] for i in range(4)])
    tgt = torch.cat([task.train_set[i]["mel"] for i in range(4)])
    for mel in (src, tgt):  # each side normalized by its own voice's statistics
        torch.testing.assert_close(mel.mean(0), torch.zeros(16), atol=1e-4, rtol=0)
    s = task.symbols
    assert s["task"] == "vc" and s["stats_src"] != s["stats"]
    assert s["model"]["encoder"]["kind"] == "mel"
    assert isinstance(Tacotron.from_symbols(s).encoder, MelEncoder)


def test_vc_rejects_text_encoder(corpus: Path) -> None:
    with pytest.raises(ConfigError, match="encoder.kind"):
        build_task(_cfg(kind="text"), corpus)
