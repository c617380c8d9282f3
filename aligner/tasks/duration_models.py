"""What the tasks of the duration models share (FastPitch, `aligner.tasks.fastpitch`;
FastVC, `aligner.tasks.fastvc`): models trained on given frames per encoder position
(tokens, or a source mel's steps) that decode every frame at once.

`DurationTask` holds the trainer's side of them: the loss of a batch, the validation loop
(the loss and its parts averaged over the items, what each family measures of its
predicted durations, the boundary or mapping errors against reference timings) and the
TensorBoard figures of the fixed validation items (target, teacher-forced and free-running
mels, given and predicted durations as paths, free-running audio). A family's task names
its forward pass, its loss, what it measures and the labels of its encoder positions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, ClassVar

import torch
from torch import nn

from aligner.models.fastpitch.layers import DurationOutput, token_path
from aligner.tasks.speech import SpeechTask, first_items
from aligner.tasks.truth import TruthErrors


class DurationTask:
    """The trainer's task of a duration model; see ``aligner.tasks.base.Task``.

    Subclasses set ``model``, ``train_set``, ``valid_set`` (datasets with ``lengths``),
    ``mel_cfg``, ``log`` (``data.log``), ``target_stats`` and ``_vocoder = None``, and
    implement `forward`, `loss_of`, `measure`, `summarize`, `infer` and `labels`."""

    vocoder = SpeechTask.vocoder  # data.log.vocoder, else Griffin-Lim from zero phases
    vocode = SpeechTask.vocode
    free_name: ClassVar[str] = "synthesized"  # the TensorBoard name of the free-running mel

    def lengths(self, dataset: Any) -> list[int]:
        return dataset.lengths

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> DurationOutput:
        """Teacher forcing on the given durations."""
        raise NotImplementedError

    def infer(self, model: nn.Module, batch: dict[str, Any]) -> DurationOutput:
        """Free running on the predicted durations."""
        raise NotImplementedError

    def loss_of(
        self, out: DurationOutput, batch: dict[str, Any]
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """The weighted loss of a teacher-forced batch and its parts (floats)."""
        raise NotImplementedError

    def measure(
        self,
        out: DurationOutput,
        batch: dict[str, Any],
        tally: dict[str, float],
        truth: TruthErrors,
    ) -> None:
        """Add a validation batch's counts to `tally` and its timing errors to `truth`."""
        raise NotImplementedError

    def summarize(self, tally: dict[str, float]) -> dict[str, float]:
        """The validation metrics of the summed `tally`."""
        raise NotImplementedError

    def labels(self, batch: dict[str, Any], i: int, n: int) -> list[str]:
        """The names of item `i`'s `n` encoder positions (the durations figures' axis)."""
        raise NotImplementedError

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        return self.loss_of(self.forward(model, batch), batch)

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """The loss and its parts (means over the items), the family's measures of its
        predicted durations (`summarize`) and their timing errors (`TruthErrors.means`)."""
        sums: dict[str, float] = defaultdict(float)
        tally: dict[str, float] = defaultdict(float)
        count = 0
        truth = TruthErrors()
        for batch in batches:
            out = self.forward(model, batch)
            loss, parts = self.loss_of(out, batch)
            n = len(batch["ids"])
            for key, value in {"loss": float(loss), **parts}.items():
                sums[key] += value * n
            count += n
            self.measure(out, batch, tally, truth)
        result = {k: v / max(count, 1) for k, v in sums.items()}
        result.update(self.summarize(tally))
        result.update(truth.means())
        if logger is not None and getattr(logger, "enabled", True) and self.log.plot_items > 0:
            self.log_fixed_items(model, step, logger)
        return result

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """Target, teacher-forced and free-running mels (``mel/<id>/target``,
        ``predicted``, `free_name`), given and predicted durations as paths
        (``durations/<id>/given``, ``predicted``), free-running audio (``audio/<id>``)."""
        device = next(model.parameters()).device
        batch = first_items(self.valid_set, self.log.plot_items, self.collate, device)
        forced = self.forward(model, batch)
        free = self.infer(model, batch)
        timing = {"r": 1, "hop_length": self.mel_cfg.hop_length}
        timing["sample_rate"] = self.mel_cfg.sample_rate
        for i, uid in enumerate(batch["ids"]):
            n, t = int(forced.enc_mask[i].sum()), int(batch["mel_lengths"][i])
            t_free = int(free.mel_mask[i].sum())
            logger.mel(f"mel/{uid}/target", batch["mel"][i, :t], step)
            logger.mel(f"mel/{uid}/predicted", forced.mel_post[i, :t], step)
            logger.mel(f"mel/{uid}/{self.free_name}", free.mel_post[i, :t_free], step)
            labels = self.labels(batch, i, n)
            for name, durations in (("given", batch["durations"]), ("predicted", free.durations)):
                path = token_path(durations[i, :n].cpu())
                logger.alignment(f"durations/{uid}/{name}", path, step, labels, **timing)
            if i < self.log.audio_items:
                mel = self.target_stats.denormalize(free.mel_post[i, :t_free].float().cpu())
                logger.audio(f"audio/{uid}", self.vocode(mel), self.mel_cfg.sample_rate, step)
