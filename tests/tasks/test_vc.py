"""The VC task: parallel mel -> mel, encoder time reduction, per-voice statistics."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from aligner.config import ConfigError, ExperimentConfig
from aligner.models.tacotron.encoders import MelEncoder
from aligner.models.tacotron.model import Tacotron
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


def test_vc_truth_curve_scores_the_mapping_at_both_voices_boundaries(corpus: Path) -> None:
    """valid/mapping_ms: a hard teacher-forced alignment whose frame durations per encoder
    position are known gives the errors `mapping_errors` computes from those durations."""
    from types import SimpleNamespace

    from aligner.alignment.intervals import Timings, mapping_errors
    from aligner.tasks.truth import TruthErrors

    task = build_task(_cfg(reduction=2, reduce_mode="pool"), corpus)
    batch = task.collate([task.valid_set[0]])
    r, frames = task.r, int(batch["mel_lengths"][0])
    n = int((batch["src_lengths"][0] + 1) // 2)
    # target frames per encoder position: multiples of r, ending on the last position
    steps = -(-frames // r)
    per = [steps // n] * n
    per[-1] += steps - sum(per)
    durations = [p * r for p in per]
    durations[-1] -= sum(durations) - frames
    weights = torch.zeros(1, steps, n)
    position = torch.repeat_interleave(torch.arange(n), torch.tensor(per))
    weights[0, torch.arange(steps), position] = 1.0
    sec = task.mel_cfg.hop_length / task.mel_cfg.sample_rate
    src_len, tgt_len = n * 2 * sec, frames * sec
    source = Timings.from_dict(
        {
            "duration": src_len,
            "words": [[0.0, src_len, "ab"]],
            "phones": [[0.0, src_len / 2, "a"], [src_len / 2, src_len, "b"]],
        }
    )
    target = Timings.from_dict(
        {
            "duration": tgt_len,
            "words": [[0.0, tgt_len, "ab"]],
            "phones": [[0.0, tgt_len / 3, "a"], [tgt_len / 3, tgt_len, "b"]],
        }
    )
    uid = str(batch["ids"][0])
    task.pairs = {uid: (source, target)}
    truth = TruthErrors()
    out = SimpleNamespace(alignments=weights, enc_mask=torch.ones(1, n, dtype=torch.bool))
    task.truth(out, batch, truth)
    expected = mapping_errors(durations, 2 * sec, sec, source, target, "phones")
    means = truth.means()
    assert means["mapping_ms"] == pytest.approx(1000 * sum(map(abs, expected)) / len(expected))
    assert means["mapping_bias_ms"] == pytest.approx(1000 * sum(expected) / len(expected))
    assert "word_boundary_ms" not in means
    task.pairs = {}  # an item without both voices' timings adds nothing
    assert TruthErrors().means() == {} and task.truth(out, batch, TruthErrors()) is None
