"""The VC task: parallel mel -> mel, encoder time reduction, per-voice statistics."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import scipy.fft
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


def _eval_vc():
    import importlib.util

    path = Path(__file__).parents[2] / "scripts" / "eval_vc.py"
    spec = importlib.util.spec_from_file_location("eval_vc", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mcd_by_hand() -> None:
    ev = _eval_vc()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20, 16))
    assert ev.mcd_dtw(a, a) == pytest.approx(0.0, abs=1e-9)
    # a constant log-gain lives in c0 only, which MCD excludes
    assert ev.mcd_dtw(a, a + 3.0) == pytest.approx(0.0, abs=1e-9)
    # DTW absorbs a time stretch: every frame repeated twice
    assert ev.mcd_dtw(np.repeat(a, 2, axis=0), a) == pytest.approx(0.0, abs=1e-9)
    # shifting cepstral coefficient c1 by d on every frame gives 10 sqrt(2) / ln 10 * |d|
    basis = scipy.fft.idct(np.eye(16)[1], norm="ortho")
    expected = 10 * np.sqrt(2) / np.log(10) * 0.5
    assert ev.mcd_dtw(a, a + 0.5 * basis) == pytest.approx(expected, rel=1e-6)


def test_eval_vc_script_runs_on_a_checkpoint(corpus: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    task = build_task(_cfg(), corpus)
    ckpt = tmp_path / "vc.pt"
    torch.save(
        {"model": task.model.state_dict(), "step": 0, "config": {}, "symbols": task.symbols}, ckpt
    )
    args = [
        "--checkpoint",
        str(ckpt),
        "--data",
        str(corpus),
        "--max-length-ratio",
        "1.5",
        "--verbose",
    ]
    result = CliRunner().invoke(_eval_vc().main, args)
    assert result.exit_code == 0, result.output
    assert "MCD converted vs target" in result.output and "u4\t" in result.output
    missing = CliRunner().invoke(
        _eval_vc().main, ["--checkpoint", str(ckpt), "--data", str(tmp_path)]
    )
    assert missing.exit_code == 1 and "valid.jsonl does not exist" in missing.output


def test_score_vc_reads_convert_output_and_ranks_the_closer_voice(tmp_path):
    """`aligner score --task vc` on a convert-style manifest: a 'converted' file equal to the
    target scores 0 dB, and the source (another tone) scores more."""
    import json

    import soundfile as sf
    from click.testing import CliRunner

    from aligner.cli import main

    sr = 22050
    t = np.arange(int(0.5 * sr)) / sr
    sf.write(tmp_path / "tgt.wav", 0.3 * np.sin(2 * np.pi * 220 * t), sr)
    sf.write(tmp_path / "src.wav", 0.3 * np.sin(2 * np.pi * 120 * t) ** 3, sr)
    sf.write(tmp_path / "conv.wav", 0.3 * np.sin(2 * np.pi * 220 * t), sr)
    item = {"id": "u1", "audio": "conv.wav", "source_audio": "src.wav", "target_audio": "tgt.wav"}
    (tmp_path / "manifest.jsonl").write_text(json.dumps(item) + "\n")
    result = CliRunner().invoke(
        main, ["score", "--task", "vc", "--hyp", str(tmp_path / "manifest.jsonl"), "--json"]
    )
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["items"] == 1 and scores["mcd_converted"] == pytest.approx(0.0, abs=1e-6)
    assert scores["mcd_source"] > 1.0 and scores["closer_than_source"] == 1.0
    (tmp_path / "bad.jsonl").write_text(json.dumps({"id": "x", "audio": "conv.wav"}) + "\n")
    bad = CliRunner().invoke(main, ["score", "--task", "vc", "--hyp", str(tmp_path / "bad.jsonl")])
    assert bad.exit_code == 1 and "items without 'source_audio': x" in bad.output
