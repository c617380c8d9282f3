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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

import torch
from torch import nn
from torch.utils.data import Dataset

from aligner.config import ConfigError, from_dict
from aligner.data.collate import collate_vc, pad
from aligner.models.fastpitch.layers import DurationOutput, fit_durations
from aligner.models.fastvc import FastVC, FastVCConfig, round_along, step_frames
from aligner.tasks.duration_models import DurationTask
from aligner.tasks.guides import folders_of, pair_durations, read_records
from aligner.tasks.speech_data import ParallelCorpus, parallel_corpus
from aligner.tasks.speech_losses import duration_loss, parallel_mel_loss
from aligner.tasks.truth import TruthErrors, timing_pairs

IGNORED = -100  # a position without a phone class (padding, a token unseen in training)


@dataclass
class FastVCLoss:
    """``model.loss``: the mel distance, the weight of the durations' MSE and its scale,
    and the weight of the phone classes' cross-entropy (0: the network names no phones)."""

    mel: Literal["l1", "mse"] = "l1"
    duration: float = 1.0
    duration_scale: Literal["log", "frames"] = "frames"
    phones: float = 0.0

    def __post_init__(self) -> None:
        if not self.phones >= 0:
            raise ConfigError(f"model.loss.phones must be >= 0, got {self.phones}")


class StepDurationDataset(Dataset):
    """The pairs of a `VCDataset` that have durations of both voices, each ``{"id",
    "src_mel" (S, M), "mel" (T, M), "step_frames" (N,) float, "durations" (N,) long}``:
    the target frames of each of the N = ceil(S / reduction) encoder steps, fractional (the
    duration predictor's target) and rounded along the utterance (the length regulator's);
    with `phones` (`PairPhones` by item index), ``"src_phones"`` (N,) and ``"phones"`` (T,)
    too: the phone class of each encoder step and of each target frame."""

    def __init__(
        self,
        base: Any,
        frames: dict[int, torch.Tensor],
        phones: dict[int, PairPhones] | None = None,
    ) -> None:
        keep = sorted(frames)
        self.base = base
        self.items = [base.items[i] for i in keep]
        self.lengths = [base.lengths[i] for i in keep]
        self.indices, self.frames = keep, [frames[i].float() for i in keep]
        self.durations = [
            round_along(f[None], torch.ones(1, len(f), dtype=torch.bool))[0] for f in self.frames
        ]
        self.phones = [phones[i] for i in keep] if phones is not None else None

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        example = self.base[self.indices[index]]
        out = {**example, "step_frames": self.frames[index], "durations": self.durations[index]}
        if self.phones is not None:
            out["src_phones"], out["phones"] = self.phones[index]
        return out


class PairPhones(NamedTuple):
    """The phone classes of a pair: of each source encoder step (N,) and of each target
    frame (T,), long, `IGNORED` where a token has no class."""

    steps: torch.Tensor
    frames: torch.Tensor


def frame_classes(
    tokens: list[str], durations: torch.Tensor, classes: dict[str, int]
) -> torch.Tensor:
    """The class of each frame (sum(durations),) long: its token's in `classes`,
    `IGNORED` for a token not in them."""
    ids = torch.tensor([classes.get(t, IGNORED) for t in tokens], dtype=torch.long)
    return torch.repeat_interleave(ids, torch.as_tensor(durations).long())


def pair_phones(
    pairs: dict[int, tuple[list[str], torch.Tensor, torch.Tensor]],
    classes: dict[str, int],
    reduction: int,
) -> dict[int, PairPhones]:
    """`PairPhones` of each pair (its tokens and both voices' frames per token, by item
    index): an encoder step is named by the token of its first source frame."""
    return {
        i: PairPhones(
            frame_classes(tokens, src, classes)[::reduction], frame_classes(tokens, tgt, classes)
        )
        for i, (tokens, src, tgt) in pairs.items()
    }


def pair_step_frames(
    dataset: Any,
    pairs: dict[int, tuple[list[str], torch.Tensor, torch.Tensor]],
    reduction: int,
    split: str,
) -> dict[int, torch.Tensor]:
    """Target frames per encoder step (`step_frames`) of each of `pairs` (`pair_durations`);
    the pairs of `dataset` without them are counted in one line, ConfigError when none
    has them."""
    out = {i: step_frames(src, tgt, reduction) for i, (_, src, tgt) in pairs.items()}
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
    out: DurationOutput, batch: dict[str, Any], cfg: FastVCLoss
) -> tuple[torch.Tensor, dict[str, float]]:
    """The weighted loss of a teacher-forced batch and its parts (floats)."""
    mel = parallel_mel_loss(out, batch["mel"], cfg.mel)
    given = batch["step_frames"][:, : out.enc_mask.size(1)]
    duration = duration_loss(out.log_durations, given, out.enc_mask, cfg)
    total = mel + cfg.duration * duration
    parts = {"mel": float(mel.detach()), "duration": float(duration.detach())}
    if out.phone_logits is not None:
        phones = phone_loss(out.phone_logits, batch["src_phones"], batch["phones"])
        total = total + cfg.phones * phones
        parts["phones"] = float(phones.detach())
    return total, parts


