"""Tasks: what to train (model, data, loss, validation) for the generic trainer.

`build_task(cfg, data_dir)` finds the module of the recipe's family and task (its role's
``task_module`` in `aligner.families`) exposing ``build(cfg: ExperimentConfig, data_dir:
Path) -> Task``. A task no family serves is imported as a module by its name (e.g.
``task: mypkg.mytask``): a user-defined task with the same ``build`` function.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from aligner.families import DEFAULT_FAMILY, role

if TYPE_CHECKING:
    from aligner.config import ExperimentConfig
    from aligner.tasks.base import Task


class UnknownTaskError(ValueError):
    """`cfg.task` names no built-in task and no importable module."""


def task_module(name: str, family: str = ""):
    """The module that builds task `name` of `family` (`aligner.families`), or the module
    the dotted path `name` names."""
    if family:
        return importlib.import_module(role(family, name).task_module)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is None or not name.startswith(err.name):
            raise
        raise UnknownTaskError(
            f"unknown task {name!r}; choose one of {', '.join(DEFAULT_FAMILY)} "
            "or an importable module with build(cfg, data_dir)"
        ) from None
    except (ImportError, ValueError, TypeError) as err:
        raise UnknownTaskError(f"task module {name!r} cannot be imported: {err}") from None
    if not callable(getattr(module, "build", None)):
        raise UnknownTaskError(f"task module {name!r} has no build(cfg, data_dir) function")
    return module


def build_task(cfg: ExperimentConfig, data_dir: str | Path) -> Task:
    """Build the task of `cfg` (its model, datasets from `data_dir`, loss and validation)."""
    return task_module(cfg.task, cfg.family).build(cfg, Path(data_dir))
