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

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from aligner.alignment.tiers import optional_tokens, token_tiers
from aligner.audio.world import WorldUnavailable, modules
from aligner.config import ConfigError, from_dict
from aligner.data.pitch import PitchCache
from aligner.models.fastpitch.layers import fit_durations
from aligner.models.fastpitch.model import FastPitch, FastPitchConfig, FastPitchOutput
from aligner.tasks.duration_models import DurationTask
from aligner.tasks.fastpitch_data import (
    FastPitchDataset,
    collate_fastpitch,
    pitch_stats,
    required_durations,
)
from aligner.tasks.guides import (
    dataset_durations,
    dataset_sub_frames,
    folders_of,
    read_records,
)
from aligner.tasks.speech import set_data_sizes
from aligner.tasks.speech_data import text_speech_data
from aligner.tasks.speech_losses import duration_loss, masked_mean, parallel_mel_loss
from aligner.tasks.truth import References, TruthErrors


@dataclass
class FastPitchLoss:
    """``model.loss``: the mel distance and the weights of the variance predictors' MSEs
    (FastPitch's 0.1 each). ``duration_scale``: the durations' MSE on log(1 + frames)
    (FastPitch's) or on the frames themselves, which weighs a long sound's error as much
    as the timing of everything after it moves: what the boundaries' error adds up.
    ``duration_target``: the durations learnt are the whole frames the mel is spread over
    (``whole``), or the same with each boundary between two phones that meet where the
    alignment model put it below one frame (``sub_frame``; `dataset_sub_frames`): the
    rounding to whole frames, up to half a frame at each boundary, is then no part of
    what the durations learn."""

    mel: Literal["l1", "mse"] = "mse"
    duration: float = 0.1
    duration_scale: Literal["log", "frames"] = "log"
    duration_target: Literal["whole", "sub_frame"] = "whole"
    pitch: float = 0.1
    energy: float = 0.1


def fastpitch_loss(
    out: FastPitchOutput, batch: dict[str, Any], cfg: FastPitchLoss
) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted loss of a teacher-forced batch and its parts (floats)."""
    mel = parallel_mel_loss(out, batch["mel"], cfg.mel)
    tokens = out.enc_mask
    duration = duration_loss(out.log_durations, batch["duration_targets"], tokens, cfg)
    parts = {"mel": mel, "duration": duration}
    total = mel + cfg.duration * parts["duration"]
    for name in ("pitch", "energy"):
        predicted = getattr(out, name)
        if predicted is not None:
            parts[name] = masked_mean((predicted - batch[name]) ** 2, tokens)
            total = total + getattr(cfg, name) * parts[name]
    return total, {k: float(v.detach()) for k, v in parts.items()}


class FastPitchTask(DurationTask):
    """FastPitch training on (tokens, durations, pitch, energy, mel) batches; see
    `aligner.tasks.duration_models.DurationTask`."""

    def __init__(self, model: FastPitch, corpus: Any, train_set, valid_set, loss_cfg) -> None:
        self.model, self.train_set, self.valid_set = model, train_set, valid_set
        self.loss_cfg, self.mel_cfg, self.log = loss_cfg, corpus.mel_cfg, corpus.data.log
        self.target_stats, self.table, self.kind = corpus.stats, corpus.table, corpus.data.tokenizer
        self.references = References(valid_set.items, self.mel_cfg)
        self.symbols: dict[str, Any] = {}
        self._vocoder = None
        self.frame_ms = 1000.0 * self.mel_cfg.hop_length / self.mel_cfg.sample_rate

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_fastpitch(examples)

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> FastPitchOutput:
        return model(
            batch["tokens"], batch["token_lengths"], batch["durations"], batch["pitch"],
            batch["energy"],
        )  # fmt: skip

    def infer(self, model: nn.Module, batch: dict[str, Any]) -> FastPitchOutput:
        """Free synthesis as ``aligner synthesize`` runs it: every phone keeps a frame."""
        tokens, lengths = batch["tokens"], batch["token_lengths"]
        required = torch.zeros_like(tokens, dtype=torch.bool)
        for i, n in enumerate(lengths.tolist()):
            required[i, :n] = self._phones(tokens[i, :n])[1]
        return model.infer(tokens, lengths, required=required)

    def _phones(self, ids: torch.Tensor) -> tuple[list[str], torch.Tensor]:
        """One item's token ids (N,) -> (their labels, the tokens (N,) bool that are
        phones: every token but pauses and word separators, each kept at a frame)."""
        labels = self.table.decode(ids.tolist())
        return labels, torch.from_numpy(~optional_tokens(labels))

    def loss_of(self, out: FastPitchOutput, batch: dict[str, Any]):
        return fastpitch_loss(out, batch, self.loss_cfg)

    def labels(self, batch: dict[str, Any], i: int, n: int) -> list[str]:
        return self.table.decode(batch["tokens"][i, :n].tolist())

    def measure(
        self,
        out: FastPitchOutput,
        batch: dict[str, Any],
        tally: dict[str, float],
        truth: TruthErrors,
    ) -> None:
        """The predicted durations' absolute error per token (rounded, against the given
        ones) and the boundary errors of each item's predicted durations, fitted to its
        frames, against its reference timings."""
        predicted = torch.expm1(out.log_durations).clamp(min=0).round()
        tally["abs_frames"] += float(((predicted - batch["durations"]).abs() * out.enc_mask).sum())
        tally["tokens"] += int(out.enc_mask.sum())
        sec = self.frame_ms / 1000.0
        for i, uid in enumerate(batch["ids"]):
            reference = self.references.get(uid)
            if reference is None:
                continue
            n, frames = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            tokens, required = self._phones(batch["tokens"][i, :n])
            predicted = torch.expm1(out.log_durations[i, :n].float()).clamp(min=0)
            durations = fit_durations(predicted, frames, required).tolist()
            pauses = self.references.pauses(uid, frames)
            truth.add(reference, token_tiers(tokens, durations, sec, self.kind, pauses=pauses))

    def summarize(self, tally: dict[str, float]) -> dict[str, float]:
        """``duration_frames``, ``duration_ms``: the mean absolute error per token."""
        frames = tally["abs_frames"] / max(tally["tokens"], 1)
        return {"duration_frames": frames, "duration_ms": frames * self.frame_ms}


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
    sets = []
    for base, split in ((corpus.train_set, "training"), (corpus.valid_set, "validation")):
        found = dataset_durations(base, corpus.table.decode, records, frame, split)
        durations = required_durations(found, len(base.items), split)
        targets = None
        if loss_cfg.duration_target == "sub_frame":
            targets = dataset_sub_frames(base, corpus.table.decode, records, durations)
        sets.append(FastPitchDataset(base, durations, pitch, targets))
    stats = pitch_stats(sets[0], corpus.data.stats_items)
    sets[0].stats = sets[1].stats = stats
    task = FastPitchTask(FastPitch(fp_cfg), corpus, sets[0], sets[1], loss_cfg)
    task.symbols = {**corpus.symbols("tts", fp_cfg.to_dict()), "pitch": stats.to_dict()}
    return task
