"""The CTC phone recognizer (``task: recognize``, family ``ctc_recognizer``) as a trainer
task: a recording's log-mel -> the sounds of its text, CTC loss; validation decodes
greedily and reports the phone error rate.

Recipe sections::

    task: recognize
    family: ctc_recognizer
    data: {train: train.jsonl, valid: valid.jsonl, tokenizer: phonemes, add_eos: false,
           audio_keys: [audio, target_audio], mel: {...}}
    model: {channels: 256, subsample: 2, conv_layers: 4, rnn_layers: 0, dropout: 0.1,
            mel_norm: utterance,
            spec_augment: {freq_masks: 2, freq_width: 10, time_masks: 2, time_width: 12}}

The targets are the item's tokens that are sounds: word separators, punctuation and the
specials (`aligner.alignment.tiers.optional_tokens`) are dropped. The CTC blank is the
padding id. The checkpoint's ``symbols`` are those of a TTS checkpoint
(`aligner.tasks.speech_data.TextSpeechData.symbols`) with ``task: recognize``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from aligner.alignment.tiers import optional_tokens
from aligner.config import from_dict
from aligner.data.collate import collate_tts, pad
from aligner.models.recognizer import BLANK, CTCRecognizer, RecognizerConfig, greedy_decode
from aligner.tasks.speech import first_items, set_data_sizes
from aligner.tasks.speech_data import TextSpeechData, text_speech_data
from aligner.text.metrics import edit_distance


@dataclass
class SpecAugment:
    """``model.spec_augment``: in training, `freq_masks` bands of up to `freq_width` mel
    bins and `time_masks` spans of up to `time_width` frames of each item set to zero
    (the normalized mean); 0 masks: off."""

    freq_masks: int = 0
    freq_width: int = 10
    time_masks: int = 0
    time_width: int = 12

    def __call__(self, mel: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``(B, T, M)`` -> a masked copy."""
        mel = mel.clone()
        for b, frames in enumerate(lengths.tolist()):
            for _ in range(self.freq_masks):
                start, end = _span(mel.size(2), self.freq_width)
                mel[b, :, start:end] = 0.0
            for _ in range(self.time_masks):
                start, end = _span(int(frames), self.time_width)
                mel[b, start:end, :] = 0.0
        return mel


def _span(size: int, width: int) -> tuple[int, int]:
    """A random span of up to `width` of `size` positions."""
    w = int(torch.randint(0, min(width, size) + 1, ()))
    start = int(torch.randint(0, size - w + 1, ()))
    return start, start + w


def sound_targets(
    tokens: torch.Tensor, lengths: torch.Tensor, sounds: np.ndarray
) -> list[torch.Tensor]:
    """The ids of each item's tokens that are sounds (`sounds` ``(V,)`` bool over the
    symbol table), from padded tokens ``(B, N)`` and their lengths ``(B,)``."""
    out = []
    for row, n in zip(tokens.cpu(), lengths.tolist()):
        ids = row[: int(n)]
        out.append(ids[torch.as_tensor(sounds[ids.numpy()])])
    return out


def error_counts(hyps: Sequence[Sequence[Any]], refs: Sequence[Sequence[Any]]) -> tuple[int, int]:
    """(edits, reference length) summed over the items."""
    return sum(edit_distance(h, r) for h, r in zip(hyps, refs)), sum(len(r) for r in refs)


