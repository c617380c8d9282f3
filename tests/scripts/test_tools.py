"""Every script in scripts/ is a tool a user runs: it answers `--help`, and the README, the
egs README or a results page names it; the two benchmarks without a test of their own run
on tiny sizes and check what they print."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = sorted(p for p in (ROOT / "scripts").glob("*.py") if "__main__" in p.read_text())
DOCS = [ROOT / "README.md", ROOT / "egs/README.md", *ROOT.glob("docs/**/*.md")]
DOCS += list(ROOT.glob("egs/*/*/RESULTS.md"))


def run(script: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "scripts" / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda p: p.name)
def test_each_tool_answers_help(tool):
    done = run(tool.name, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.lower().startswith("usage:") and "--help" in done.stdout


def test_each_tool_is_named_in_the_documents():
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)
    unnamed = [tool.name for tool in TOOLS if f"scripts/{tool.name}" not in text]
    assert not unnamed, f"scripts no document names: {unnamed}"


def test_every_module_in_scripts_is_a_tool_or_imported_by_one():
    helpers = {p.stem for p in (ROOT / "scripts").glob("*.py")} - {t.stem for t in TOOLS}
    sources = "\n".join(t.read_text() for t in TOOLS)
    assert helpers and all(f"import {h}" in sources or f"from {h} " in sources for h in helpers)


def test_bench_attention_times_every_mechanism_against_its_naive_twin():
    from aligner.attention import available

    done = run(
        "bench_attention.py", "--batch", "2", "--length", "8", "--dim", "16", "--repeat", "2"
    )
    assert done.returncode == 0, done.stderr  # the naive twins' outputs are checked equal inside
    rows = [line.split() for line in done.stdout.splitlines()[2:]]
    assert [r[0] for r in rows] == list(available())
    for row in rows:  # ms/step, naive ms (3 decimals), speed-up = naive / ms (2 decimals)
        ms, naive, ratio = float(row[1]), float(row[2]), float(row[3].rstrip("x"))
        assert ms > 0 and naive > 0
        rounding = naive / ms * (0.0005 / ms + 0.0005 / naive) + 0.005
        assert ratio == pytest.approx(naive / ms, abs=rounding)


def test_bench_beam_finds_the_same_hypotheses_batched_and_alone():
    args = ("--batch", "3", "--length", "5", "--long-src", "6", "--long-ratio", "2", "--beam", "2")
    done = run("bench_beam.py", *args)
    assert done.returncode == 0, done.stderr
    assert "same hypotheses: True" in done.stdout
    assert "3 sources of 6 tokens: " in done.stdout
