"""Non-autoregressive voice conversion (family ``fastvc``) as a trainer task: trained on the
target frames of each source encoder step, from the alignment model's durations of both
voices (`aligner.models.fastvc.step_frames`), never on an alignment of its own.

Recipe sections::

    task: vc
    family: fastvc
    data: {train: train.jsonl, valid: valid.jsonl, durations: durations/target,
           source_durations: durations/source, mel: {...}}
    model: {reduction: 2, dim: 192, ..., loss: {mel: l1, duration: 1.0, duration_scale: frames}}

``data.durations`` / ``data.source_durations``: the folders of the alignment model's
records (``aligner align`` of the target and of the source audio), or each voice's
TextGrids, as a Tacotron's VC guide reads them. A pair without them is left out and
counted. Loss: the mel's L1 or MSE over valid frames (and the postnet's), plus the weighted
MSE of the target frames per step (``duration_scale: frames``: unbiased, so the converted
length comes out right on average; ``log``: FastPitch's log(1 + frames)). Validation: those
losses, the steps' duration error (``duration_frames``), the converted length against the
target's (``duration_ratio``), and the source-to-target mapping of the predicted durations
against both voices' reference timings (``mapping_ms``, as ``aligner align`` scores it);
TensorBoard: target, teacher-forced and converted mels, given and predicted durations,
converted audio.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn
from torch.utils.data import Dataset

from aligner.config import ConfigError, from_dict
from aligner.data.collate import collate_vc, pad
from aligner.models.fastpitch.layers import fit_durations, token_path
from aligner.models.fastvc import FastVC, FastVCConfig, FastVCOutput, round_along, step_frames
from aligner.tasks.guides import folders_of, pair_durations, read_records
from aligner.tasks.speech import SpeechTask, first_items
from aligner.tasks.speech_data import ParallelCorpus, parallel_corpus
from aligner.tasks.speech_losses import duration_loss, masked_mean
from aligner.tasks.truth import TruthErrors, timing_pairs


@dataclass
class FastVCLoss:
    """``model.loss``: the mel distance, the weight of the durations' MSE and its scale."""

    mel: Literal["l1", "mse"] = "l1"
    duration: float = 1.0
    duration_scale: Literal["log", "frames"] = "frames"


