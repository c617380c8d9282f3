"""What TTS and VC share as trainer tasks: the Tacotron loss, validation metrics and the
TensorBoard figures of the fixed validation items.

A subclass says how a batch feeds the model (``source(batch)``) and how to name the
source positions of an item in plots (``source_labels``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.utils.data import Dataset

from aligner.attention.losses import decoder_steps
from aligner.attention.metrics import alignment_metrics, summarize
from aligner.audio.features import MelConfig, MelStats
from aligner.audio.vocoder import GriffinLim
from aligner.config import ConfigError, from_dict
from aligner.models.tacotron.model import (
    OLD_ATTENTION_KEYS,
    Tacotron,
    TacotronConfig,
    TacotronOutput,
    old_attention_keys,
)
from aligner.models.vocoders.base import VocoderError, load_vocoder
from aligner.tasks.free_running import log_free_running, texts_markdown
from aligner.tasks.speech_losses import TacotronLossConfig, tacotron_loss
from aligner.tasks.truth import TruthErrors

DEFAULT_INFER_TEXTS = [
    "Seven quiet violins drifted above the harbour at dawn.",
    "A curious otter juggled three pebbles beside the frozen waterfall.",
]


@dataclass
class SpeechLog:
    """What validation draws for the fixed first ``plot_items`` validation items, and the
    free-running synthesis of ``infer_items`` inputs (TTS: the first of ``infer_texts``
    that are not training texts; VC: the first validation items), each decoded for at most
    ``infer_max_steps`` decoder steps (see `aligner.tasks.free_running`; 0 items: off)."""

    plot_items: int = 4
    audio_items: int = 1
    griffin_lim_iters: int = 32
    vocoder: str | None = None  # griffin-lim | hifigan:DIR | a vocoder's experiment folder
    min_focus: float = 0.4
    infer_items: int = 2
    infer_texts: list[str] = field(default_factory=lambda: list(DEFAULT_INFER_TEXTS))
    infer_max_steps: int = 200


def model_config(
    model: dict[str, Any], n_mels: int, n_symbols: int = 0
) -> tuple[TacotronConfig, TacotronLossConfig]:
    """Split the recipe's ``model:`` section into the Tacotron config and ``model.loss``.

    ``n_mels`` comes from the feature settings (``data.mel``) and ``n_symbols`` from the symbol
    table; a recipe that sets either differently is rejected.
    """
    model = dict(model)
    old = old_attention_keys(model)
    if old:  # recipes of aligner <= 0.1: still read, with a one-line note
        moved = ", ".join(f"model.decoder.{k} -> model.{OLD_ATTENTION_KEYS[k]}" for k in old)
        print(f"note: the recipe uses old attention keys; rename {moved}", file=sys.stderr)
    loss = from_dict(TacotronLossConfig, model.pop("loss", None), where="model.loss")
    set_data_sizes(model, n_mels=n_mels, n_symbols=n_symbols)
    return TacotronConfig.from_dict(model, where="model"), loss


def set_data_sizes(model: dict[str, Any], **sizes: int) -> None:
    """Put the sizes that the data decides (``n_mels``, ``n_symbols``) into the recipe's
    ``model:`` dict; ConfigError when the recipe sets one differently."""
    for key, value in sizes.items():
        if model.get(key, value) != value:
            raise ConfigError(
                f"model.{key}={model[key]} disagrees with the data ({value}); remove it"
            )
        model[key] = value


def first_items(dataset: Any, n: int, collate: Any, device: torch.device) -> dict[str, Any]:
    """The batch of the first `n` items of `dataset` on `device`: the fixed items whose
    figures TensorBoard shows at every validation."""
    batch = collate([dataset[i] for i in range(min(n, len(dataset)))])
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


class SpeechTask:
    """Tacotron training on (source, target mel) batches; see ``aligner.tasks.base.Task``."""

    model: Tacotron
    train_set: Dataset
    valid_set: Dataset
    symbols: dict[str, Any]
    skips_suspect = True  # a skipped token marks a suspect alignment (`Role.skips_suspect`)

    def __init__(
        self,
        model: Tacotron,
        train_set: Dataset,
        valid_set: Dataset,
        loss_cfg: TacotronLossConfig,
        mel_cfg: MelConfig,
        target_stats: MelStats,
        log: SpeechLog,
    ) -> None:
        self.model, self.train_set, self.valid_set = model, train_set, valid_set
        self.loss_cfg, self.mel_cfg, self.target_stats, self.log = (
            loss_cfg,
            mel_cfg,
            target_stats,
            log,
        )
        self.r = model.config.r
        self._vocoder = None
        if self.log.vocoder not in (None, "griffin-lim"):
            self.vocoder()  # a vocoder that does not fit is refused before training starts
        self._texts_logged = False
        self.guides: Any = None  # aligner.tasks.guides.Guides when the durations guide

    # -- subclass hooks ------------------------------------------------------------
    def source(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        """(src, src_lengths) of a batch."""
        raise NotImplementedError

    def source_labels(self, batch: dict[str, Any], index: int) -> list[str] | None:
        """Labels of the memory positions of item ``index`` (None: numbered)."""
        return None

    def timing(self) -> dict[str, int]:
        """What an alignment plot needs to put seconds on its time axis."""
        cfg = self.mel_cfg
        return {"r": self.r, "hop_length": cfg.hop_length, "sample_rate": cfg.sample_rate}

    def infer_text(self, name: str) -> str:
        """What free-running input `name` says (for the Text dashboard)."""
        return name

    def infer_sources(self) -> list[tuple[str, torch.Tensor, list[str] | None]]:
        """(name, source, labels) of the free-running inputs (see ``SpeechLog``)."""
        return []

    # -- Task protocol -------------------------------------------------------------
    def lengths(self, dataset: Dataset) -> Sequence[int]:
        return dataset.lengths

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> TacotronOutput:
        src, src_lengths = self.source(batch)
        return model(src, src_lengths, batch["mel"], batch["mel_lengths"])

    def loss(
        self, model: nn.Module, batch: dict[str, Any], step: int
    ) -> tuple[torch.Tensor, dict[str, float]]:
        out = self.forward(model, batch)
        guide = {k: batch[k] for k in ("guide", "guided")} if "guide" in batch else None
        return tacotron_loss(
            out, batch["mel"], batch["mel_lengths"], self.r, step, self.loss_cfg, guide
        )

    def add_guide(self, batch: dict[str, Any], n_sources: torch.Tensor, n_cols: int) -> dict:
        """`batch` with its ``guide`` and ``guided`` when the durations guide the attention;
        `n_sources` ``(B,)`` and `n_cols` are the memory's lengths and padded length."""
        if self.guides is not None:
            batch.update(self.guides.batch(batch["ids"], n_sources, batch["mel"].size(1), n_cols))
        return batch

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """Mel + stop loss (no guided term, so values compare across steps) and the core's
        alignment metrics over the validation batches; figures of the fixed items."""
        no_guide = TacotronLossConfig(**{**self.loss_cfg.__dict__, "guided": None})
        total, count, metrics = 0.0, 0, []
        truth = TruthErrors()
        for batch in batches:
            out = self.forward(model, batch)
            loss, _ = tacotron_loss(out, batch["mel"], batch["mel_lengths"], self.r, step, no_guide)
            n = len(batch["ids"])
            total, count = total + float(loss) * n, count + n
            metrics.append(self.alignment_metrics(out, batch))
            self.truth(out, batch, truth)
        result = {"loss": total / max(count, 1)}
        if metrics:
            merged = {k: torch.cat([m[k] for m in metrics]) for k in metrics[0]}
            result.update(self.summary(merged))
        result.update(truth.means())
        if logger is not None and getattr(logger, "enabled", True):
            self.log_fixed_items(model, step, logger)
        if self.log.infer_items > 0:
            result.update(log_free_running(self, model, step, logger))
        return result

    # -- helpers -------------------------------------------------------------------
    def truth(self, out: TacotronOutput, batch: dict[str, Any], errors: TruthErrors) -> None:
        """Add the boundary errors of `batch`'s teacher-forced durations against the
        reference timings of its items (a task whose items have none adds nothing)."""

    def required_positions(self, batch: dict[str, Any]) -> torch.Tensor | None:
        """(B, T_enc) bool: memory positions the skip metric counts (None: all valid)."""
        return None

    def alignment_metrics(
        self, out: TacotronOutput, batch: dict[str, Any]
    ) -> dict[str, torch.Tensor]:
        """Per-item core metrics of the teacher-forced alignments (B, S, T_enc) of `batch`."""
        steps = decoder_steps(batch["mel_lengths"].to(out.alignments.device), self.r)
        values = alignment_metrics(
            out.alignments.float(),
            steps,
            out.enc_mask.sum(1),
            self.required_positions(batch),
            self.r,
        )
        return {k: v.cpu() for k, v in values.items()}

    def summary(self, per_item: dict[str, torch.Tensor]) -> dict[str, float]:
        """`summarize` of per-item metrics with this task's focus bar and skip rule."""
        return summarize(per_item, self.log.min_focus, self.skips_suspect)

    def fixed_batch(self, device: torch.device) -> dict[str, Any]:
        """The first ``plot_items`` validation items, always the same ones."""
        return first_items(self.valid_set, self.log.plot_items, self.collate, device)

    def vocoder(self):
        """What the logged audio goes through: ``data.log.vocoder`` (`load_vocoder`), else
        Griffin-Lim from zero phases (the same audio for the same mel at every step)."""
        if self._vocoder is None:
            if self.log.vocoder in (None, "griffin-lim"):
                self._vocoder = GriffinLim(
                    self.mel_cfg, n_iter=self.log.griffin_lim_iters, rand_init=False
                )
            else:
                try:
                    self._vocoder = load_vocoder(self.log.vocoder, self.mel_cfg)
                except VocoderError as err:
                    raise ConfigError(f"data.log.vocoder: {err}") from None
        return self._vocoder

    def vocode(self, mel: torch.Tensor) -> torch.Tensor:
        """The logged audio (L,) of a denormalized mel (T, M): `vocoder` in fp32, outside
        the run's autocast (Griffin-Lim has no bf16)."""
        with torch.autocast(mel.device.type, enabled=False):
            return self.vocoder()(mel.float())

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """Alignment heatmaps, metrics, predicted vs target mels and Griffin-Lim audio of the
        fixed validation items (tags ``alignment/<id>``, ``mel/<id>/...``, ``audio/<id>``)."""
        if self.log.plot_items < 1:
            return
        batch = self.fixed_batch(next(model.parameters()).device)
        if not self._texts_logged:  # once per run: what the fixed items and inputs say
            self._texts_logged = True
            texts = {str(it["id"]): str(it.get("text", "")) for it in self.valid_set.items}
            rows = [(str(i), texts.get(str(i), "")) for i in batch["ids"]]
            logger.text("fixed/items", texts_markdown(rows), step)
            inputs = [(name, self.infer_text(name)) for name, _, _ in self.infer_sources()]
            logger.text("infer/inputs", texts_markdown(inputs), step)
        out = self.forward(model, batch)
        per_item = self.alignment_metrics(out, batch)
        logger.scalars(self.summary(per_item), step, prefix="fixed")
        steps = decoder_steps(batch["mel_lengths"], self.r)
        for i, item in enumerate(batch["ids"]):
            t, s, n = int(batch["mel_lengths"][i]), int(steps[i]), int(out.enc_mask[i].sum())
            logger.alignment(
                f"alignment/{item}",
                out.alignments[i, :s, :n],
                step,
                self.source_labels(batch, i),
                **self.timing(),
            )
            if "guide" in batch and bool(batch["guided"][i]):
                logger.alignment(
                    f"guide/{item}",
                    batch["guide"][i, :s, :n],
                    step,
                    self.source_labels(batch, i),
                    **self.timing(),
                )
            logger.mel(f"mel/{item}/predicted", out.mel_post[i, :t], step)
            logger.mel(f"mel/{item}/target", batch["mel"][i, :t], step)
            if i < self.log.audio_items:
                mel = self.target_stats.denormalize(out.mel_post[i, :t].float().cpu())
                logger.audio(f"audio/{item}", self.vocode(mel), self.mel_cfg.sample_rate, step)
