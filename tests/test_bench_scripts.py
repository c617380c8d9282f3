"""scripts/bench_train_step.py runs a recipe's training step and reports its time."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_train_step_times_a_recipe(capsys):
    recipe = ROOT / "recipes/tts/tacotron_dca_small.yaml"
    load("bench_train_step").main(
        [str(recipe), "--batch", "2", "--tokens", "6", "--frames", "16", "--repeats", "2"]
    )
    line = capsys.readouterr().out.strip()
    assert line.startswith("tacotron_dca_small.yaml: batch 2, 6 tokens, 16 frames")
    assert float(line.split("median ")[1].split(" s")[0]) > 0


def test_bench_train_step_refuses_a_non_tts_recipe():
    with pytest.raises(SystemExit, match="a tts recipe is needed"):
        load("bench_train_step").main([str(ROOT / "recipes/g2p/bigru_bahdanau_small.yaml")])
