"""Starting a run from another run's weights (``train.init_from``, ESPnet's
``--init_param``): the parameters of the named modules copied from a checkpoint of any
task or family whose modules have the same names and shapes, e.g. a voice conversion
model's decoder, projection and postnet from a TTS model of the target voice (the Voice
Transformer Network's TTS pretraining). Only the weights: the optimizer, schedule and step
start afresh. A resumed run keeps its own weights."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from torch import nn

from aligner.checkpoint import CheckpointError, checkpoint_file, load_checkpoint


def _chosen(name: str, modules: Sequence[str]) -> bool:
    """Whether parameter `name` lies in one of `modules` (a module path or the parameter's
    own name; every parameter when `modules` is empty)."""
    return not modules or any(name == m or name.startswith(m + ".") for m in modules)


def init_weights(model: nn.Module, path: str | Path, modules: Sequence[str] = ()) -> str:
    """Copy into `model` the tensors of the checkpoint `path` (a ``.pt`` file or a run's
    folder: its best, else latest) that lie in `modules`: each must be in the checkpoint
    with the same shape. With no `modules`, every tensor whose name and shape both models
    share, and at least one must. Returns one line saying what was copied;
    CheckpointError (one line) naming the file and the first tensor that does not fit."""
    file = checkpoint_file(path)
    theirs = load_checkpoint(file, map_location="cpu")["model"]
    ours = model.state_dict()
    unknown = [m for m in modules if not any(_chosen(k, [m]) for k in ours)]
    if unknown:
        some = sorted({k.split(".")[0] for k in ours})
        raise CheckpointError(
            f"train.init_modules names {unknown[0]!r}, which this model does not have; "
            f"its modules: {', '.join(some)}"
        )
    take = {}
    for name, tensor in ours.items():
        if not _chosen(name, modules):
            continue
        other = theirs.get(name)
        fits = other is not None and tuple(other.shape) == tuple(tensor.shape)
        if fits:
            take[name] = other.to(tensor.dtype)
        elif modules:
            had = "no such tensor" if other is None else f"shape {tuple(other.shape)}"
            raise CheckpointError(
                f"{file} cannot initialize {name} {tuple(tensor.shape)}: it has {had}; "
                "give a checkpoint whose model has these modules at these sizes, or other "
                "train.init_modules"
            )
    if not take:
        raise CheckpointError(
            f"{file} shares no tensor (same name and shape) with this model; "
            "give a checkpoint of a model with the same modules"
        )
    model.load_state_dict({**ours, **take})
    count = sum(t.numel() for t in take.values())
    where = ", ".join(modules) if modules else "every module they share"
    return (
        f"initialized {len(take)} of {len(ours)} tensors ({count / 1e6:.2f}M values; "
        f"{where}) from {file}"
    )
