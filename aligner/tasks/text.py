"""Text tasks for the generic trainer: grapheme-to-phoneme (`g2p`) and translation (`nmt`).

Recipe sections (see `TextDataConfig`, `TextModelConfig`)::

    task: g2p                       # or nmt
    data: {train: train.jsonl, valid: valid.jsonl, src_split: chars, tgt_split: words}
    model: {decoder: bahdanau, attention: additive, enc_hidden: 256, ...}

Manifests hold `id`, `source`, `target` (G2P: several lines may share a word, one per
pronunciation). Validation reports the token-level NLL (`loss`) and, from greedy or
beam decoding, PER/WER for G2P (a word is right when it equals ANY of its reference
pronunciations; PER uses the closest reference) or corpus BLEU (sacrebleu) for NMT, and
logs the attention of the first `plot_items` validation items to TensorBoard.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from aligner.attention.plot import figure_image, text_alignment_figure
from aligner.config import from_dict
from aligner.data.collate import collate_text
from aligner.data.datasets import TextPairDataset
from aligner.data.manifest import read_manifest
from aligner.decode.beam import search
from aligner.families import DEFAULT_FAMILY, role
from aligner.models.seq2seq.config import TextModelConfig, build_model
from aligner.models.seq2seq.model import Seq2Seq
from aligner.text.metrics import corpus_bleu, g2p_error_rates
from aligner.text.splitting import (
    Split,
    build_table,
    display_label,
    join_tokens,
    output_tokens,
    reversed_split,
    splitter,
)
from aligner.text.symbols import SymbolTable


# ----------------------------------------------------------------------------- config
@dataclass
class TextDataConfig:
    """`data:` section. Manifest paths are relative to the data folder.

    `src_split`/`tgt_split`: `chars` (each character), `words` (on whitespace) or
    `tokens` (words and punctuation apart, a token after a space marked with a leading
    "▁" so that output text gets its spacing back: see `aligner.text.splitting`). `min_freq`:
    rarer training tokens map to <unk> (NMT). `lowercase` folds the source,
    `lowercase_target` the target, before splitting (both recipes fold the source only:
    ARPAbet and translations keep their case). `reverse_target` trains a right-to-left
    model: it reads and writes the target tokens last to first (`output_tokens` turns its
    output back), the partner that reranks a left-to-right model's n-best
    (`aligner.decode.rerank`).
    """

    train: str = "train.jsonl"
    valid: str = "valid.jsonl"
    src_split: Split = "chars"
    tgt_split: Split = "words"
    lowercase: bool = False
    lowercase_target: bool = False
    min_freq: int = 1
    reverse_target: bool = False


# ----------------------------------------------------------------------------- task
class TextTask:
    """G2P or NMT as a `aligner.tasks.base.Task`."""

    def __init__(
        self,
        kind: str,
        model: Seq2Seq,
        train_set: TextPairDataset,
        valid_set: TextPairDataset,
        src_table: SymbolTable,
        tgt_table: SymbolTable,
        data: TextDataConfig,
        options: TextModelConfig,
    ) -> None:
        self.kind, self.model = kind, model
        self.reads_words = role(DEFAULT_FAMILY[kind], kind).reads == "words"
        self.train_set, self.valid_set = train_set, valid_set
        self.src_table, self.tgt_table = src_table, tgt_table
        self.data, self.options = data, options
        # validation scores against the manifest's own targets, not their token ids:
        # rare NMT tokens map to <unk>, which the references must not contain
        self._references = {
            str(item.get("id", n)): item["target"] for n, item in enumerate(valid_set.items)
        }
        self.symbols = {
            "task": kind,
            "src": src_table.to_dict(),
            "tgt": tgt_table.to_dict(),
            "data": asdict(data),
        }

    def lengths(self, dataset: TextPairDataset) -> Sequence[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_text(examples)

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        """Label-smoothed NLL over valid target tokens (mean per token)."""
        log_probs, _ = model(batch["src"], batch["src_lengths"], batch["tgt_in"])
        smoothed, nll = token_losses(log_probs, batch["tgt_out"], self.options.label_smoothing)
        return smoothed, {"nll": float(nll)}

    @torch.no_grad()
    def validate(self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger):
        """NLL per token, then PER/WER (g2p) or BLEU (nmt) from decoding; attention plots."""
        nll_sum, n_tokens = 0.0, 0
        sources, hyps, refs = [], [], []
        for batch in batches:
            log_probs, _ = model(batch["src"], batch["src_lengths"], batch["tgt_in"])
            _, nll = token_losses(log_probs, batch["tgt_out"], 0.0)
            count = int((batch["tgt_out"] != model.pad_id).sum())
            nll_sum, n_tokens = nll_sum + float(nll) * count, n_tokens + count
            for i, nbest in enumerate(self._decode(model, batch["src"], batch["src_lengths"])):
                sources.append(self._src_text(batch["src"][i, : batch["src_lengths"][i]]))
                hyps.append(
                    output_tokens(self.tgt_table.decode(nbest[0].tokens), self.symbols["data"])
                )
                refs.append(self._references[batch["ids"][i]])
        metrics = {"loss": nll_sum / max(n_tokens, 1)}
        metrics.update(self._scores(sources, hyps, refs))
        if logger is not None:
            self._plot(model, step, logger)
        return metrics

    # -- helpers ------------------------------------------------------------------
    def _decode(self, model: Seq2Seq, src: torch.Tensor, lengths: torch.Tensor):
        o = self.options
        return search(model, src, lengths, o.valid_beam, 1, o.length_penalty, o.max_len_ratio)

    def _src_text(self, ids: torch.Tensor) -> str:
        return join_tokens(self.src_table.decode(ids.tolist()), self.data.src_split)

    def _scores(self, sources: list[str], hyps: list[list[str]], refs: list[str]):
        """PER/WER (g2p) or BLEU (nmt) of decoded token lists against target texts."""
        if not hyps:
            return {}
        data = self.data
        if self.reads_words:  # G2P: phone and word error rates; translation: BLEU
            split = splitter(data.tgt_split, data.lowercase_target)
            by_word: dict[str, list[list[str]]] = {}
            first: dict[str, list[str]] = {}
            for src, hyp, ref in zip(sources, hyps, refs):
                by_word.setdefault(src, []).append(split(ref))
                first.setdefault(src, hyp)
            per, wer = g2p_error_rates(first, by_word)
            return {"per": 100 * per, "wer": 100 * wer}
        texts = [join_tokens(h, data.tgt_split) for h in hyps]
        return {"bleu": corpus_bleu(texts, refs, lowercase=data.lowercase_target)}

    def _plot(self, model: Seq2Seq, step: int, logger) -> None:
        """Attention of the same first validation items at every validation."""
        n = min(self.options.plot_items, len(self.valid_set))
        if n == 0 or not getattr(logger, "enabled", True):
            return
        batch = collate_text([self.valid_set[i] for i in range(n)])
        device = next(model.parameters()).device
        src, lengths = batch["src"].to(device), batch["src_lengths"].to(device)
        for i, nbest in enumerate(self._decode(model, src, lengths)):
            hyp = nbest[0]
            src_tokens = self.src_table.decode(batch["src"][i, : lengths[i]].tolist())
            out_tokens = [*self.tgt_table.decode(hyp.tokens), "</s>"]
            fig = text_alignment_figure(
                hyp.attention,
                [display_label(t) for t in src_tokens],
                [display_label(t) for t in out_tokens],
            )
            image = figure_image(fig)
            logger.image(f"alignment/{batch['ids'][i]}", image, step)


def token_losses(log_probs: torch.Tensor, target: torch.Tensor, smoothing: float, pad_id: int = 0):
    """Label-smoothed and plain NLL, each averaged over non-pad targets.

    `log_probs (B, U, V)` (log-softmax outputs), `target (B, U)` with `pad_id` padding.
    The smoothed loss is `(1 - eps) * NLL + eps * mean_v(-log p_v)`.
    """
    flat_lp, flat_t = log_probs.reshape(-1, log_probs.size(-1)), target.reshape(-1)
    nll = F.nll_loss(flat_lp, flat_t, ignore_index=pad_id)
    if smoothing == 0.0:
        return nll, nll.detach()
    mask = flat_t != pad_id
    uniform = -flat_lp[mask].mean(dim=-1).mean()
    return (1 - smoothing) * nll + smoothing * uniform, nll.detach()


def build(cfg: Any, data_dir: Path) -> TextTask:
    """Build the G2P/NMT task of an `ExperimentConfig` from manifests under `data_dir`."""
    data = from_dict(TextDataConfig, cfg.data, where="data")
    opts = from_dict(TextModelConfig, cfg.model, where="model")
    paths = {name: Path(data_dir) / getattr(data, name) for name in ("train", "valid")}
    for name, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no {name} manifest; run `aligner prepare` or set data.{name}"
            )
    train_items, valid_items = read_manifest(paths["train"]), read_manifest(paths["valid"])
    for name, items in (("train", train_items), ("valid", valid_items)):
        if not items:
            raise ValueError(
                f"{paths[name]}: no items; a corpus this small leaves a split empty: give "
                "`aligner prepare` more lines (valid and test need 3 or more)"
            )
    if role(cfg.family, cfg.task).task_module != __name__:
        raise ValueError(f"aligner.tasks.text builds g2p or nmt, not {cfg.task!r}")
    src_fn = splitter(data.src_split, data.lowercase)
    tgt_fn = splitter(data.tgt_split, data.lowercase_target)
    if data.reverse_target:
        tgt_fn = reversed_split(tgt_fn)
    src_table = build_table((it["source"] for it in train_items), src_fn, data.min_freq)
    tgt_table = build_table((it["target"] for it in train_items), tgt_fn, data.min_freq)
    unknown = "map" if data.min_freq > 1 else "error"
    train_set = TextPairDataset(train_items, src_table, tgt_table, src_fn, tgt_fn, unknown)
    valid_set = TextPairDataset(valid_items, src_table, tgt_table, src_fn, tgt_fn, "map")
    model = build_model(opts, len(src_table), len(tgt_table))
    return TextTask(cfg.task, model, train_set, valid_set, src_table, tgt_table, data, opts)
