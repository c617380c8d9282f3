"""Nothing lost: SIGTERM saves a checkpoint, one run per folder, a full disk, a bad option
or a foreign recipe deletes and overwrites nothing."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from test_cli_train import HERE, TRAIN, run

from aligner.checkpoint import load_checkpoint
from aligner.train.manager import CheckpointManager
from aligner.train.safety import LOCK_NAME, RunLock


@pytest.fixture
def recipe(tiny_recipe):
    return tiny_recipe(TRAIN)


CLI = [sys.executable, "-c", "from aligner.cli import main; main()"]


def _env() -> dict[str, str]:
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1"}


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[0]
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_sigterm_saves_a_checkpoint_a_second_run_is_refused_and_resume_continues(recipe, tmp_path):
    exp = tmp_path / "exp"
    args = ["train", str(recipe), "--data", str(tmp_path), "--out", str(exp)]
    sets = [
        "--set",
        "train.max_steps=100000",
        "--set",
        "train.checkpoint_every=100000",
        "--set",
        "train.eval_every=100000",
        "--set",
        "model.sleep=0.01",
    ]
    proc = subprocess.Popen(
        [*CLI, *args, *sets],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_for(exp / "tb", proc)  # training has started
        time.sleep(0.5)
        # a second run on the same folder refuses, naming the first; the first goes on
        second = run(*args)
        assert second.exit_code == 1, second.output
        assert f"is in use by another `aligner train` (process {proc.pid}" in second.output
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, out
    assert "interrupted by SIGTERM at step" in out and "saved checkpoint" in out
    assert "Traceback" not in out
    (ckpt,) = (exp / "checkpoints").glob("ckpt-*.pt")
    step = load_checkpoint(ckpt)["step"]
    assert step > 0 and str(ckpt) in out
    assert not (exp / LOCK_NAME).exists()

    res = run(*args, "--resume", "--set", f"train.max_steps={step + 2}")
    assert res.exit_code == 0, res.output
    assert f"resumed from {ckpt} at step {step}" in res.output
    assert load_checkpoint(exp / "checkpoints" / f"ckpt-{step + 2:08d}.pt")["step"] == step + 2


def test_a_stale_lock_is_taken_over_and_cleared(recipe, tmp_path):
    exp = tmp_path / "exp"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    exp.mkdir()
    (exp / LOCK_NAME).write_text(f"{gone.pid} {socket.gethostname()} 2020-01-01T00:00:00\n")
    res = run("train", recipe, "--data", tmp_path, "--out", exp, "--set", "train.max_steps=3")
    assert res.exit_code == 0, res.output
    assert not (exp / LOCK_NAME).exists()


def test_lock_names_the_holder(tmp_path):
    with RunLock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().split()[0] == str(os.getpid())
        RunLock(tmp_path).acquire()  # the same process: its own lock is stale, not a rival
    assert not (tmp_path / LOCK_NAME).exists()


def test_startup_cleanup_spares_temporaries_of_live_processes(tmp_path):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        ours = tmp_path / f".ckpt-00000004.pt.tmp-{live.pid}"
        stale = tmp_path / f".ckpt-00000002.pt.tmp-{gone.pid}"
        ours.write_bytes(b"PK")
        stale.write_bytes(b"PK")
        assert CheckpointManager(tmp_path).remove_stale_temporaries() == [stale]
        assert ours.exists() and not stale.exists()
    finally:
        live.kill()
        live.wait()


def test_full_disk_keeps_earlier_checkpoints(recipe, tmp_path, monkeypatch):
    exp = tmp_path / "exp"
    real_save, full = torch.save, ["ckpt-00000006"]

    def full_at_second(obj, fh, *a, **k):
        if full[0] in fh.name:
            fh.write(b"PK partial")
            raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos") from (
                OSError(errno.ENOSPC, "No space left on device")
            )
        return real_save(obj, fh, *a, **k)

    monkeypatch.setattr(torch, "save", full_at_second)
    res = run("train", recipe, "--data", tmp_path, "--out", exp)  # checkpoints at 3 and 6
    assert res.exit_code == 1
    line = res.output.strip()
    assert "no space left on" in line and "ckpt-00000006.pt" in line and "\n" not in line
    assert sorted(os.listdir(exp / "checkpoints")) == ["best.pt", "ckpt-00000003.pt"]
    assert load_checkpoint(exp / "checkpoints" / "ckpt-00000003.pt")["step"] == 3
    assert not (exp / LOCK_NAME).exists()

    full[0] = "ckpt-00000009"  # --resume: step 6 is saved, step 9 is not
    res = run(
        "train", recipe, "--data", tmp_path, "--out", exp, "--resume", "--set", "train.max_steps=9"
    )
    assert res.exit_code == 1 and "no space left on" in res.output
    assert "ckpt-00000009.pt" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize(
    "bad",
    [
        ["--set", "train.lrate=1"],
        ["--set", "model.n_train=0"],  # the data check fails
        ["--set", "model.hidden=16"],  # the resume fails: another model
        ["--set", "task=other_task"],  # the resume fails: another task
    ],
)
def test_nothing_is_deleted_or_overwritten_before_the_checks(recipe, tmp_path, bad):
    (tmp_path / "other_task.py").write_text("from tiny_task import build  # noqa: F401\n")
    sys.path.insert(0, str(tmp_path))
    try:
        exp = tmp_path / "exp"
        base = ["train", recipe, "--data", tmp_path, "--out", exp]
        assert run(*base, "--set", "train.max_steps=3").exit_code == 0
        config = (exp / "config.yaml").read_text()
        before = sorted(p.name for p in (exp / "checkpoints").iterdir())
        events = sorted(p.name for p in (exp / "tb").iterdir())
        flag = "--resume" if "task" in bad[1] or "hidden" in bad[1] else "--restart"
        res = run(*base, flag, *bad)
        assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
        assert sorted(p.name for p in (exp / "checkpoints").iterdir()) == before
        assert sorted(p.name for p in (exp / "tb").iterdir()) == events
        assert (exp / "config.yaml").read_text() == config
        if "task" in bad[1]:
            assert "checkpoint of task 'tiny_task', the recipe trains 'other_task'" in res.output
        if "hidden" in bad[1]:  # the setting that differs is named, not a bare "Error(s) in"
            assert "model.hidden: 16 here" in res.output and "in the checkpoint" in res.output
    finally:
        sys.path.remove(str(tmp_path))


def test_force_is_the_old_name_of_restart(recipe, tmp_path):
    exp = tmp_path / "exp"
    base = ["train", recipe, "--data", tmp_path, "--out", exp]
    assert run(*base, "--set", "train.max_steps=3").exit_code == 0
    res = run(*base, "--force", "--set", "train.max_steps=2")
    assert res.exit_code == 0 and "`train --force` is now `train --restart`" in res.output
    assert [p.name for p in (exp / "checkpoints").glob("ckpt-*")] == ["ckpt-00000002.pt"]
    assert yaml.safe_load((exp / "config.yaml").read_text())["train"]["max_steps"] == 2
    res = run(*base, "--restart", "--resume")
    assert res.exit_code == 1 and "either --resume or --restart" in res.output


def test_a_failed_first_run_leaves_no_folder(recipe, tmp_path):
    exp = tmp_path / "new"
    res = run("train", recipe, "--data", tmp_path, "--out", exp, "--set", "model.n_train=0")
    assert res.exit_code == 1 and not exp.exists()


def test_a_config_yaml_of_other_settings_is_not_overwritten(recipe, tmp_path):
    """A folder holding a config.yaml and no checkpoints (a user's file, or a run stopped
    before its first): another run's settings are refused without --restart; the same
    run's settings (a rerun) go on."""
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "config.yaml").write_text("mine: 1\n")
    base = ["train", recipe, "--data", tmp_path, "--out", exp, "--set", "train.max_steps=2"]
    res = run(*base)
    assert res.exit_code == 1 and "exists with other settings" in res.output
    assert (exp / "config.yaml").read_text() == "mine: 1\n"
    assert run(*base, "--restart").exit_code == 0
    for ckpt in (exp / "checkpoints").iterdir():
        ckpt.unlink()
    assert run(*base).exit_code == 0  # the same settings: a rerun
