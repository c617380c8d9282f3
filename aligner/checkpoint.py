"""Checkpoint files, their one owner: which file a path means (`checkpoint_file`: a file,
or an experiment folder: best, else latest), reading one (`read_checkpoint`), the family
and task that trained it (`checkpoint_family`), writing atomically, averaging; and the
weights file of a public release (`load_weights`). Nothing else opens a checkpoint.

A checkpoint is a dict saved with `torch.save` holding at least ``model``, ``step`` and
``config``; `aligner train` adds ``optimizer``, ``scheduler``, ``scaler``, ``epoch``,
``sampler``, ``rng``, ``symbols`` and ``best_loss``. Everything in it is a tensor or a
plain Python value, so it loads with ``weights_only=True`` (no pickled code). The run's
checkpoint manager (rotation, ``best.pt``) and RNG capture live in `aligner.train.manager`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch

from aligner.families import FamilyError, family_name, role
from aligner.files import atomic_write

REQUIRED_KEYS = ("model", "step", "config")
_CKPT_RE = re.compile(r"^ckpt-(\d+)\.pt$")


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable or not an aligner checkpoint."""


def list_checkpoints(folder: str | Path) -> list[Path]:
    """The ``ckpt-STEP.pt`` files of a run's checkpoints folder, oldest step first."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _CKPT_RE.match(p.name))]
    return [p for _, p in sorted(found)]


def checkpoint_file(path: str | Path) -> Path:
    """The checkpoint file `path` names: a path that is not a folder is itself (reading it
    says what is wrong with it); an experiment folder (or its ``checkpoints/``) means its
    ``best.pt`` (the lowest validation loss), else its latest ``ckpt-STEP.pt``.
    CheckpointError (one line) for a folder without checkpoints. The one resolver of
    checkpoint paths: the command line, the demo, the egs and Python users all call it."""
    return checkpoint_choice(path)[0]


def checkpoint_choice(path: str | Path) -> tuple[Path, str]:
    """`checkpoint_file` and why it was chosen: ``given`` (a file), ``best`` (best.pt) or
    ``latest`` (no validation yet)."""
    path = Path(path)
    if not path.is_dir():
        return path, "given"
    folder = path / "checkpoints" if (path / "checkpoints").is_dir() else path
    if (folder / "best.pt").is_file():
        return folder / "best.pt", "best"
    found = list_checkpoints(folder)
    if found:
        return found[-1], "latest"
    others = sorted(p.name for p in folder.glob("*.pt"))
    held = f"it holds {', '.join(others[-5:])}" if others else "it holds no .pt file"
    raise CheckpointError(
        f"{path} is a folder without best.pt or ckpt-STEP.pt ({held}); name the checkpoint file"
    )


def checkpoints_to_average(sources: list[str | Path], last: int = 3) -> list[Path]:
    """Checkpoint files from `sources`: each a ``.pt`` file, or an experiment folder (or its
    ``checkpoints/`` folder) that contributes its `last` ``ckpt-STEP.pt`` files."""
    if last < 1:
        raise CheckpointError(f"need at least one checkpoint per folder, got last={last}")
    paths: list[Path] = []
    for source in map(Path, sources):
        if not source.is_dir():
            paths.append(source)
            continue
        folder = source / "checkpoints" if (source / "checkpoints").is_dir() else source
        found = list_checkpoints(folder)
        if not found:
            raise CheckpointError(f"{source} holds no ckpt-STEP.pt checkpoint to average")
        paths.extend(found[-last:])
    return paths


def atomic_save(obj: Any, path: str | Path) -> None:
    """`torch.save(obj, path)` so that `path` is always either the old or the new file
    (`aligner.files.atomic_write`: temporary file, fsync, rename). A full disk or another
    storage error raises `aligner.files.OutputError` (one line) with the temporary file
    removed and the old `path` intact."""
    with atomic_write(path) as fh:
        torch.save(obj, fh)


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


def read_checkpoint(path: str | Path) -> tuple[Path, dict]:
    """The checkpoint file `path` names (`checkpoint_file`) and its dict, on the CPU;
    CheckpointError (one line, naming the file) for a missing, corrupt or foreign one."""
    file = checkpoint_file(path)
    return file, load_checkpoint(file, map_location="cpu")


def checkpoint_family(state: dict, file: str | Path = "checkpoint") -> tuple[str, str]:
    """``(family, task)`` of a checkpoint's dict (`aligner.families`): what its config and
    symbols name; a checkpoint written before recipes named a family takes its task's
    default. CheckpointError (one line) for a task no family serves."""
    config = {**(state.get("config") or {})}
    config["task"] = (state.get("symbols") or {}).get("task") or config.get("task")
    family, task = family_name(config), str(config["task"])
    try:
        role(family, task)
    except FamilyError as err:
        raise CheckpointError(f"{file}: a {task!r} checkpoint no family loads ({err})") from None
    return family, task


def load_weights(path: str | Path) -> dict:
    """The tensors of a weights file that is not an aligner checkpoint (a public release's
    generator file), read as plain data; CheckpointError (one line) otherwise."""
    path = Path(path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for a truncated or foreign file
        raise CheckpointError(f"weights file {path} {_unreadable(path, err)}") from None
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} holds no dict of weights")
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


def write_average(
    sources: list[str | Path], out: str | Path, last: int = 3, force: bool = False
) -> dict:
    """Average the checkpoints of `sources` (files, or folders contributing their `last`
    ``ckpt-STEP.pt``; see `checkpoints_to_average`) into the file `out`, written
    atomically; an existing `out` is replaced only with `force`. Returns the state."""
    out = Path(out)
    if out.exists() and not force:
        raise CheckpointError(f"{out} exists; pass --force to replace it")
    paths = checkpoints_to_average(sources, last)
    state = average_checkpoints(paths)
    state["averaged_files"] = [str(p) for p in paths]
    atomic_save(state, out)
    return state
