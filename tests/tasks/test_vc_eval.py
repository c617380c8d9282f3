"""VC evaluation: `aligner score --task vc` scores converted audio against the target (MCD,
F0, duration); bad input is one line. The frame-wise baseline and scripts/eval_vc.py:
tests/scripts/test_vc_baseline.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

pytest.importorskip("pyworld")
pytest.importorskip("pysptk")


def test_score_vc_reads_convert_output_and_ranks_the_closer_voice(tmp_path):
    """`aligner score --task vc` on a convert-style manifest: a 'converted' file equal to the
    target scores 0 dB, the source (another pitch and timbre) more."""
    from aligner.cli import main

    sr = 16000
    t = np.arange(int(0.5 * sr)) / sr
    tgt = sum(np.sin(2 * np.pi * k * 220 * t) / k for k in range(1, 8))
    sf.write(tmp_path / "tgt.wav", 0.1 * tgt, sr)
    sf.write(tmp_path / "conv.wav", 0.1 * tgt, sr)
    sf.write(tmp_path / "src.wav", 0.3 * np.sin(2 * np.pi * 120 * t) ** 3, sr)
    item = {"id": "u1", "audio": "conv.wav", "source_audio": "src.wav", "target_audio": "tgt.wav"}
    (tmp_path / "manifest.jsonl").write_text(json.dumps(item) + "\n")
    result = CliRunner().invoke(
        main, ["score", "--task", "vc", "--hyp", str(tmp_path / "manifest.jsonl"), "--json"]
    )
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)
    assert scores["items"] == 1 and scores["mcd_converted"] == pytest.approx(0.0, abs=1e-6)
    assert scores["f0_rmse_hz_converted"] == pytest.approx(0.0, abs=1e-6)
    assert scores["duration_ratio_converted"] == pytest.approx(1.0)
    assert scores["mcd_source"] > 1.0 and scores["closer_than_source"] == 1.0
    assert scores["f0_rmse_hz_source"] > 50
    (tmp_path / "bad.jsonl").write_text(json.dumps({"id": "x", "audio": "conv.wav"}) + "\n")
    bad = CliRunner().invoke(main, ["score", "--task", "vc", "--hyp", str(tmp_path / "bad.jsonl")])
    assert bad.exit_code == 1 and "items without 'source_audio': x" in bad.output
    item["target_audio"] = "missing.wav"
    (tmp_path / "gone.jsonl").write_text(json.dumps(item) + "\n")
    gone = CliRunner().invoke(
        main, ["score", "--task", "vc", "--hyp", str(tmp_path / "gone.jsonl")]
    )
    assert gone.exit_code == 1 and "item u1" in gone.output and "missing.wav" in gone.output
    assert "Traceback" not in gone.output