class StepDurationDataset(Dataset):
    """The pairs of a `VCDataset` that have durations of both voices, each ``{"id",
    "src_mel" (S, M), "mel" (T, M), "step_frames" (N,) float, "durations" (N,) long}``:
    the target frames of each of the N = ceil(S / reduction) encoder steps, fractional (the
    duration predictor's target) and rounded along the utterance (the length regulator's)."""

    def __init__(self, base: Any, frames: dict[int, torch.Tensor]) -> None:
        keep = sorted(frames)
        self.base = base
        self.items = [base.items[i] for i in keep]
        self.lengths = [base.lengths[i] for i in keep]
        self.indices, self.frames = keep, [frames[i].float() for i in keep]
        self.durations = [
            round_along(f[None], torch.ones(1, len(f), dtype=torch.bool))[0] for f in self.frames
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        example = self.base[self.indices[index]]
        return {**example, "step_frames": self.frames[index], "durations": self.durations[index]}


def pair_step_frames(
    dataset: Any,
    source_records: dict[str, dict[str, Any]],
    target_records: dict[str, dict[str, Any]],
    reduction: int,
    split: str,
    frame_seconds: float,
) -> dict[int, torch.Tensor]:
    """Target frames per encoder step (`step_frames`) of each pair with durations of both
    voices, by item index; pairs without are counted in one line, ConfigError when none
    has them."""
    pairs = pair_durations(dataset, source_records, target_records, split, frame_seconds)
    out = {i: step_frames(src, tgt, reduction) for i, (src, tgt) in pairs.items()}
    total = len(dataset.items)
    if len(out) < total:
        print(
            f"note: {total - len(out)} of {total} {split} pairs have no durations of both "
            "voices and are left out",
            file=sys.stderr,
        )
    if not out:
        raise ConfigError(
            f"data.durations / data.source_durations: no {split} pair has durations of both "
            "voices; give the folders `aligner align` wrote for the target audio and for the "
            "source audio (--audio-key audio) of the train and valid manifests"
        )
    return out


def fastvc_loss(
    out: FastVCOutput, batch: dict[str, Any], cfg: FastVCLoss
) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted loss of a teacher-forced batch and its parts (floats)."""
    target = batch["mel"][:, : out.mel.size(1)].to(out.mel.dtype)
    dist = nn.functional.l1_loss if cfg.mel == "l1" else nn.functional.mse_loss
    mel = masked_mean(dist(out.mel, target, reduction="none"), out.mel_mask)
    if out.mel_post is not out.mel:
        mel = mel + masked_mean(dist(out.mel_post, target, reduction="none"), out.mel_mask)
    given = batch["step_frames"][:, : out.enc_mask.size(1)]
    duration = duration_loss(out.log_durations, given, out.enc_mask, cfg)
    total = mel + cfg.duration * duration
    return total, {"mel": float(mel.detach()), "duration": float(duration.detach())}


class FastVCTask:
    """FastVC training on (source mel, step durations, target mel) batches; see
    ``aligner.tasks.base.Task``."""

    vocoder = SpeechTask.vocoder  # data.log.vocoder, else Griffin-Lim from zero phases
    vocode = SpeechTask.vocode

    def __init__(
        self, model: FastVC, corpus: ParallelCorpus, train_set, valid_set, loss_cfg
    ) -> None:
        self.model, self.train_set, self.valid_set = model, train_set, valid_set
        self.loss_cfg, self.mel_cfg, self.log = loss_cfg, corpus.mel_cfg, corpus.data.log
        self.target_stats = corpus.stats_tgt
        self.symbols: dict[str, Any] = {}
        self._vocoder = None
        self.frame = self.mel_cfg.hop_length / self.mel_cfg.sample_rate
        self.pairs = timing_pairs(valid_set.items)

    def lengths(self, dataset: StepDurationDataset) -> list[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        """`collate_vc` plus ``step_frames`` (B, N) and ``durations`` (B, N) long, N the
        longest item's steps."""
        batch = collate_vc(examples)
        batch["step_frames"] = pad([e["step_frames"] for e in examples])[0]
        batch["durations"] = pad([e["durations"] for e in examples])[0].long()
        return batch

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> FastVCOutput:
        return model(batch["src_mel"], batch["src_lengths"], batch["durations"])

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        return fastvc_loss(self.forward(model, batch), batch, self.loss_cfg)

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """The loss and its parts, the predicted durations' error per step
        (``duration_frames``), the converted length over the target's (``duration_ratio``,
        summed over the items) and the mapping error of the predicted durations."""
        sums: dict[str, float] = {}
        count, steps, abs_frames, predicted_frames, target_frames = 0, 0, 0.0, 0.0, 0
        truth = TruthErrors()
        for batch in batches:
            out = self.forward(model, batch)
            loss, parts = fastvc_loss(out, batch, self.loss_cfg)
            n = len(batch["ids"])
            for key, value in {"loss": float(loss), **parts}.items():
                sums[key] = sums.get(key, 0.0) + value * n
            count += n
            mask = out.enc_mask
            frames = torch.expm1(out.log_durations.float()).clamp(min=0) * mask
            given = batch["step_frames"][:, : mask.size(1)]
            abs_frames += float(((frames - given).abs() * mask).sum())
            steps += int(mask.sum())
            predicted_frames += float(frames.sum())
            target_frames += int(batch["mel_lengths"].sum())
            self.truth(frames, out.enc_mask, batch, truth)
        result = {k: v / max(count, 1) for k, v in sums.items()}
        result["duration_frames"] = abs_frames / max(steps, 1)
        result["duration_ratio"] = predicted_frames / max(target_frames, 1)
        result.update(truth.means())
        if logger is not None and getattr(logger, "enabled", True) and self.log.plot_items > 0:
            self.log_fixed_items(model, step, logger)
        return result

    def truth(
        self, frames: torch.Tensor, mask: torch.Tensor, batch: dict[str, Any], errors: TruthErrors
    ) -> None:
        """The mapping errors of each item's predicted durations, fitted to its target
        frames, against both voices' reference timings (items without them add nothing)."""
        step = self.frame * self.model.config.reduction
        for i, uid in enumerate(batch["ids"]):
            pair = self.pairs.get(str(uid))
            if pair is None:
                continue
            n = int(mask[i].sum())
            durations = fit_durations(frames[i, :n], int(batch["mel_lengths"][i]))
            errors.add_mapping(durations.tolist(), step, self.frame, pair)

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """Target, teacher-forced and converted mels (``mel/<id>/...``), given and
        predicted durations as paths (``durations/<id>/...``), converted audio."""
        device = next(model.parameters()).device
        batch = first_items(self.valid_set, self.log.plot_items, self.collate, device)
        forced = self.forward(model, batch)
        free = model.infer(batch["src_mel"], batch["src_lengths"])
        timing = {"r": 1, "hop_length": self.mel_cfg.hop_length}
        timing["sample_rate"] = self.mel_cfg.sample_rate
        for i, uid in enumerate(batch["ids"]):
            n, t = int(forced.enc_mask[i].sum()), int(batch["mel_lengths"][i])
            t_free = int(free.mel_mask[i].sum())
            logger.mel(f"mel/{uid}/target", batch["mel"][i, :t], step)
            logger.mel(f"mel/{uid}/predicted", forced.mel_post[i, :t], step)
            logger.mel(f"mel/{uid}/converted", free.mel_post[i, :t_free], step)
            labels = [str(k) for k in range(n)]
            for name, durations in (("given", batch["durations"]), ("predicted", free.durations)):
                path = token_path(durations[i, :n].cpu())
                logger.alignment(f"durations/{uid}/{name}", path, step, labels, **timing)
            if i < self.log.audio_items:
                mel = self.target_stats.denormalize(free.mel_post[i, :t_free].float().cpu())
                logger.audio(f"audio/{uid}", self.vocode(mel), self.mel_cfg.sample_rate, step)


def build(cfg: Any, data_dir: Path) -> FastVCTask:
    """The FastVC task of an ``ExperimentConfig`` from parallel manifests under
    ``data_dir`` and both voices' durations (``data.durations``, ``data.source_durations``)."""
    corpus = parallel_corpus(cfg, data_dir)
    model_dict = dict(cfg.model or {})
    loss_cfg = from_dict(FastVCLoss, model_dict.pop("loss", None), where="model.loss")
    model_dict["n_mels"] = corpus.mel_cfg.n_mels
    try:
        vc_cfg = FastVCConfig.from_dict(model_dict)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    data = corpus.data
    targets = folders_of(data.durations, data_dir, "durations")
    sources = folders_of(data.source_durations, data_dir, "source_durations")
    if not targets or not sources:
        raise ConfigError(
            "data.durations and data.source_durations: a FastVC learns from the durations of "
            "both voices: give the folders `aligner align --checkpoint ALIGNMENT_MODEL` wrote "
            "for the target audio and for the source audio (--audio-key audio)"
        )
    target_records = read_records(targets, corpus.mel_cfg, "durations", target=True)
    source_records = read_records(sources, corpus.mel_cfg, "source_durations")
    frame = corpus.mel_cfg.hop_length / corpus.mel_cfg.sample_rate
    records, r = (source_records, target_records), vc_cfg.reduction
    sets = [
        StepDurationDataset(base, pair_step_frames(base, *records, r, split, frame))
        for base, split in ((corpus.train_set, "training"), (corpus.valid_set, "validation"))
    ]
    task = FastVCTask(FastVC(vc_cfg), corpus, sets[0], sets[1], loss_cfg)
    task.symbols = {
        "task": "vc",
        "model": vc_cfg.to_dict(),
        "mel": corpus.mel_cfg.to_dict(),
        "stats_src": corpus.stats_src.to_dict(),
        "stats": corpus.stats_tgt.to_dict(),
    }
    return task
