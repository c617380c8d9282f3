"""Two CPU processes under torchrun (gloo): parameters stay identical, data is sharded."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from aligner.checkpoint import load_checkpoint

HERE = Path(__file__).parent


@pytest.mark.slow
def test_two_process_ddp_keeps_parameters_identical(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        str(HERE / "ddp_entry.py"),
        str(tmp_path),
    ]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=300,
        env={"OMP_NUM_THREADS": "1", **__import__("os").environ},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r0 = torch.load(tmp_path / "rank0.pt")
    r1 = torch.load(tmp_path / "rank1.pt")
    assert r0["world"] == r1["world"] == 2
    assert any(not torch.equal(r0["init"][k], r1["init"][k]) for k in r0["init"])
    for k, v in r0["params"].items():
        assert torch.equal(v, r1["params"][k]), k
        assert not torch.equal(v, r0["init"][k])  # it trained
    assert len(r0["seen"]) == len(r1["seen"]) == 6
    assert r0["updates"] == r1["updates"] == 5  # the NaN on rank 1 skipped step 2 everywhere
    assert r0["seen"] != r1["seen"]  # each rank its own shard
    ckpt = load_checkpoint(tmp_path / "exp" / "checkpoints" / "ckpt-00000006.pt")
    assert len(ckpt["rng"]) == 2  # every rank's RNG state, for exact resume
    for k, v in ckpt["model"].items():
        assert torch.equal(v, r0["params"][k])
    assert len(list((tmp_path / "exp" / "tb").glob("events.out.tfevents.*"))) == 1  # rank 0 only
