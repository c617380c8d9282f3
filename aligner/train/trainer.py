"""The generic training loop over the Task protocol (aligner/tasks/base.py): the trainer
owns the optimizer, schedule, clipping, precision, DDP, checkpoints and TensorBoard; the
task owns the model, data and loss.

Exact resume: a checkpoint holds the model, optimizer, scheduler, grad scaler, step, epoch,
the batches consumed in that epoch (the sampler replays the rest of it deterministically)
and every RNG state; validation saves and restores the RNG states around itself, so how
often one validates does not change the training trajectory.

With ``train.ema`` (a decay, e.g. 0.999) the trainer keeps an exponential moving average of
the weights (`aligner.train.ema`): validation, ``best.pt`` and each checkpoint's ``model``
are the average (what inference loads), the trained weights are its ``raw_model``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, Sampler

from aligner.config import TrainConfig, to_dict
from aligner.tasks.base import Task
from aligner.train import distributed as ddp
from aligner.train.batches import autocast, make_batch_sampler, make_loader, to_device
from aligner.train.ema import WeightAverage
from aligner.train.errors import TrainingDiverged, TrainingError
from aligner.train.manager import (
    CheckpointManager,
    resume_state,
    rng_state,
    seed_everything,
    set_rng_state,
)
from aligner.train.progress import Progress
from aligner.train.safety import Interrupts
from aligner.train.schedule import build_optimizer
from aligner.train.tensorboard import Logger, RunningMeans
from aligner.train.validation import run_validation

log = logging.getLogger(__name__)


@dataclass
class FitResult:
    """How `Trainer.fit` ended: where, why, the best validation loss, the last checkpoint."""

    step: int
    epoch: int
    reason: str  # "max_steps" | "max_minutes" | "interrupted"
    best_loss: float
    checkpoint: Path | None
    signal: str | None = None  # "SIGINT" or "SIGTERM" when interrupted


class Trainer:
    """Trains `task.model` by `cfg`, writing checkpoints and TensorBoard logs under `out_dir`.

    ``out_dir/checkpoints/ckpt-STEP.pt`` (last ``cfg.keep_last``) and ``best.pt``;
    ``out_dir/tb`` the TensorBoard events. `config` is the full experiment config dict
    stored in each checkpoint.
    """

    def __init__(
        self,
        task: Task,
        cfg: TrainConfig,
        out_dir: str | Path,
        config: dict[str, Any] | None = None,
        info: ddp.DistInfo | None = None,
        checkpoints: CheckpointManager | None = None,
    ) -> None:
        self.task, self.cfg, self.out_dir = task, cfg, Path(out_dir)
        self.config = config if config is not None else {"train": to_dict(cfg)}
        self.info = info or ddp.current()
        self.device = self.info.device
        self.checkpoints = checkpoints or CheckpointManager(
            self.out_dir / "checkpoints", cfg.keep_last
        )
        self.model = ddp.wrap_model(task.model.to(self.device), self.info)
        self.params = [p for p in task.model.parameters() if p.requires_grad]
        self.optimizer, self.scheduler = build_optimizer(self.params, cfg)
        self.average = WeightAverage(task.model, cfg.ema) if cfg.ema is not None else None
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=cfg.precision == "fp16")
        self.sampler = make_batch_sampler(
            task.lengths(task.train_set), cfg.batch_size, True, cfg.seed, self.info
        )
        self.step = self.epoch = self.batches_done = self.nonfinite_in_row = 0
        self.best_loss = math.inf
        self.validated_step = -1  # the step of the last validation
        self.resumed = False
        self.logger: Logger | None = None
        self.progress: Progress | None = None

    # ----------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly (this rank's view; RNG of every rank);
        ``model``: the weights to use (the average, with ``train.ema``)."""
        trained = ddp.unwrap_model(self.model).state_dict()
        averaged = {} if self.average is None else {"raw_model": trained}
        return {
            "model": trained if self.average is None else self.average.state_dict(),
            **averaged,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "step": self.step,
            "epoch": self.epoch,
            "sampler": self.sampler.state_dict(consumed=self.batches_done),
            "rng": ddp.gather_objects(rng_state(), self.info),
            "best_loss": self.best_loss,
            "config": self.config,
            "symbols": getattr(self.task, "symbols", {}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        trained = state.get("raw_model", state["model"])  # "model" is the average with ema
        ddp.unwrap_model(self.model).load_state_dict(trained)
        if self.average is not None:  # a run without an average starts one from its weights
            self.average.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.step, self.epoch = int(state["step"]), int(state["epoch"])
        self.sampler.load_state_dict(state["sampler"])
        self.batches_done = int(state["sampler"]["batches_done"])
        self.best_loss = float(state.get("best_loss", math.inf))
        self.resumed = True
        rngs = state["rng"]
        if len(rngs) != self.info.world_size:
            log.warning(
                "checkpoint has %d RNG states for %d ranks", len(rngs), self.info.world_size
            )
        set_rng_state(rngs[self.info.rank % len(rngs)])

    def resume(self, path: str | Path | None = None) -> Path | None:
        """Load `path` (default: the latest checkpoint in out_dir); None when there is none.
        CheckpointError (one line) for a checkpoint of another task or one that does not
        fit this run (`aligner.train.manager.resume_state`)."""
        path = Path(path) if path else self.checkpoints.latest()
        if path is None:
            return None
        resume_state(path, self.config.get("task"), self.load_state_dict, self.config)
        return path

    # ----------------------------------------------------------------- pieces
    def _autocast(self) -> contextlib.AbstractContextManager:
        return autocast(self.device, self.cfg.precision)

    def _loader(self, dataset: Any, sampler: Sampler) -> DataLoader:
        return make_loader(dataset, sampler, self.task.collate, self.cfg.num_workers, self.cfg.seed)

    def train_step(self, batch: dict[str, Any]) -> dict[str, float] | None:
        """One optimizer update; None when the loss (or gradient) was NaN/inf and skipped."""
        self.model.train()
        with self._autocast():
            loss, parts = self.task.loss(self.model, to_device(batch, self.device), self.step)
        if ddp.any_true(not bool(torch.isfinite(loss.detach())), self.info):
            self.optimizer.zero_grad(set_to_none=True)
            return None
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        clip = self.cfg.grad_clip if self.cfg.grad_clip > 0 else math.inf
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.params, clip))
        finite = math.isfinite(grad_norm)
        if finite or self.scaler.is_enabled():  # the scaler skips inf/NaN grads itself
            self.scaler.step(self.optimizer)
            self.scaler.update()
            if self.average is not None:
                self.average.update(ddp.unwrap_model(self.model), self.step)
        self.optimizer.zero_grad(set_to_none=True)
        if not finite:
            overflow = {"loss": float(loss.detach()), "overflow": 1.0}
            return overflow if self.scaler.is_enabled() else None
        lr = self.scheduler.get_last_lr()[0]
        self.scheduler.step()
        return {"loss": float(loss.detach()), **parts, "grad_norm": grad_norm, "lr": lr}

    def validate(self) -> dict[str, float]:
        """Run `task.validate` on rank 0 with the RNG states left untouched."""
        metrics: dict[str, float] = {}
        if self.info.is_main:
            model = ddp.unwrap_model(self.model) if self.average is None else self.average.module
            metrics = run_validation(
                self.task, model, self.cfg, self.device, self.step, self.logger
            )
        ddp.barrier(self.info)
        return metrics

    def save(self, is_best: bool = False, only_best: bool = False) -> Path | None:
        state = self.state_dict()  # collective: every rank takes part
        if not self.info.is_main:
            return None
        if only_best:
            return self.checkpoints.save_best(state)
        return self.checkpoints.save(state, self.step, is_best=is_best)

    # ----------------------------------------------------------------- loop
    def fit(self) -> FitResult:
        """Train until `max_steps` or `max_minutes`, or until SIGINT/SIGTERM (then save a
        checkpoint and stop; a second signal stops at once); see the module docstring."""
        cfg, info = self.cfg, self.info
        if not self.resumed:  # a fresh run: the same seed gives the same run
            seed_everything(cfg.seed + info.rank)
            if self.average is not None:  # the weights as they start (train.init_from's)
                self.average.load_state_dict(ddp.unwrap_model(self.model).state_dict())
        if info.is_main:
            self.checkpoints.remove_stale_temporaries()
        self.logger = Logger(self.out_dir / "tb", enabled=info.is_main)
        try:
            self.logger.run_text(self.out_dir, self.config, self.step)
            start = time.monotonic()
            self.progress = Progress(cfg, self.step, info.is_main and cfg.progress, start)
            last_saved = self.step if self.resumed else None
            with Interrupts() as interrupts:
                try:
                    reason, last_saved = self._loop(start, interrupts, last_saved)
                    if reason == "max_minutes" and self.validated_step != self.step:
                        # the time budget's last step is validated too: best.pt may be it
                        saved = self._validate_and_save()
                        last_saved = saved if saved is not None else last_saved
                finally:
                    self.progress.close()
                if self.step != last_saved:
                    path = self.save()
                else:
                    path = self.checkpoints.latest() if info.is_main else None
        finally:
            self.logger.close()
        return FitResult(
            self.step, self.epoch, reason, self.best_loss, path, interrupts.signal_name
        )

    def _loop(
        self, start: float, interrupts: Interrupts, last_saved: int | None
    ) -> tuple[str, int | None]:
        """The epochs of `fit`; (why it stopped, the last step saved)."""
        cfg, window = self.cfg, RunningMeans()
        while self.step < cfg.max_steps:
            self.sampler.set_epoch(self.epoch)  # after a resume it skips the done batches
            loader = self._loader(self.task.train_set, self.sampler)
            if len(loader) == 0:
                raise TrainingError(
                    f"the training set gives no batch of size {cfg.batch_size}; "
                    "add data or lower train.batch_size"
                )
            for batch in loader:
                saved = self._one_step(batch, window)
                last_saved = saved if saved is not None else last_saved
                timeout = cfg.max_minutes is not None and (
                    time.monotonic() - start > 60 * cfg.max_minutes
                )
                if ddp.any_true(timeout or interrupts.signal_name is not None, self.info):
                    return ("interrupted" if interrupts.signal_name else "max_minutes"), last_saved
                if self.step >= cfg.max_steps:
                    return "max_steps", last_saved
            self.epoch, self.batches_done = self.epoch + 1, 0
        return "max_steps", last_saved

    def _one_step(self, batch: dict[str, Any], window: RunningMeans) -> int | None:
        """Train on `batch`, then log/validate/checkpoint as due; the step saved, if any."""
        cfg = self.cfg
        out = self.train_step(batch)
        self.step += 1
        self.batches_done += 1
        if out is None:
            self.nonfinite_in_row += 1
            self.logger.scalar("train/nonfinite_skipped", 1.0, self.step)
            log.warning("step %d: loss or gradient is NaN/inf; update skipped", self.step)
            if self.nonfinite_in_row >= cfg.max_nonfinite:
                self._diverged()
        else:
            self.nonfinite_in_row = 0
            window.add(out)
        self.progress.update(self.step, out["loss"] if out else None)
        if self.step % cfg.log_every == 0 and window.count:
            self.logger.scalars(window.means(), self.step, prefix="train")
            self.logger.scalar("train/steps_per_s", window.rate(), self.step)
            window.reset()
        if self.step % cfg.eval_every == 0:
            return self._validate_and_save()
        if self.step % cfg.checkpoint_every == 0:
            self.save()
            return self.step
        return None

    def _validate_and_save(self) -> int | None:
        metrics = self.validate()
        self.validated_step = self.step
        self.progress.validation(self.step, metrics)
        loss = metrics.get("loss", math.inf)
        is_best = bool(ddp.any_true(loss < self.best_loss, self.info))
        if is_best:
            self.best_loss = loss
        if self.step % self.cfg.checkpoint_every == 0:
            self.save(is_best=is_best)
            return self.step
        if is_best:
            self.save(only_best=True)
        return None

    def _diverged(self) -> None:
        path = self.save()
        self.logger.close()
        raise TrainingDiverged(
            f"loss was NaN/inf for {self.cfg.max_nonfinite} steps in a row (up to step "
            f"{self.step}); stopped with checkpoint {path or self.checkpoints.latest()}. "
            "Lower train.lr or raise train.grad_clip, check the data, then --resume"
        )
