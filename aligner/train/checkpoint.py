"""Atomic checkpoints, keep-last-N plus best, and RNG state capture for exact resume.

A checkpoint is a dict saved with `torch.save` holding at least ``model``, ``step`` and
``config``; the trainer adds ``optimizer``, ``scheduler``, ``scaler``, ``epoch``,
``sampler``, ``rng``, ``symbols`` and ``best_loss``. Everything in it is a tensor or a
plain Python value, so it loads with ``weights_only=True`` (no pickled code).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

REQUIRED_KEYS = ("model", "step", "config")
_CKPT_RE = re.compile(r"^ckpt-(\d+)\.pt$")


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable or not an aligner checkpoint."""


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_save(obj: Any, path: str | Path) -> None:
    """`torch.save(obj, path)` so that `path` is always either the old or the new file.

    Writes a temporary file in the same folder, flushes and fsyncs it, renames it over
    `path` with `os.replace`, then fsyncs the folder so the rename is durable.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            torch.save(obj, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """Load an aligner checkpoint; a clear `CheckpointError` if it is missing or corrupt."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(
            f"checkpoint {path} does not exist; give a .pt file from EXP/checkpoints"
        )
    try:
        state = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # torch raises many types for a truncated or foreign file
        raise CheckpointError(
            f"checkpoint {path} {_unreadable(path, err)}; "
            "give another checkpoint (e.g. an earlier one from the same folder)"
        ) from None
    if not isinstance(state, dict) or any(k not in state for k in REQUIRED_KEYS):
        raise CheckpointError(
            f"{path} is not an aligner checkpoint (needs keys {', '.join(REQUIRED_KEYS)})"
        )
    return state


def _unreadable(path: Path, err: Exception) -> str:
    """Why `torch.load` failed, in our words (torch's own text advises `weights_only=False`,
    which would run arbitrary code from the file)."""
    with open(path, "rb") as f:
        head = f.read(4)
    if head != b"PK\x03\x04" and head[:1] != b"\x80":  # zip (torch.save) or a legacy pickle
        return "is corrupt: not a file written by torch.save"
    if "weights only" in str(err).lower():
        return "is corrupt or foreign: it holds Python objects that are not tensors or plain data"
    first = str(err).split(". ")[0].splitlines()[0] if str(err) else type(err).__name__
    return f"is corrupt or truncated ({first})"


def _reads_reversed(state: dict) -> bool:
    """Whether a text checkpoint's model writes its target right to left
    (`data.reverse_target`; absent from checkpoints older than the option)."""
    return bool(((state.get("symbols") or {}).get("data") or {}).get("reverse_target", False))


def average_checkpoints(paths: list[str | Path]) -> dict:
    """The element-wise mean of the model weights of several checkpoints of one run.

    Floating-point tensors are averaged (in float64, cast back); integer buffers (e.g.
    BatchNorm's ``num_batches_tracked``) and everything else come from the last checkpoint.
    The result holds the model, config, symbols and step of the last one, plus
    ``averaged_from`` (the steps); it has no optimizer state, so it is for inference and
    evaluation, not ``--resume``.
    """
    if not paths:
        raise CheckpointError("give at least one checkpoint to average")
    states = [load_checkpoint(p) for p in paths]
    last = states[-1]
    names = set(last["model"])
    for path, state in zip(paths, states):
        if (
            _reads_reversed(state) != _reads_reversed(last)  # text runs of both directions
            or set(state["model"]) != names
            or any(state["model"][k].shape != last["model"][k].shape for k in names)
        ):
            raise CheckpointError(
                f"{path} holds a different model than {paths[-1]}; average checkpoints of "
                "one training run only"
            )
    model = {}
    for name, value in last["model"].items():
        if value.is_floating_point():
            total = sum(state["model"][name].double() for state in states)
            model[name] = (total / len(states)).to(value.dtype)
        else:
            model[name] = value.clone()
    out = {k: v for k, v in last.items() if k in ("config", "symbols", "step", "epoch")}
    out.update(model=model, averaged_from=[int(state["step"]) for state in states])
    return out


def rng_state() -> dict[str, Any]:
    """The python, numpy, torch and (when present) CUDA RNG states as plain Python values
    (lists of ints), safe for ``weights_only`` loading and for `all_gather_object`."""
    name, keys, *rest = np.random.get_state()
    state = {
        "python": random.getstate(),
        "numpy": [name, keys.tolist(), *rest],
        "torch": torch.get_rng_state().tolist(),
    }
    if torch.cuda.is_available():
        state["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return state


def _byte_tensor(values: Any) -> torch.Tensor:
    return torch.as_tensor(values, dtype=torch.uint8)


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what `rng_state` captured."""
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, *rest = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), *rest))
    torch.set_rng_state(_byte_tensor(state["torch"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([_byte_tensor(s) for s in state["cuda"]])


class CheckpointManager:
    """Writes ``ckpt-STEP.pt`` files in `folder`, keeps the last `keep_last`, and ``best.pt``.

    ``best.pt`` is the checkpoint with the lowest validation loss seen so far; it is
    never deleted by the keep-last rotation.
    """

    def __init__(self, folder: str | Path, keep_last: int = 3) -> None:
        if keep_last < 1:
            raise ValueError(f"keep_last must be >= 1, got {keep_last}")
        self.folder = Path(folder)
        self.keep_last = keep_last

    @property
    def best_path(self) -> Path:
        return self.folder / "best.pt"

    def path_for(self, step: int) -> Path:
        return self.folder / f"ckpt-{step:08d}.pt"

    def checkpoints(self) -> list[Path]:
        """The ``ckpt-*.pt`` files, oldest step first."""
        if not self.folder.is_dir():
            return []
        found = [
            (int(m.group(1)), p) for p in self.folder.iterdir() if (m := _CKPT_RE.match(p.name))
        ]
        return [p for _, p in sorted(found)]

    def remove_stale_temporaries(self) -> None:
        """Delete temporary files left by a process killed while writing a checkpoint."""
        if self.folder.is_dir():
            for tmp in self.folder.glob(".*.pt.tmp-*"):
                tmp.unlink(missing_ok=True)

    def latest(self) -> Path | None:
        ckpts = self.checkpoints()
        return ckpts[-1] if ckpts else None

    def save(self, state: dict[str, Any], step: int, is_best: bool = False) -> Path:
        """Write the checkpoint of `step` (and ``best.pt`` when `is_best`); rotate old ones."""
        path = self.path_for(step)
        atomic_save(state, path)
        if is_best:
            self.save_best(state)
        for old in self.checkpoints()[: -self.keep_last]:
            old.unlink()
        return path

    def save_best(self, state: dict[str, Any]) -> Path:
        """Write ``best.pt`` (the caller decides that this state is the best so far)."""
        atomic_save(state, self.best_path)
        return self.best_path
