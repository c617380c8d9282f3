"""The run's checkpoints: ``ckpt-STEP.pt`` rotation plus ``best.pt``, and RNG state capture
for exact resume. Reading and writing the files is `aligner.checkpoint`'s."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.checkpoint import CheckpointError, atomic_save, list_checkpoints, load_checkpoint
from aligner.files import process_alive, temporary_owner


def seed_everything(seed: int) -> None:
    """Seed python, numpy and torch (all devices)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


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
        return list_checkpoints(self.folder)

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete temporary files left by a process killed while writing a checkpoint; a
        file of a live process (another run writing now) is left alone. Returns those
        deleted."""
        stale = []
        if self.folder.is_dir():
            for tmp in self.folder.glob(".*.pt.tmp-*"):
                owner = temporary_owner(tmp)
                if owner is None or (owner != os.getpid() and not process_alive(owner)):
                    tmp.unlink(missing_ok=True)
                    stale.append(tmp)
        return stale

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


def resume_state(
    path: Path,
    task: str | None,
    load: Callable[[dict[str, Any]], None],
    config: dict[str, Any] | None = None,
) -> None:
    """Read the checkpoint `path` and hand its state to `load` (`Trainer.load_state_dict`);
    CheckpointError (one line) for a checkpoint of another task than `task`, or one whose
    state `load` cannot take (missing keys, other shapes: the settings of this run's
    `config` that differ from the checkpoint's are named)."""
    state: dict[str, Any] = {}
    try:
        state = load_checkpoint(path, map_location="cpu")
        theirs = state["config"].get("task")
        if theirs and task and theirs != task:
            raise CheckpointError(
                f"{path} is a checkpoint of task {theirs!r}, the recipe trains {task!r}; "
                "give that run's recipe (its config.yaml) or another --out"
            )
        load(state)
    except (KeyError, ValueError, RuntimeError) as err:
        if isinstance(err, CheckpointError):
            raise
        reason = str(err).splitlines()[0].rstrip(":")
        changed = _changed(state.get("config") or {}, config or {})
        if changed:
            reason += f" (this run's settings differ from the checkpoint's: {changed})"
        raise CheckpointError(f"cannot resume from {path}: {reason}") from None


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def _changed(theirs: dict[str, Any], ours: dict[str, Any], limit: int = 4) -> str:
    """``key: VALUE here, VALUE in the checkpoint`` for the settings of the model, the
    family and the data's tokenizer that differ (at most `limit`), else ``""``."""
    a, b = _flat(theirs), _flat(ours)
    keys = [
        k
        for k in sorted(set(a) | set(b))
        if k.startswith(("model.", "family", "data.tokenizer", "data.mel."))
        and a.get(k) != b.get(k)
    ]
    parts = [f"{k}: {b.get(k)!r} here, {a.get(k)!r} in the checkpoint" for k in keys[:limit]]
    return "; ".join(parts) + (f"; and {len(keys) - limit} more" if len(keys) > limit else "")
