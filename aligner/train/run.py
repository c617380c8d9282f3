"""`aligner train` as one call: load the recipe, take the experiment folder's lock, set up
DDP and seeds, build the task and the trainer, resume or start over, and fit.

Nothing is deleted or overwritten before everything that can be checked was: the
recipe and ``--set`` values, the data (the task is built), and the checkpoint to resume
(loaded). Only then does ``restart`` delete the old ``checkpoints/`` and ``tb/`` and
``config.yaml`` get written.
"""

from __future__ import annotations

import math
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

from aligner.checkpoint import CheckpointError
from aligner.config import ConfigError, ExperimentConfig, load_config
from aligner.files import OutputError, write_atomic
from aligner.tasks import UnknownTaskError, build_task
from aligner.train import distributed as ddp
from aligner.train.errors import TrainingError
from aligner.train.init import init_weights
from aligner.train.manager import CheckpointManager, seed_everything
from aligner.train.safety import LockedError, RunLock
from aligner.train.trainer import FitResult, Trainer


class RunError(ValueError):
    """A recipe, data folder, experiment folder or checkpoint that stops a run before or
    while it trains; the message (one line) says what to do. ``exit_code`` is the
    process's (130 after a second Ctrl-C)."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def tensorboard_command(log_dir: str | Path, name: str | None = None) -> str:
    """The command that opens `log_dir` in TensorBoard: the ``tensorboard`` installed next
    to this Python (so it works without activating the virtualenv), the run named `name`."""
    exe = Path(sys.executable).parent / "tensorboard"
    program = str(exe) if exe.is_file() else "tensorboard"
    if name:
        return f"{program} --logdir_spec {name}:{log_dir}"
    return f"{program} --logdir {log_dir}"


def run(
    recipe: str | Path,
    data_dir: str | Path,
    out_dir: str | Path,
    overrides: Sequence[str] = (),
    resume: bool = False,
    restart: bool = False,
    say: Callable[[str], None] = print,
) -> FitResult:
    """Train the model of `recipe` (with ``--set`` style `overrides`) on the manifests in
    `data_dir`, writing ``checkpoints/``, ``tb/`` and ``config.yaml`` to `out_dir`.

    A folder holding checkpoints needs `resume` (continue exactly from the latest) or
    `restart` (delete its checkpoints and logs); one run at a time per folder (``train.lock``).
    SIGINT/SIGTERM save a checkpoint and return with ``reason == "interrupted"``. Under
    ``torchrun`` every rank calls this; only rank 0 writes and `say`s."""
    out_dir = Path(out_dir)
    cfg, manager = _check(recipe, overrides, out_dir, resume, restart)
    info = ddp.init_distributed()
    created = not out_dir.exists()
    lock = RunLock(out_dir)
    try:
        if info.is_main:
            lock.acquire()
        ddp.barrier(info)
        trainer = _prepare(cfg, data_dir, out_dir, manager, info, resume, say)
        if info.is_main:
            _write(cfg, out_dir, restart, resume)
        ddp.barrier(info)
        result = trainer.fit()
        if info.is_main:
            say(closing_line(result, out_dir))
        return result
    except LockedError as err:
        created = False
        raise RunError(str(err)) from None
    except (TrainingError, OutputError) as err:
        raise RunError(str(err)) from None
    except KeyboardInterrupt as err:
        latest = manager.latest()
        how = "interrupted twice: stopped at once" if err.args else "interrupted"
        where = f"the latest checkpoint is {latest}" if latest else "no checkpoint was written"
        raise RunError(f"{how}; {where}", exit_code=130) from None
    finally:
        lock.release()
        if created and info.is_main and out_dir.is_dir() and not any(out_dir.iterdir()):
            out_dir.rmdir()  # a run that failed before writing anything leaves no folder
        ddp.cleanup()


def _prepare(
    cfg: ExperimentConfig,
    data_dir: str | Path,
    out_dir: Path,
    manager: CheckpointManager,
    info: ddp.DistInfo,
    resume: bool,
    say: Callable[[str], None],
) -> Trainer:
    """The task (its data read and checked) and the trainer, resumed when asked."""
    seed_everything(cfg.train.seed)
    try:
        task = build_task(cfg, data_dir)
        trainer = Trainer(task, cfg.train, out_dir, cfg.to_dict(), info, manager)
    except (UnknownTaskError, TrainingError, ValueError, OSError) as err:  # config, data
        raise RunError(str(err)) from None
    if resume:
        _resume(trainer, out_dir, say if info.is_main else lambda _: None)
    if cfg.train.init_from and not trainer.resumed:
        try:
            line = init_weights(task.model, cfg.train.init_from, cfg.train.init_modules)
        except CheckpointError as err:
            raise RunError(str(err)) from None
        if info.is_main:
            say(line)
    return trainer


def _write(cfg: ExperimentConfig, out_dir: Path, restart: bool, resume: bool) -> None:
    """The destructive part, last: delete the old run (`restart`), write ``config.yaml``
    (a ``config.yaml`` of other settings with no checkpoint beside it, a user's file or
    a run stopped before its first, only with `resume` or `restart`)."""
    old = out_dir / "config.yaml"
    if old.is_file() and not (resume or restart):
        if old.read_text(encoding="utf-8", errors="replace") != _config_text(cfg):
            raise RunError(
                f"{old} exists with other settings than this run's; pass --restart to "
                "replace it or give another --out"
            )
    if restart:
        for sub in ("checkpoints", "tb"):
            shutil.rmtree(out_dir / sub, ignore_errors=True)
    text = _config_text(cfg)
    write_atomic(out_dir / "config.yaml", lambda fh: fh.write(text), "w", encoding="utf-8")


def closing_line(result: FitResult, out_dir: Path) -> str:
    """What the run says when it stops (how, where its checkpoint is, TensorBoard)."""
    if result.reason == "interrupted":
        return (
            f"interrupted by {result.signal} at step {result.step}: saved checkpoint "
            f"{result.checkpoint}; continue with the same command and --resume"
        )
    command = tensorboard_command(out_dir / "tb", out_dir.resolve().name)
    best = (
        f"best validation loss {result.best_loss:.4g}"
        if math.isfinite(result.best_loss)
        else "no validation ran (train.eval_every is more steps than the run made)"
    )
    return (
        f"stopped at step {result.step} ({result.reason}); {best}; "
        f"checkpoint {result.checkpoint}; TensorBoard: {command}"
    )


def _check(
    recipe: str | Path, overrides: Sequence[str], out_dir: Path, resume: bool, restart: bool
) -> tuple[ExperimentConfig, CheckpointManager]:
    """The recipe's config and the run's checkpoint manager, once the recipe, the options
    and the experiment folder allow the run."""
    try:
        cfg = load_config(recipe, overrides)
    except ConfigError as err:
        raise RunError(str(err)) from None
    if resume and restart:
        raise RunError("give either --resume or --restart, not both")
    if out_dir.exists() and not out_dir.is_dir():
        raise RunError(f"--out {out_dir} is a file; give a folder for the experiment")
    manager = CheckpointManager(out_dir / "checkpoints", cfg.train.keep_last)
    if (manager.checkpoints() or manager.best_path.exists()) and not (resume or restart):
        raise RunError(
            f"{out_dir} already holds checkpoints; pass --resume to continue or --restart "
            "to delete them and start over"
        )
    return cfg, manager


def _config_text(cfg: ExperimentConfig) -> str:
    return yaml.safe_dump(cfg.to_dict(), sort_keys=False)


def _resume(trainer: Trainer, out_dir: Path, say: Callable[[str], None]) -> None:
    try:
        path = trainer.resume()
    except CheckpointError as err:
        raise RunError(str(err)) from None
    if path:
        say(f"resumed from {path} at step {trainer.step}")
    else:
        say(f"no checkpoint in {out_dir}; starting from step 0")