def phone_loss(
    logits: tuple[torch.Tensor, torch.Tensor], steps: torch.Tensor, frames: torch.Tensor
) -> torch.Tensor:
    """The mean of the cross-entropies of the encoder steps' phone classes (logits (B, N,
    K) against (B, N') long) and of the decoded frames' ((B, T, K) against (B, T')),
    `IGNORED` positions left out; the classes are cut or padded to the logits' lengths."""
    losses = []
    for logit, target in zip(logits, (steps, frames)):
        n = logit.size(1)
        target = nn.functional.pad(target[:, :n], (0, n - min(n, target.size(1))), value=IGNORED)
        losses.append(
            nn.functional.cross_entropy(
                logit.float().transpose(1, 2), target.to(logit.device), ignore_index=IGNORED
            )
        )
    return (losses[0] + losses[1]) / 2


class FastVCTask(DurationTask):
    """FastVC training on (source mel, step durations, target mel) batches; see
    `aligner.tasks.duration_models.DurationTask`."""

    free_name = "converted"

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

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        """`collate_vc` plus ``step_frames`` (B, N) and ``durations`` (B, N) long, N the
        longest item's steps."""
        batch = collate_vc(examples)
        batch["step_frames"] = pad([e["step_frames"] for e in examples])[0]
        batch["durations"] = pad([e["durations"] for e in examples])[0].long()
        for key in ("src_phones", "phones"):
            if key in examples[0]:
                batch[key] = pad([e[key] for e in examples], value=IGNORED)[0].long()
        return batch

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> DurationOutput:
        return model(batch["src_mel"], batch["src_lengths"], batch["durations"])

    def infer(self, model: nn.Module, batch: dict[str, Any]) -> DurationOutput:
        return model.infer(batch["src_mel"], batch["src_lengths"])

    def loss_of(self, out: DurationOutput, batch: dict[str, Any]):
        return fastvc_loss(out, batch, self.loss_cfg)

    def labels(self, batch: dict[str, Any], i: int, n: int) -> list[str]:
        return [str(k) for k in range(n)]

    def measure(
        self,
        out: DurationOutput,
        batch: dict[str, Any],
        tally: dict[str, float],
        truth: TruthErrors,
    ) -> None:
        """The predicted frames' absolute error per step, the predicted and the target
        frames, and the mapping errors of each item's predicted durations, fitted to its
        target frames, against both voices' reference timings (items without them add
        nothing)."""
        mask = out.enc_mask
        frames = torch.expm1(out.log_durations.float()).clamp(min=0) * mask
        given = batch["step_frames"][:, : mask.size(1)]
        tally["abs_frames"] += float(((frames - given).abs() * mask).sum())
        tally["steps"] += int(mask.sum())
        tally["predicted_frames"] += float(frames.sum())
        tally["target_frames"] += int(batch["mel_lengths"].sum())
        step = self.frame * self.model.config.reduction
        for i, uid in enumerate(batch["ids"]):
            pair = self.pairs.get(str(uid))
            if pair is None:
                continue
            n = int(mask[i].sum())
            durations = fit_durations(frames[i, :n], int(batch["mel_lengths"][i]))
            truth.add_mapping(durations.tolist(), step, self.frame, pair)

    def summarize(self, tally: dict[str, float]) -> dict[str, float]:
        """``duration_frames``: the mean absolute error per step; ``duration_ratio``: the
        converted length over the target's, summed over the items."""
        return {
            "duration_frames": tally["abs_frames"] / max(tally["steps"], 1),
            "duration_ratio": tally["predicted_frames"] / max(tally["target_frames"], 1),
        }


def build(cfg: Any, data_dir: Path) -> FastVCTask:
    """The FastVC task of an ``ExperimentConfig`` from parallel manifests under
    ``data_dir`` and both voices' durations (``data.durations``, ``data.source_durations``)."""
    corpus = parallel_corpus(cfg, data_dir)
    model_dict = dict(cfg.model or {})
    loss_cfg = from_dict(FastVCLoss, model_dict.pop("loss", None), where="model.loss")
    model_dict["n_mels"] = corpus.mel_cfg.n_mels
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
    splits = ((corpus.train_set, "training"), (corpus.valid_set, "validation"))
    pairs = [
        pair_durations(base, source_records, target_records, split, frame) for base, split in splits
    ]
    classes = {}
    if loss_cfg.phones > 0:  # the training tokens' classes, in a fixed order
        names = sorted({t for tokens, _, _ in pairs[0].values() for t in tokens})
        classes = {name: k for k, name in enumerate(names)}
    model_dict["phone_classes"] = len(classes)  # set by the data, as n_mels is
    try:
        vc_cfg = FastVCConfig.from_dict(model_dict)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    r = vc_cfg.reduction
    sets = [
        StepDurationDataset(
            base,
            pair_step_frames(base, timed, r, split),
            pair_phones(timed, classes, r) if classes else None,
        )
        for (base, split), timed in zip(splits, pairs)
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
