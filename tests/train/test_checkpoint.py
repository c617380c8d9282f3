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

from aligner.train.checkpoint import (
    CheckpointError,
    CheckpointManager,
    atomic_save,
    load_checkpoint,
    rng_state,
    set_rng_state,
)


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
        from aligner.train.checkpoint import atomic_save
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
