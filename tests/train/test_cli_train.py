"""`aligner train` / `aligner evolution` on the tiny task: refusal, resume, SIGKILL, GIF."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from click.testing import CliRunner
from PIL import Image

from aligner.checkpoint import load_checkpoint
from aligner.cli import main
from aligner.train.tensorboard import Logger

HERE = Path(__file__).parent
TRAIN = {
    "batch_size": 8,
    "max_steps": 6,
    "lr": 0.05,
    "warmup_steps": 2,
    "eval_every": 3,
    "checkpoint_every": 3,
    "log_every": 2,
    "progress": False,
    "seed": 3,
}


@pytest.fixture
def recipe(tiny_recipe):
    return tiny_recipe(TRAIN)


def run(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_train_writes_checkpoints_and_refuses_to_overwrite(recipe, tmp_path):
    exp = tmp_path / "exp"
    res = run("train", recipe, "--data", tmp_path, "--out", exp, "--set", "train.max_steps=3")
    assert res.exit_code == 0, res.output
    assert "stopped at step 3" in res.output
    assert (
        load_checkpoint(exp / "checkpoints" / "ckpt-00000003.pt")["config"]["task"] == "tiny_task"
    )
    assert yaml.safe_load((exp / "config.yaml").read_text())["train"]["max_steps"] == 3

    res = run("train", recipe, "--data", tmp_path, "--out", exp)
    assert res.exit_code == 1 and "already holds checkpoints; pass --resume" in res.output
    assert "Traceback" not in res.output

    res = run("train", recipe, "--data", tmp_path, "--out", exp, "--resume")
    assert res.exit_code == 0 and "resumed from" in res.output and "step 3" in res.output
    assert load_checkpoint(exp / "checkpoints" / "ckpt-00000006.pt")["step"] == 6

    res = run(
        "train", recipe, "--data", tmp_path, "--out", exp, "--restart", "--set", "train.max_steps=2"
    )
    assert res.exit_code == 0
    assert sorted(p.name for p in (exp / "checkpoints").glob("ckpt-*")) == ["ckpt-00000002.pt"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--set", "train.lrate=1"], "unknown key train.lrate"),
        (
            ["--set", "task=nosuchtask"],
            "unknown task 'nosuchtask'; choose one of tts, vc, align, vocoder, g2p, nmt, recognize",
        ),
        (
            ["--set", "model.nan_steps=[0, 1, 2]", "--set", "train.max_nonfinite=3"],
            "loss was NaN/inf for 3 steps in a row (up to step 3); stopped with checkpoint",
        ),
        (["--set", "model.n_train=0"], "the training or validation set is empty"),
    ],
)
def test_train_errors_are_one_line(recipe, tmp_path, extra, message):
    res = run("train", recipe, "--data", tmp_path, "--out", tmp_path / "e", *extra)
    assert res.exit_code == 1 and message in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_missing_recipe(tmp_path):
    res = run("train", tmp_path / "none.yaml", "--data", tmp_path, "--out", tmp_path / "e")
    assert res.exit_code == 1 and "does not exist" in res.output


@pytest.mark.slow
def test_sigkilled_run_resumes_to_the_same_result(recipe, tmp_path):
    """Kill `aligner train` mid-run with SIGKILL; `--resume` ends where a straight run does."""
    exp = tmp_path / "killed"
    args = ["train", str(recipe), "--data", str(tmp_path), "--out", str(exp)]
    sets = [
        "--set",
        "train.max_steps=40",
        "--set",
        "train.checkpoint_every=2",
        "--set",
        "train.eval_every=100",
        "--set",
        "model.sleep=0.05",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    cmd = [sys.executable, "-c", "from aligner.cli import main; main()", *args, *sets]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ckpts = exp / "checkpoints"
    deadline = time.monotonic() + 120
    while len(list(ckpts.glob("ckpt-*.pt"))) < 2 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read().decode()
        time.sleep(0.02)
    time.sleep(0.07)  # somewhere in a step or a checkpoint write
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = {int(p.stem.split("-")[1]) for p in ckpts.glob("ckpt-*.pt")}
    assert done and max(done) < 40
    for p in ckpts.glob("ckpt-*.pt"):
        load_checkpoint(p)  # none corrupt

    resumed = subprocess.run(
        [*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from" in resumed.stdout
    final = load_checkpoint(ckpts / "ckpt-00000040.pt")

    straight = tmp_path / "straight"
    res = run(*args[:-1], straight, *sets)
    assert res.exit_code == 0, res.output
    reference = load_checkpoint(straight / "checkpoints" / "ckpt-00000040.pt")
    for k, v in reference["model"].items():
        assert torch.equal(v, final["model"][k]), k


def fake_run(log_dir: Path) -> None:
    logger = Logger(log_dir)
    for step in (0, 50, 100, 150):
        w = np.zeros((12, 6), dtype=np.float32)
        w[np.arange(12), np.minimum(np.arange(12) * step // 300, 5)] = 1.0
        logger.alignment("valid/alignment/item0", w, step)
        logger.mel("valid/mel/item0", np.random.rand(12, 8), step)
    logger.alignment("valid/alignment/item0", np.eye(12, 6), 100)  # a replayed step
    logger.close()


def test_evolution_gif_and_strip(tmp_path):
    exp = tmp_path / "exp"
    fake_run(exp / "tb")
    res = run("evolution", exp, "--strip-frames", "3")
    assert res.exit_code == 0, res.output
    assert "valid/alignment/item0: 4 frames (steps 0..150)" in res.output
    gif = Image.open(exp / "evolution.gif")
    assert gif.n_frames == 4
    frame = Image.open(exp / "evolution.gif").convert("RGB")
    strip = Image.open(exp / "evolution.png")
    assert strip.height == frame.height and strip.width == 3 * frame.width + 2 * 4
    res = run("evolution", exp)
    assert res.exit_code == 1 and "exists; pass --force" in res.output
    out = tmp_path / "o" / "evo.gif"
    assert run("evolution", exp, "--tag", "valid/mel/item0", "--out", out).exit_code == 0
    assert (tmp_path / "o" / "evo.png").exists()


def test_evolution_frames_are_the_logged_images(tmp_path):
    from aligner.train.evolution import read_images

    fake_run(tmp_path)
    frames = read_images(tmp_path, "valid/alignment/item0")
    assert [s for s, _ in frames] == [0, 50, 100, 150]
    images = [np.asarray(im) for _, im in frames]
    assert images[0].dtype == np.uint8 and images[0].ndim == 3
    assert not np.array_equal(images[0], images[3])  # the curve moved


def test_evolution_errors(tmp_path):
    res = run("evolution", tmp_path)
    assert res.exit_code == 1 and "no TensorBoard event files" in res.output
    fake_run(tmp_path / "tb")
    res = run("evolution", tmp_path, "--tag", "valid/alignment/nope")
    assert res.exit_code == 1
    assert "logged image tags: valid/alignment/item0, valid/mel/item0" in res.output
