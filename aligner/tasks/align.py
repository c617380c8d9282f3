"""The alignment model (``task: align``) as a trainer task: forward-sum loss, then the
binarization loss after a warm-up; validation measures the hard durations against the
corpus's reference timings where it has them.

Recipe sections::

    task: align
    data: {train: train.jsonl, valid: valid.jsonl, tokenizer: phonemes, mel: {...}}
    model: {attention: distance, attn_dim: 80, attention_options: {temperature: 0.0005},
            channels: 128, text_kernels: [1, 1], mel_kernels: [3, 1, 1], prior_scaling: 1.0,
            loss: {blank_logprob: -1.0, bin_weight: 1.0, bin_start: 300}}

The checkpoint's ``symbols`` are those of a TTS checkpoint
(``aligner.tasks.speech_data.TextSpeechData.symbols``) with ``task: align`` and the
:class:`~aligner.models.alignment.AlignerConfig` as ``model``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from aligner.alignment.lengths import token_lengths, usual_frames
from aligner.alignment.tiers import (
    WORD_SEPARATOR,
    optional_tokens,
    separator_log_probs,
    token_tiers,
)
from aligner.attention.losses import binarization_loss, forward_sum_loss
from aligner.attention.metrics import alignment_metrics, summarize
from aligner.attention.search import (
    batched_search,
    expected_edges,
    path_durations,
    with_overrides,
)
from aligner.config import ConfigError, from_dict
from aligner.data.collate import collate_tts
from aligner.models.alignment import AlignerConfig, AlignerOutput, AlignmentModel
from aligner.tasks.speech import first_items, set_data_sizes
from aligner.tasks.speech_data import TextSpeechData, text_speech_data
from aligner.tasks.truth import References, TruthErrors


@dataclass
class AlignLossConfig:
    """``model.loss``: the blank's score in the forward-sum loss; the binarization loss's
    weight, switched on at step `bin_start` and reaching `bin_weight` linearly over
    `bin_ramp` steps."""

    blank_logprob: float = -1.0
    bin_weight: float = 1.0
    bin_start: int = 300
    bin_ramp: int = 100

    def bin_scale(self, step: int) -> float:
        if step < self.bin_start:
            return 0.0
        return self.bin_weight * min(1.0, (step - self.bin_start + 1) / max(self.bin_ramp, 1))


def hard_alignment(
    out: AlignerOutput,
    mel_lengths: torch.Tensor,
    optional: np.ndarray | None = None,
    overrides: np.ndarray | None = None,
) -> np.ndarray:
    """Paths ``(B, T)`` (token of each frame, -1 on padding) of the monotonic alignment
    search over the soft alignment of `out`; `optional` ``(B, N)`` tokens may get no
    frame (None: every token gets at least one); ``overrides (B, T, N)``: log-probabilities
    in place of the alignment's where not NaN. An item with fewer frames than required
    tokens (`leave_out_short` leaves them out by their estimated frame count; one may be a
    frame short) may skip any token rather than stop the training."""
    log_soft = with_overrides(out.log_alignments.detach().float().cpu().numpy(), overrides)
    inside = out.enc_mask.cpu().numpy()
    frames = mel_lengths.cpu().numpy()
    optional = np.zeros_like(inside) if optional is None else np.array(optional, bool)
    optional[frames < (inside & ~optional).sum(1)] = True
    return batched_search(log_soft, frames, inside.sum(1), optional)


def one_hot(paths: np.ndarray, n_tokens: int, device: torch.device) -> torch.Tensor:
    """``(B, T, N)`` 0/1 from paths ``(B, T)`` (-1 rows stay zero)."""
    p = torch.as_tensor(paths, device=device)
    hard = torch.nn.functional.one_hot(p.clamp_min(0), n_tokens).float()
    return hard * (p >= 0).unsqueeze(-1)


class AlignTask:
    """Text + mel -> alignment training; see ``aligner.tasks.base.Task``."""

    def __init__(self, model: AlignmentModel, corpus: TextSpeechData, loss: AlignLossConfig):
        self.model, self.corpus, self.loss_cfg = model, corpus, loss
        self.train_set, self.valid_set = corpus.train_set, corpus.valid_set
        self.log = corpus.data.log
        self.optional_ids = optional_tokens(corpus.table.symbols)
        self.separator_ids = np.array([s == WORD_SEPARATOR for s in corpus.table.symbols])
        for name, dataset in (("train", self.train_set), ("valid", self.valid_set)):
            leave_out_short(dataset, self.separator_ids, name)
        self.references = References(self.valid_set.items, corpus.mel_cfg)
        self.symbols = corpus.symbols("align", model.config.to_dict())

    def lengths(self, dataset: Any) -> Sequence[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_tts(examples)

    def forward(self, model: nn.Module, batch: dict[str, Any]) -> AlignerOutput:
        raw = self.corpus.stats.denormalize(batch["mel"])
        mel, spans = self.model.prepare(
            raw, batch["mel"], batch["mel_lengths"], self.corpus.mel_cfg.power
        )
        return model(
            batch["tokens"], batch["token_lengths"], mel, batch["mel_lengths"], spans=spans
        )

    def loss(
        self, model: nn.Module, batch: dict[str, Any], step: int
    ) -> tuple[torch.Tensor, dict[str, float]]:
        out = self.forward(model, batch)
        lengths = batch["mel_lengths"], batch["token_lengths"]
        ctc = self.forward_sum(out, batch)
        parts = {"forward_sum": float(ctc.detach())}
        scale = self.loss_cfg.bin_scale(step)
        if scale <= 0:
            return ctc, parts
        separators = self.separator_ids[batch["tokens"].cpu().numpy()]
        paths = hard_alignment(out, lengths[0], separators)
        hard = one_hot(paths, out.enc_mask.size(1), ctc.device)
        binar = binarization_loss(hard, out.log_alignments)
        parts["binarization"] = float(binar.detach())
        return ctc + scale * binar, parts

    def forward_sum(self, out: AlignerOutput, batch: dict[str, Any]) -> torch.Tensor:
        """The forward-sum loss with every token required but the word separators: a
        separator is the pause between two words or nothing, which the audio tells at
        inference (`aligner.alignment.tiers.separator_log_probs`); forced to hold a frame, it
        took one from the word before or after, whichever the model happened to learn
        (eSpeak: the end of the word before, Festival: the start of the next; docs)."""
        required = torch.as_tensor(~self.separator_ids[batch["tokens"].cpu().numpy()])
        lengths = batch["mel_lengths"], batch["token_lengths"]
        return forward_sum_loss(out.log_scores, *lengths, self.loss_cfg.blank_logprob, required)

    def optional(self, batch: dict[str, Any]) -> np.ndarray:
        """``(B, N)`` bool: the tokens (separators, punctuation, specials) that the
        inference-time search may give no frame."""
        return self.optional_ids[batch["tokens"].cpu().numpy()]

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """Forward-sum loss, the core's metrics of the soft alignments and, where the items
        have reference timings, the boundary errors of the hard durations. Each phone's
        usual length in the hard durations (`aligner.alignment.lengths`) goes into the
        checkpoint's symbols (``usual_frames``) for `aligner align`'s tiers, and into
        this validation's boundary errors."""
        total, count, metrics, pending, timed = 0.0, 0, [], [], []
        for batch in batches:
            out = self.forward(model, batch)
            lengths = batch["mel_lengths"], batch["token_lengths"]
            n = len(batch["ids"])
            loss = self.forward_sum(out, batch)
            total, count = total + float(loss) * n, count + n
            required = torch.as_tensor(~self.optional(batch), device=out.alignments.device)
            frames = lengths[0].to(out.alignments.device)
            m = alignment_metrics(out.alignments, frames, out.enc_mask.sum(1), required)
            metrics.append({k: v.cpu() for k, v in m.items()})
            searched = self.searched(out, batch)
            timed += [(tokens, frames) for _, tokens, frames, _ in searched]
            pending += self.truth(out, searched)
        usual = usual_frames(timed)
        self.symbols["usual_frames"] = usual
        truth = self.truth_errors(pending, usual)
        result = {"loss": total / max(count, 1)}
        if metrics:
            result.update(summarize({k: torch.cat([m[k] for m in metrics]) for k in metrics[0]}))
        result.update(truth.means())
        if logger is not None and getattr(logger, "enabled", True):
            self.log_fixed_items(model, step, logger)
        return result

    def searched(self, out: AlignerOutput, batch: dict[str, Any]) -> list[tuple]:
        """``(id, tokens, frames per token, pauses)`` of every item of `batch` by one
        monotonic search: the word separators of the items with reference timings take the
        pause frames of their audio (`separator_log_probs`, as `aligner align`; ``pauses``
        None elsewhere), the others' where the model puts them (`usual_frames` reads only
        the phones inside words, which the separators do not touch)."""
        table, references = self.corpus.table, self.references
        overrides = np.full(tuple(out.log_alignments.shape), np.nan)
        items = []
        for i, uid in enumerate(batch["ids"]):
            n, frames = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            tokens = table.decode(batch["tokens"][i, :n].tolist())
            pauses = references.pauses(uid, frames) if uid in references else None
            cells = separator_log_probs(tokens, pauses)
            if cells is not None:
                overrides[i, :frames, :n] = cells
            items.append((uid, tokens, pauses))
        paths = hard_alignment(out, batch["mel_lengths"], self.optional(batch), overrides)
        durations = path_durations(paths, out.enc_mask.size(1))
        return [(uid, t, durations[i, : len(t)], p) for i, (uid, t, p) in enumerate(items)]

    def truth(self, out: AlignerOutput, searched: list[tuple]) -> list[tuple]:
        """``(id, tokens, frames, pauses, edges)`` of the `searched` items that have
        reference timings: what their words and phones tiers are made of (`token_tiers`)."""
        log_soft = out.log_alignments.detach().float().cpu().numpy()
        found = []
        for i, (uid, tokens, durations, pauses) in enumerate(searched):
            if uid in self.references:
                cells = log_soft[i, : int(durations.sum()), : len(tokens)]  # its frames
                edges = expected_edges(cells, durations, ~optional_tokens(tokens))
                found.append((uid, tokens, durations, pauses, edges))
        return found

    def truth_errors(self, found: list[tuple], usual: dict[str, float]) -> TruthErrors:
        """The boundary errors against their references of the items `truth` found, their
        tiers made with the phones' `usual` lengths."""
        errors = TruthErrors()
        sec = self.corpus.mel_cfg.hop_length / self.corpus.mel_cfg.sample_rate
        kind = self.corpus.data.tokenizer
        for uid, tokens, frames, pauses, edges in found:
            usual_n = token_lengths(tokens, usual)
            tiers = token_tiers(
                tokens, frames, sec, kind, pauses=pauses, edges=edges, usual=usual_n
            )
            errors.add(self.references.get(uid), tiers)
        return errors

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """Soft and hard alignments (frames x tokens) of the fixed first validation items:
        tags ``alignment/<id>`` and ``alignment_hard/<id>``."""
        if self.log.plot_items < 1:
            return
        device = next(model.parameters()).device
        batch = first_items(self.valid_set, self.log.plot_items, self.collate, device)
        out = self.forward(model, batch)
        hard = one_hot(
            hard_alignment(out, batch["mel_lengths"], self.optional(batch)),
            out.enc_mask.size(1),
            device,
        )
        for i, item in enumerate(batch["ids"]):
            t, k = int(batch["mel_lengths"][i]), int(batch["token_lengths"][i])
            labels = self.corpus.table.decode(batch["tokens"][i, :k].tolist())
            timing = {
                "hop_length": self.corpus.mel_cfg.hop_length,
                "sample_rate": self.corpus.mel_cfg.sample_rate,
            }
            logger.alignment(f"alignment/{item}", out.alignments[i, :t, :k], step, labels, **timing)
            logger.alignment(f"alignment_hard/{item}", hard[i, :t, :k], step, labels, **timing)


