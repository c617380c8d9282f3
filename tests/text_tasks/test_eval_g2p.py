"""scripts/eval_g2p.py: scoring of a checkpoint and the g2p_en comparison."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from aligner.config import ExperimentConfig
from aligner.tasks.text import build

from .test_text_cli import save_checkpoint
from .test_text_task import TINY

ROOT = Path(__file__).resolve().parents[2]


def load_script():
    spec = importlib.util.spec_from_file_location("eval_g2p", ROOT / "scripts/eval_g2p.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_references_group_pronunciations_by_word(g2p_dir):
    refs = load_script().references(g2p_dir / "test.jsonl", lowercase=True)
    first = next(iter(refs))
    assert len(refs[first]) == 2 and refs[first][1] == ["B", *refs[first][0]]
    assert sum(len(v) for v in refs.values()) == 13 and len(refs) == 12


def test_eval_prints_both_systems(g2p_dir, tmp_path, capsys):
    pytest.importorskip("g2p_en")
    cfg = ExperimentConfig(task="g2p", model=dict(TINY), data={"lowercase": True})
    ckpt = save_checkpoint(build(cfg, g2p_dir), tmp_path / "m.pt", cfg)
    load_script().main(["--checkpoint", str(ckpt), "--data", str(g2p_dir), "--beam", "2"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("12 words")
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in out[3:]}
    assert set(rows) == {"aligner", "g2p_en"}
    # g2p_en's real model gets the synthetic 'pronunciations' wrong, but scores are sane
    for per, wer, per_ns, wer_ns, speed in rows.values():
        assert 0 <= per and 0 <= wer <= 100 and speed > 0
        assert 0 <= per_ns and wer_ns <= wer  # a word right with stress is right without


def test_eval_as_a_script_makes_no_nltk_download_attempt(g2p_dir, tmp_path):
    """g2p_en downloads NLTK's tagger at import unless eval_g2p has disabled that first:
    offline, the attempt prints `[nltk_data] Error loading ...` lines (a fresh process,
    since importorskip in the test above would import g2p_en before the script)."""
    pytest.importorskip("g2p_en")
    cfg = ExperimentConfig(task="g2p", model=dict(TINY), data={"lowercase": True})
    ckpt = save_checkpoint(build(cfg, g2p_dir), tmp_path / "m.pt", cfg)
    script = ROOT / "scripts/eval_g2p.py"
    args = ["--checkpoint", str(ckpt), "--data", str(g2p_dir), "--beam", "2", "--limit", "3"]
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "nltk_data" not in done.stderr
    assert done.stdout.splitlines()[-1].startswith("g2p_en")


def test_strip_stress():
    from aligner.text.metrics import strip_stress

    assert strip_stress(["HH", "AH0", "L", "OW1"]) == ["HH", "AH", "L", "OW"]


def test_eval_of_an_ensemble_of_copies_equals_the_single_model(g2p_dir, tmp_path, capsys):
    cfg = ExperimentConfig(task="g2p", model=dict(TINY), data={"lowercase": True})
    ckpt = str(save_checkpoint(build(cfg, g2p_dir), tmp_path / "m.pt", cfg))
    script = load_script()
    common = ["--data", str(g2p_dir), "--beam", "3", "--no-g2p-en"]
    script.main(["--checkpoint", ckpt, *common])
    single = capsys.readouterr().out.splitlines()[3].split()[:5]
    script.main(["--checkpoint", ckpt, ckpt, *common])
    ensemble = capsys.readouterr().out.splitlines()[3].split()[:5]
    assert single[0] == "aligner" and ensemble == single  # PER/WER equal, speed excluded


@pytest.mark.parametrize("option", [["--batch", "0"], ["--beam", "0"]])
def test_eval_refuses_a_batch_or_beam_below_one(option, g2p_dir):
    with pytest.raises(SystemExit, match="need --batch >= 1 and --beam >= 1"):
        load_script().main(["--checkpoint", "m.pt", "--data", str(g2p_dir), *option])
