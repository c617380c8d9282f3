"""Tasks: what to train (model, data, loss, validation) for the generic trainer.

`build_task(cfg, data_dir)` maps ``cfg.task`` to a module exposing
``build(cfg: ExperimentConfig, data_dir: Path) -> Task``: the built-in names are
``tts``, ``vc`` (speech), ``align`` (the alignment model), ``vocoder`` (mel -> waveform) and ``g2p``, ``nmt``
(text). Any other name is imported as a
module (e.g. ``mypkg.mytask``): a user-defined task with the same ``build`` function.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aligner.config import ExperimentConfig
    from aligner.tasks.base import Task

TASKS: dict[str, str] = {
    "tts": "aligner.tasks.tts",
    "vc": "aligner.tasks.vc",
    "g2p": "aligner.tasks.text",
    "nmt": "aligner.tasks.text",
    "align": "aligner.tasks.align",
    "vocoder": "aligner.tasks.vocoder",
}


class UnknownTaskError(ValueError):
    """`cfg.task` names no built-in task and no importable module."""


def task_module(name: str):
    """The module that builds task `name` (a built-in name or a dotted module path)."""
    if name in TASKS:
        return importlib.import_module(TASKS[name])
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is None or not name.startswith(err.name):
            raise
        raise UnknownTaskError(
            f"unknown task {name!r}; choose one of {', '.join(TASKS)} "
            "or an importable module with build(cfg, data_dir)"
        ) from None
    except (ImportError, ValueError, TypeError) as err:
        raise UnknownTaskError(f"task module {name!r} cannot be imported: {err}") from None
    if not callable(getattr(module, "build", None)):
        raise UnknownTaskError(f"task module {name!r} has no build(cfg, data_dir) function")
    return module


def build_task(cfg: ExperimentConfig, data_dir: str | Path) -> Task:
    """Build the task of `cfg` (its model, datasets from `data_dir`, loss and validation)."""
    return task_module(cfg.task).build(cfg, Path(data_dir))