def leave_out_short(dataset: Any, separator_ids: np.ndarray, name: str) -> int:
    """Leave out of `dataset` (a ``TTSDataset``, in place) the items with fewer mel frames
    than tokens that need a frame (every token but the word separators; `separator_ids`
    ``(V,)`` bool over the symbol table): no monotonic alignment holds them (a truncated
    recording, or a text longer than its audio). One line names how many and the first;
    returns how many. ConfigError (one line) when no item would be left."""
    need = [int((~separator_ids[tokens.numpy()]).sum()) for tokens in dataset.tokens]
    short = [i for i, frames in enumerate(dataset.lengths) if frames < need[i]]
    if short:
        first = short[0]
        if len(short) == len(dataset):
            raise ConfigError(
                f"every one of the {len(dataset)} {name} items has fewer mel frames than tokens "
                f"(first: {dataset.items[first]['id']!r}, {dataset.lengths[first]} frames for "
                f"{need[first]} tokens): check the audio, data.mel.hop_length and the tokenizer"
            )
        print(
            f"note: {len(short)} of {len(dataset)} {name} items have fewer mel frames than "
            f"tokens (first: {dataset.items[first]['id']!r}, {dataset.lengths[first]} frames "
            f"for {need[first]} tokens): left out; check their audio and text",
            file=sys.stderr,
        )
        dropped = set(short)
        dataset.keep([i for i in range(len(dataset)) if i not in dropped])
    return len(short)


def build(cfg: Any, data_dir: Path) -> AlignTask:
    """The alignment task of an ``ExperimentConfig`` from manifests under ``data_dir``."""
    corpus = text_speech_data(cfg, data_dir)
    model = dict(cfg.model or {})
    loss = from_dict(AlignLossConfig, model.pop("loss", None), where="model.loss")
    set_data_sizes(model, n_mels=corpus.mel_cfg.n_mels, n_symbols=len(corpus.table))
    return AlignTask(AlignmentModel(AlignerConfig.from_dict(model)), corpus, loss)
