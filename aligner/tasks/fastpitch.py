"""Text-to-speech with a FastPitch (family ``fastpitch``) as a trainer task: trained on
given durations, pitch and energy (`aligner.tasks.fastpitch_data`), never on an alignment
of its own.

Recipe sections::

    task: tts
    family: fastpitch
    data: {train: train.jsonl, valid: valid.jsonl, tokenizer: phonemes, durations: durations,
           mel: {...}}
    model: {dim: 128, encoder_layers: 2, ..., loss: {mel: mse, duration: 0.1, pitch: 0.1}}

``data.durations``: the folders of the alignment model's records (``aligner align``) or of
another tool's TextGrids, as a Tacotron's durations guide reads them. Loss: the mel's L1 or
MSE over valid frames (and the postnet's, with one), plus weighted MSEs of log(1 + frames)
per token, of the normalized pitch and of the energy. Validation: those losses, the
duration error of the predicted durations (frames and ms), and the word and phone boundary
errors of the predicted durations fitted to each recording's length against the items'
reference timings (``word_boundary_ms``: what ``aligner align`` then ``score-alignment``
measure); TensorBoard: target, teacher-forced and synthesized mels, given and predicted
durations, synthesized audio.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from aligner.alignment.tiers import optional_tokens, token_tiers
from aligner.audio.world import WorldUnavailable, modules
from aligner.config import ConfigError, from_dict
from aligner.data.pitch import PitchCache
from aligner.models.fastpitch.layers import fit_durations, token_path
from aligner.models.fastpitch.model import FastPitch, FastPitchConfig, FastPitchOutput
from aligner.tasks.fastpitch_data import (
    FastPitchDataset,
    collate_fastpitch,
    pitch_stats,
    required_durations,
)
from aligner.tasks.guides import dataset_durations, folders_of, read_records
from aligner.tasks.speech import SpeechTask, first_items, set_data_sizes
from aligner.tasks.speech_data import text_speech_data
from aligner.tasks.speech_losses import duration_loss, masked_mean
from aligner.tasks.truth import References, TruthErrors


@dataclass
class FastPitchLoss:
    """``model.loss``: the mel distance and the weights of the variance predictors' MSEs
    (FastPitch's 0.1 each). ``duration_scale``: the durations' MSE on log(1 + frames)
    (FastPitch's) or on the frames themselves, which weighs a long sound's error as much
    as the timing of everything after it moves: what the boundaries' error adds up."""

    mel: Literal["l1", "mse"] = "mse"
    duration: float = 0.1
    duration_scale: Literal["log", "frames"] = "log"
    pitch: float = 0.1
    energy: float = 0.1


def fastpitch_loss(
    out: FastPitchOutput, batch: dict[str, Any], cfg: FastPitchLoss
) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted loss of a teacher-forced batch and its parts (floats)."""
    t = out.mel.size(1)
    target = batch["mel"][:, :t].to(out.mel.dtype)
    dist = nn.functional.l1_loss if cfg.mel == "l1" else nn.functional.mse_loss
    mel = masked_mean(dist(out.mel, target, reduction="none"), out.mel_mask)
    if out.mel_post is not out.mel:
        mel = mel + masked_mean(dist(out.mel_post, target, reduction="none"), out.mel_mask)
    tokens = out.token_mask
    duration = duration_loss(out.log_durations, batch["durations"], tokens, cfg)
    parts = {"mel": mel, "duration": duration}
    total = mel + cfg.duration * parts["duration"]
    for name in ("pitch", "energy"):
        predicted = getattr(out, name)
        if predicted is not None:
            parts[name] = masked_mean((predicted - batch[name]) ** 2, tokens)
            total = total + getattr(cfg, name) * parts[name]
    return total, {k: float(v.detach()) for k, v in parts.items()}


class FastPitchTask:
    """FastPitch training on (tokens, durations, pitch, energy, mel) batches; see
    ``aligner.tasks.base.Task``."""

    vocoder = SpeechTask.vocoder  # data.log.vocoder, else Griffin-Lim from zero phases
    vocode = SpeechTask.vocode

    def __init__(self, model: FastPitch, corpus: Any, train_set, valid_set, loss_cfg) -> None:
        self.model, self.train_set, self.valid_set = model, train_set, valid_set
        self.loss_cfg, self.mel_cfg, self.log = loss_cfg, corpus.mel_cfg, corpus.data.log
        self.target_stats, self.table, self.kind = corpus.stats, corpus.table, corpus.data.tokenizer
        self.references = References(valid_set.items, self.mel_cfg)
        self.symbols: dict[str, Any] = {}
        self._vocoder = None
        self.frame_ms = 1000.0 * self.mel_cfg.hop_length / self.mel_cfg.sample_rate

    def lengths(self, dataset: FastPitchDataset) -> list[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_fastpitch(examples)

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> FastPitchOutput:
        return model(
            batch["tokens"], batch["token_lengths"], batch["durations"], batch["pitch"],
            batch["energy"],
        )  # fmt: skip

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        return fastpitch_loss(self.forward(model, batch), batch, self.loss_cfg)

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """The loss and its parts, the predicted durations' error against the given ones
        (``duration_frames``, ``duration_ms``: mean absolute per token) and the boundary
        errors of the predicted durations against the reference timings."""
        sums: dict[str, float] = {}
        count, tokens, abs_frames = 0, 0, 0.0
        truth = TruthErrors()
        for batch in batches:
            out = self.forward(model, batch)
            loss, parts = fastpitch_loss(out, batch, self.loss_cfg)
            n = len(batch["ids"])
            for key, value in {"loss": float(loss), **parts}.items():
                sums[key] = sums.get(key, 0.0) + value * n
            count += n
            predicted = torch.expm1(out.log_durations).clamp(min=0).round()
            abs_frames += float(((predicted - batch["durations"]).abs() * out.token_mask).sum())
            tokens += int(out.token_mask.sum())
            self.truth(out, batch, truth)
        result = {k: v / max(count, 1) for k, v in sums.items()}
        result["duration_frames"] = abs_frames / max(tokens, 1)
        result["duration_ms"] = result["duration_frames"] * self.frame_ms
        result.update(truth.means())
        if logger is not None and getattr(logger, "enabled", True) and self.log.plot_items > 0:
            self.log_fixed_items(model, step, logger)
        return result

    def truth(self, out: FastPitchOutput, batch: dict[str, Any], errors: TruthErrors) -> None:
        """Boundary errors of each item's predicted durations, fitted to its frames."""
        sec = self.frame_ms / 1000.0
        for i, uid in enumerate(batch["ids"]):
            reference = self.references.get(uid)
            if reference is None:
                continue
            n, frames = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            tokens = self.table.decode(batch["tokens"][i, :n].tolist())
            required = torch.from_numpy(~optional_tokens(tokens))
            predicted = torch.expm1(out.log_durations[i, :n].float()).clamp(min=0)
            durations = fit_durations(predicted, frames, required).tolist()
            pauses = self.references.pauses(uid, frames)
            errors.add(reference, token_tiers(tokens, durations, sec, self.kind, pauses=pauses))

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """Target, teacher-forced and synthesized mels (``mel/<id>/...``), given and
        predicted durations as token paths (``durations/<id>/...``), synthesized audio."""
        device = next(model.parameters()).device
        batch = first_items(self.valid_set, self.log.plot_items, self.collate, device)
        forced = self.forward(model, batch)
        free = model.infer(batch["tokens"], batch["token_lengths"])
        timing = {"r": 1, "hop_length": self.mel_cfg.hop_length}
        timing["sample_rate"] = self.mel_cfg.sample_rate
        for i, uid in enumerate(batch["ids"]):
            n, t = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            t_free = int(free.mel_mask[i].sum())
            labels = self.table.decode(batch["tokens"][i, :n].tolist())
            logger.mel(f"mel/{uid}/target", batch["mel"][i, :t], step)
            logger.mel(f"mel/{uid}/predicted", forced.mel_post[i, :t], step)
            logger.mel(f"mel/{uid}/synthesized", free.mel_post[i, :t_free], step)
            for name, durations in (("given", batch["durations"]), ("predicted", free.durations)):
                path = token_path(durations[i, :n].cpu())
                logger.alignment(f"durations/{uid}/{name}", path, step, labels, **timing)
            if i < self.log.audio_items:
                mel = self.target_stats.denormalize(free.mel_post[i, :t_free].float().cpu())
                logger.audio(f"audio/{uid}", self.vocode(mel), self.mel_cfg.sample_rate, step)


def build(cfg: Any, data_dir: Path) -> FastPitchTask:
    """The FastPitch task of an ``ExperimentConfig`` from manifests under ``data_dir`` and
    the durations ``data.durations`` names."""
    corpus = text_speech_data(cfg, data_dir)
    model_dict = dict(cfg.model or {})
    loss_cfg = from_dict(FastPitchLoss, model_dict.pop("loss", None), where="model.loss")
    set_data_sizes(model_dict, n_mels=corpus.mel_cfg.n_mels, n_symbols=len(corpus.table))
    fp_cfg = FastPitchConfig.from_dict(model_dict)
    folders = folders_of(corpus.data.durations, data_dir, "durations")
    if not folders:
        raise ConfigError(
            "data.durations: a FastPitch learns from durations: give the folders `aligner align "
            "--checkpoint ALIGNMENT_MODEL` wrote for the train and valid manifests"
        )
    pitch = None
    if fp_cfg.pitch:
        try:
            modules()
        except WorldUnavailable as err:
            raise ConfigError(f"model.pitch: {err}, or set model.pitch: false") from None
        pitch = PitchCache(Path(data_dir) / corpus.data.cache_dir, corpus.mel_cfg)
    records = read_records(folders, corpus.mel_cfg, "durations")
    frame = corpus.mel_cfg.hop_length / corpus.mel_cfg.sample_rate
    sets = [
        FastPitchDataset(
            base,
            required_durations(
                dataset_durations(base, corpus.table.decode, records, frame, split),
                len(base.items),
                split,
            ),
            pitch,
        )
        for base, split in ((corpus.train_set, "training"), (corpus.valid_set, "validation"))
    ]
    stats = pitch_stats(sets[0], corpus.data.stats_items)
    sets[0].stats = sets[1].stats = stats
    task = FastPitchTask(FastPitch(fp_cfg), corpus, sets[0], sets[1], loss_cfg)
    task.symbols = {**corpus.symbols("tts", fp_cfg.to_dict()), "pitch": stats.to_dict()}
    return task
