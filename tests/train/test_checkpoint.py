"""Atomic checkpoint writes, corrupt/missing files, RNG capture, and a SIGKILLed writer."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from aligner.checkpoint import CheckpointError, atomic_save, load_checkpoint
from aligner.train.manager import CheckpointManager, rng_state, set_rng_state


def state(step: int) -> dict:
    return {"model": {"w": torch.full((3,), float(step))}, "step": step, "config": {"task": "x"}}


def test_load_errors_are_clear(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="junk.pt is corrupt"):
        load_checkpoint(tmp_path / "junk.pt")
    atomic_save(state(1), tmp_path / "good.pt")
    data = (tmp_path / "good.pt").read_bytes()
    (tmp_path / "cut.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="cut.pt is corrupt"):
        load_checkpoint(tmp_path / "cut.pt")
    torch.save({"weights": torch.zeros(1)}, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="not an aligner checkpoint"):
        load_checkpoint(tmp_path / "other.pt")
    # a pickled object is refused, and torch's advice to load it unsafely is not passed on
    torch.save({"model": Opaque()}, tmp_path / "opaque.pt")
    with pytest.raises(CheckpointError, match="opaque.pt is corrupt or foreign") as err:
        load_checkpoint(tmp_path / "opaque.pt")
    assert "weights_only" not in str(err.value) and "\n" not in str(err.value)


class Opaque:
    """Not a tensor or plain data: `torch.load(weights_only=True)` refuses it."""


def test_failed_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    atomic_save(state(1), path)

    def broken_save(obj, fh):
        fh.write(b"PK\x03\x04 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        atomic_save(state(2), path)
    assert load_checkpoint(path)["step"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.pt"]  # temporary removed


def test_sigkill_during_write_keeps_previous_file(tmp_path):
    """A process killed half-way through writing leaves the old checkpoint loadable."""
    path = tmp_path / "ckpt.pt"
    code = textwrap.dedent(
        f"""
        import os, signal, torch
        from aligner.checkpoint import atomic_save
        atomic_save({{"model": {{}}, "step": 1, "config": {{}}}}, {str(path)!r})
        def killed_mid_write(obj, fh):
            fh.write(b"PK partial")
            fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        torch.save = killed_mid_write
        atomic_save({{"model": {{}}, "step": 2, "config": {{}}}}, {str(path)!r})
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert load_checkpoint(path)["step"] == 1
    stale = list(tmp_path.glob(".ckpt.pt.tmp-*"))
    assert len(stale) == 1
    CheckpointManager(tmp_path).remove_stale_temporaries()
    assert not list(tmp_path.glob(".ckpt.pt.tmp-*"))


def test_manager_keeps_last_n_and_best(tmp_path):
    mgr = CheckpointManager(tmp_path / "c", keep_last=2)
    assert mgr.latest() is None and mgr.checkpoints() == []
    for step in (5, 10, 100, 15):  # numeric order, not string order
        mgr.save(state(step), step, is_best=step == 10)
    assert [p.name for p in mgr.checkpoints()] == ["ckpt-00000015.pt", "ckpt-00000100.pt"]
    assert mgr.latest().name == "ckpt-00000100.pt"
    assert load_checkpoint(mgr.best_path)["step"] == 10
    with pytest.raises(ValueError):
        CheckpointManager(tmp_path, keep_last=0)


def test_rng_state_round_trip_through_weights_only_file(tmp_path):
    atomic_save({"rng": rng_state(), "model": {}, "step": 0, "config": {}}, tmp_path / "r.pt")
    expected = (random.random(), np.random.rand(), torch.rand(3))
    random.seed(99)
    np.random.seed(99)
    torch.manual_seed(99)
    set_rng_state(load_checkpoint(tmp_path / "r.pt")["rng"])
    assert random.random() == expected[0]
    assert np.random.rand() == expected[1]
    assert torch.equal(torch.rand(3), expected[2])


def test_average_checkpoints_means_float_weights_and_keeps_the_rest(tmp_path):
    from aligner.checkpoint import average_checkpoints

    paths = []
    for step in (10, 20, 60):
        s = state(step)
        s["model"]["count"] = torch.tensor(step)  # an integer buffer: taken from the last
        s["optimizer"] = {"lr": 1.0}
        paths.append(tmp_path / f"ckpt-{step}.pt")
        atomic_save(s, paths[-1])
    avg = average_checkpoints(paths)
    assert torch.equal(avg["model"]["w"], torch.full((3,), 30.0))
    assert int(avg["model"]["count"]) == 60 and avg["step"] == 60
    assert avg["averaged_from"] == [10, 20, 60] and "optimizer" not in avg
    other = state(1)
    other["model"]["w"] = torch.zeros(4)
    atomic_save(other, tmp_path / "other.pt")
    with pytest.raises(CheckpointError, match="different model"):
        average_checkpoints([paths[0], tmp_path / "other.pt"])


def test_average_command_writes_a_loadable_checkpoint_and_refuses_to_overwrite(tmp_path):
    from click.testing import CliRunner

    from aligner.cli import main

    paths = []
    for step in (1, 3):
        paths.append(tmp_path / f"c{step}.pt")
        atomic_save(state(step), paths[-1])
    out = tmp_path / "avg.pt"
    result = CliRunner().invoke(main, ["average", *map(str, paths), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert torch.equal(load_checkpoint(out)["model"]["w"], torch.full((3,), 2.0))
    again = CliRunner().invoke(main, ["average", *map(str, paths), "--out", str(out)])
    assert again.exit_code == 1 and "exists; pass --force" in again.output


def test_average_command_takes_the_last_checkpoints_of_a_run_folder(tmp_path):
    from click.testing import CliRunner

    from aligner.cli import main

    folder = tmp_path / "exp" / "checkpoints"
    for step in (1, 2, 3, 4):
        atomic_save(state(step), folder / f"ckpt-{step:08d}.pt")
    atomic_save(state(100), folder / "best.pt")  # not one of the ckpt-STEP.pt files
    out = tmp_path / "avg.pt"
    result = CliRunner().invoke(
        main, ["average", str(tmp_path / "exp"), "--last", "2", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    avg = load_checkpoint(out)
    assert avg["averaged_from"] == [3, 4] and torch.equal(avg["model"]["w"], torch.full((3,), 3.5))
    assert "note:" not in result.output
    args = ["average", str(tmp_path / "exp"), "--last", "9", "--out", str(tmp_path / "all.pt")]
    result = CliRunner().invoke(main, args)  # fewer than asked: said, not silent
    assert result.exit_code == 0 and "mean of 4 checkpoints" in result.output
    assert "note: --last 9 asked for more checkpoints than the run keeps" in result.output
    empty = CliRunner().invoke(main, ["average", str(tmp_path), "--out", str(tmp_path / "x.pt")])
    assert empty.exit_code == 1 and "holds no ckpt-STEP.pt" in empty.output
