"""`aligner train` as one call: load the recipe, check the experiment folder, set up DDP and
seeds, build the task and the trainer, resume or start over, and fit."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from aligner.checkpoint import CheckpointError
from aligner.config import ConfigError, ExperimentConfig, load_config, save_config
from aligner.tasks import UnknownTaskError, build_task
from aligner.train import distributed as ddp
from aligner.train.batches import TrainingError
from aligner.train.manager import CheckpointManager, seed_everything
from aligner.train.trainer import FitResult, Trainer


class RunError(ValueError):
    """A recipe, data folder, experiment folder or checkpoint that stops a run before or
    while it trains; the message (one line) says what to do."""


def run(
    recipe: str | Path,
    data_dir: str | Path,
    out_dir: str | Path,
    overrides: Sequence[str] = (),
    resume: bool = False,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> FitResult:
    """Train the model of `recipe` (with ``--set`` style `overrides`) on the manifests in
    `data_dir`, writing ``checkpoints/``, ``tb/`` and ``config.yaml`` to `out_dir`.

    An experiment that already holds checkpoints needs `resume` (continue exactly from the
    latest) or `force` (delete its checkpoints and logs and start over). Under ``torchrun``
    every rank calls this; only rank 0 writes and `say`s (resuming, and the closing line).
    """
    out_dir = Path(out_dir)
    cfg, manager = _check(recipe, overrides, out_dir, resume, force)
    info = ddp.init_distributed()
    try:
        if force and info.is_main:
            for sub in ("checkpoints", "tb"):
                shutil.rmtree(out_dir / sub, ignore_errors=True)
        ddp.barrier(info)
        seed_everything(cfg.train.seed)
        try:
            task = build_task(cfg, data_dir)
            trainer = Trainer(task, cfg.train, out_dir, cfg.to_dict(), info, manager)
        except (UnknownTaskError, TrainingError, ValueError, OSError) as err:  # config, data
            raise RunError(str(err)) from None
        if info.is_main:
            out_dir.mkdir(parents=True, exist_ok=True)
            save_config(cfg, out_dir / "config.yaml")
        if resume:
            _resume(trainer, out_dir, say if info.is_main else lambda _: None)
        try:
            result = trainer.fit()
        except TrainingError as err:
            raise RunError(str(err)) from None
        if info.is_main:
            say(
                f"stopped at step {result.step} ({result.reason}); best validation loss "
                f"{result.best_loss:.4g}; checkpoint {result.checkpoint}; "
                f"TensorBoard: tensorboard --logdir {out_dir / 'tb'}"
            )
        return result
    finally:
        ddp.cleanup()


def _check(
    recipe: str | Path, overrides: Sequence[str], out_dir: Path, resume: bool, force: bool
) -> tuple[ExperimentConfig, CheckpointManager]:
    """The recipe's config and the run's checkpoint manager, once the recipe, the options
    and the experiment folder allow the run."""
    try:
        cfg = load_config(recipe, overrides)
    except ConfigError as err:
        raise RunError(str(err)) from None
    if resume and force:
        raise RunError("give either --resume or --force, not both")
    manager = CheckpointManager(out_dir / "checkpoints", cfg.train.keep_last)
    if (manager.checkpoints() or manager.best_path.exists()) and not (resume or force):
        raise RunError(
            f"{out_dir} already holds checkpoints; pass --resume to continue or --force to start over"
        )
    return cfg, manager


def _resume(trainer: Trainer, out_dir: Path, say: Callable[[str], None]) -> None:
    try:
        path = trainer.resume()
    except CheckpointError as err:
        raise RunError(str(err)) from None
    if path:
        say(f"resumed from {path} at step {trainer.step}")
    else:
        say(f"no checkpoint in {out_dir}; starting from step 0")
