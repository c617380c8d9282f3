"""egs/espeak/tts1 --model fastpitch: the alignment model's durations, then a FastPitch
trained on them, its synthesis, its timing of the test split and the score (with the
recording stand-in for the `aligner` command of tests/test_egs.py)."""

from __future__ import annotations

import json
import subprocess

import pytest
import soundfile as sf
import yaml
from test_egs import SCRIPTS, fake_env, tiny_training_env


def run(tmp, env, *args: str) -> subprocess.CompletedProcess:
    cmd = ["bash", str(SCRIPTS["espeak_tts"]), "--data", "data", *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)


def test_espeak_tts_trains_fastpitch_on_the_durations(tmp_path):
    env = fake_env(tmp_path)
    r = run(tmp_path, env, "--model", "fastpitch")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert "recipes/align/aligner.yaml --data data --out exp/aligner" in lines[1]
    assert lines[2].startswith("align --checkpoint exp/aligner --in data/train.jsonl")
    assert "recipes/tts/fastpitch_small.yaml --data data --out exp/fastpitch_small" in lines[4]
    assert lines[5].startswith("synthesize --checkpoint exp/fastpitch_small")
    assert lines[6].startswith("align --checkpoint exp/fastpitch_small --in data/test.jsonl")
    assert lines[7].startswith("score-alignment --reference data/test.jsonl")
    bad = run(tmp_path, env, "--model", "fastpitch", "--guide", "diagonal")
    assert bad.returncode == 2 and "learns from durations" in bad.stderr
    bad = run(tmp_path, env, "--model", "glowtts")
    assert bad.returncode == 2 and "use tacotron or fastpitch" in bad.stderr


@pytest.mark.slow
def test_espeak_fastpitch_end_to_end(tmp_path):
    """The real egs/espeak/tts1 --model fastpitch on 12 utterances: the alignment model, its
    durations of train and valid, a FastPitch trained on them (WORLD pitch of eSpeak NG's
    audio), synthesis, its timing of the test split and the score."""
    env = tiny_training_env()
    r = run(tmp_path, env, "--utterances", "12", "--model", "fastpitch")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    exp = tmp_path / "exp/fastpitch_small"
    cfg = yaml.safe_load((exp / "config.yaml").read_text())
    assert cfg["family"] == "fastpitch" and cfg["data"]["durations"] == "durations"
    assert sf.info(exp / "synth/sentences.wav").frames > 0
    score = json.loads((exp / "score/alignment.json").read_text())
    assert score, "score-alignment wrote nothing"