class RecognizeTask:
    """Log-mel -> sounds of the text, CTC; see ``aligner.tasks.base.Task``."""

    def __init__(self, model: CTCRecognizer, corpus: TextSpeechData, augment: SpecAugment):
        self.model, self.corpus, self.augment = model, corpus, augment
        self.train_set, self.valid_set = corpus.train_set, corpus.valid_set
        self.log = corpus.data.log
        self.sounds = ~optional_tokens(corpus.table.symbols)
        self.symbols = corpus.symbols("recognize", model.config.to_dict())

    def lengths(self, dataset: Any) -> Sequence[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = collate_tts(examples)
        targets = sound_targets(batch["tokens"], batch["token_lengths"], self.sounds)
        batch["targets"], batch["target_lengths"], _ = pad(targets, BLANK)
        return batch

    def ctc(self, model: nn.Module, batch: dict[str, Any], mel: torch.Tensor):
        """(mean CTC loss per target token, log-probabilities (B, T', V), lengths (B,))."""
        log_probs, out_lengths = model(mel, batch["mel_lengths"])
        loss = F.ctc_loss(
            log_probs.float().transpose(0, 1),
            batch["targets"],
            out_lengths,
            batch["target_lengths"].to(out_lengths.device),
            blank=BLANK,
            reduction="mean",
            zero_infinity=True,
        )
        return loss, log_probs, out_lengths

    def loss(
        self, model: nn.Module, batch: dict[str, Any], step: int
    ) -> tuple[torch.Tensor, dict[str, float]]:
        mel = batch["mel"]
        if self.augment.freq_masks or self.augment.time_masks:
            mel = self.augment(mel, batch["mel_lengths"])
        loss, _, _ = self.ctc(model, batch, mel)
        return loss, {"ctc": float(loss.detach())}

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """CTC loss and the phone error rate (%) of greedy decoding."""
        total, count, edits, length = 0.0, 0, 0, 0
        for batch in batches:
            loss, log_probs, out_lengths = self.ctc(model, batch, batch["mel"])
            n = len(batch["ids"])
            total, count = total + float(loss) * n, count + n
            refs = [t[: int(k)].tolist() for t, k in zip(batch["targets"], batch["target_lengths"])]
            e, m = error_counts(greedy_decode(log_probs, out_lengths), refs)
            edits, length = edits + e, length + m
        result = {"loss": total / max(count, 1), "per": 100.0 * edits / max(length, 1)}
        if logger is not None and getattr(logger, "enabled", True):
            self.log_fixed_items(model, step, logger)
        return result

    def log_fixed_items(self, model: nn.Module, step: int, logger: Any) -> None:
        """For the fixed first validation items: the posteriors over time (tag
        ``posteriors/<id>``, the symbols the item's frames favour) and the decoded sounds
        beside the reference (text ``recognized/<id>``)."""
        if self.log.plot_items < 1:
            return
        device = next(model.parameters()).device
        batch = first_items(self.valid_set, self.log.plot_items, self.collate, device)
        log_probs, out_lengths = model(batch["mel"], batch["mel_lengths"])
        hyps = greedy_decode(log_probs, out_lengths)
        table = self.corpus.table
        for i, item in enumerate(batch["ids"]):
            probs = log_probs[i, : int(out_lengths[i])].exp()
            used = sorted(set(probs.argmax(-1).tolist()) | {BLANK})
            labels = ["_" if u == BLANK else table.symbols[u] for u in used]
            timing = {
                "hop_length": self.corpus.mel_cfg.hop_length * self.model.config.subsample,
                "sample_rate": self.corpus.mel_cfg.sample_rate,
            }
            logger.alignment(f"posteriors/{item}", probs[:, used], step, labels, **timing)
            ref = table.decode(batch["targets"][i, : int(batch["target_lengths"][i])].tolist())
            hyp = " ".join(table.decode(hyps[i]))
            logger.text(f"recognized/{item}", f"ref: {' '.join(ref)}  \nhyp: {hyp}", step)


def build(cfg: Any, data_dir: Path) -> RecognizeTask:
    """The recognizer task of an ``ExperimentConfig`` from manifests under ``data_dir``."""
    corpus = text_speech_data(cfg, data_dir)
    model = dict(cfg.model or {})
    augment = from_dict(SpecAugment, model.pop("spec_augment", None), where="model.spec_augment")
    set_data_sizes(model, n_mels=corpus.mel_cfg.n_mels, n_symbols=len(corpus.table))
    return RecognizeTask(CTCRecognizer(RecognizerConfig.from_dict(model)), corpus, augment)
