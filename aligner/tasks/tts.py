"""Text-to-speech (Tacotron) as a trainer task.

Recipe sections::

    task: tts
    data: {train: train.jsonl, valid: valid.jsonl, tokenizer: chars, mel: {n_mels: 80, ...}}
    model: {r: 2, encoder: {...}, decoder: {attention: location, ...}, postnet: {...},
            loss: {guided: {weight: 1.0, mode: exp, decay: 0.9995}}}

The checkpoint's ``symbols`` hold everything inference needs besides the weights:
``task``, ``model`` (TacotronConfig dict), ``symbols`` (SymbolTable dict), ``tokenizer``,
``mel`` (MelConfig dict), ``stats`` (target MelStats dict); see ``Tacotron.from_symbols``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch

from aligner.alignment.tiers import optional_tokens, token_tiers
from aligner.attention.search import frame_durations
from aligner.audio.features import MelConfig, MelStats
from aligner.config import ConfigError, from_dict
from aligner.data.collate import collate_tts
from aligner.data.datasets import TTSDataset
from aligner.data.manifest import read_manifest
from aligner.models.tacotron import Tacotron
from aligner.tasks.speech import SpeechLog, SpeechTask, model_config
from aligner.tasks.truth import References, TruthErrors
from aligner.text.symbols import SymbolTable
from aligner.text.tokenizers import build_tokenizer


@dataclass
class SpeechData:
    """``data:`` section shared by TTS and VC. Paths are relative to the data folder.

    ``stats_items``: compute normalization statistics over the first N training items
    (0 = all). ``log``: what validation draws for its fixed items.
    """

    train: str = "train.jsonl"
    valid: str = "valid.jsonl"
    cache_dir: str = "features"
    mel: dict[str, Any] = field(default_factory=dict)
    stats_items: int = 0
    log: SpeechLog = field(default_factory=SpeechLog)


@dataclass
class TTSData(SpeechData):
    """TTS ``data:`` section: the text front end on top of :class:`SpeechData`."""

    tokenizer: Literal["chars", "phonemes", "arpabet"] = "chars"
    tokenizer_opts: dict[str, Any] = field(default_factory=dict)
    add_eos: bool = True
    add_bos: bool = False  # prepend <s>: room for the silence before the first word


class _MemoTokenizer:
    """Tokenizes each distinct text once (symbol table and dataset share the work)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer, self.memo = tokenizer, {}

    def prime(self, texts: list[str]) -> list[list[str]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        batch = getattr(self.tokenizer, "tokenize_batch", None)
        tokens = batch(todo) if batch else [self.tokenizer.tokenize(t) for t in todo]
        self.memo.update(zip(todo, tokens))
        return [self.memo[t] for t in texts]

    tokenize_batch = prime

    def tokenize(self, text: str) -> list[str]:
        return self.prime([text])[0]


def manifest_path(data_dir: Path, name: str, key: str) -> Path:
    path = Path(data_dir) / name
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no {key} manifest; run `aligner prepare` or set data.{key}"
        )
    return path


def mel_settings(data: SpeechData) -> MelConfig:
    try:
        return MelConfig.from_dict(data.mel)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"data.mel: {err}") from None


def compute_stats(mels: Any, count: int, limit: int) -> MelStats:
    """Statistics of ``mels(i)`` over the first ``limit`` (0 = all) of ``count`` items."""
    n = count if limit <= 0 else min(limit, count)
    return MelStats.compute(mels(i) for i in range(n))


class TTSTask(SpeechTask):
    """Text -> mel Tacotron training."""

    def __init__(
        self,
        *args: Any,
        table: SymbolTable,
        kind: str = "chars",
        tokenizer: Any = None,
        add_eos: bool = True,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.table, self.kind, self.tokenizer, self.add_eos = table, kind, tokenizer, add_eos
        self._infer: list[tuple[str, torch.Tensor, list[str]]] | None = None
        self._infer_texts: dict[str, str] = {}
        self.references = References(self.valid_set.items, self.mel_cfg)

    def truth(self, out: Any, batch: dict[str, Any], errors: TruthErrors) -> None:
        """Boundary errors of the frame-level durations (`aligner.attention.search`) of the
        teacher-forced alignments against the items' reference timings."""
        sec = self.mel_cfg.hop_length / self.mel_cfg.sample_rate
        for i, uid in enumerate(batch["ids"]):
            reference = self.references.get(str(uid))
            if reference is None:
                continue
            n, frames = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            tokens = self.table.decode(batch["tokens"][i, :n].tolist())
            weights = out.alignments[i, : -(-frames // self.r), :n].float().cpu().numpy()
            try:
                durations = frame_durations(weights, self.r, frames, optional_tokens(tokens))
            except ValueError:  # fewer frames than tokens
                errors.unmatched += 1
                continue
            pauses = self.references.pauses(uid, frames)
            tiers = token_tiers(tokens, durations.tolist(), sec, self.kind, pauses=pauses)
            errors.add(reference, tiers)

    def source(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return batch["tokens"], batch["token_lengths"]

    def infer_sources(self) -> list[tuple[str, torch.Tensor, list[str]]]:
        """The first ``log.infer_items`` of ``log.infer_texts`` that are no training text
        and that the symbol table can spell, as token ids (computed once)."""
        if self._infer is None:
            self._infer = []
            seen = {" ".join(str(it["text"]).lower().split()) for it in self.train_set.items}
            for text in self.log.infer_texts:
                if len(self._infer) >= self.log.infer_items or self.tokenizer is None:
                    break
                if " ".join(text.lower().split()) in seen:
                    continue
                try:
                    ids = self.table.encode(self.tokenizer.tokenize(text))
                except ValueError as err:  # UnknownSymbolError: another alphabet
                    print(f"note: data.log.infer_texts: {text!r} skipped ({err})", file=sys.stderr)
                    continue
                ids = [*ids, self.table.eos_id] if self.add_eos else ids
                name = f"sentence{len(self._infer) + 1}"
                self._infer.append((name, torch.tensor(ids), self.table.decode(ids)))
                self._infer_texts[name] = text
        return self._infer

    def infer_text(self, name: str) -> str:
        return self._infer_texts.get(name, name)

    def infer_required(self, src: torch.Tensor) -> torch.Tensor:
        return self.table.text_positions(src)

    def required_positions(self, batch: dict[str, Any]) -> torch.Tensor:
        """Every text token; not the ``</s>`` marker appended to the text (no frames)."""
        return self.table.text_positions(batch["tokens"])

    def source_labels(self, batch: dict[str, Any], index: int) -> list[str]:
        n = int(batch["token_lengths"][index])
        return self.table.decode(batch["tokens"][index, :n].tolist())

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_tts(examples)


@dataclass
class TextSpeechData:
    """A text-and-audio corpus ready for a task: the ``data:`` settings, mel settings,
    tokenizer, symbol table, datasets and the target normalization statistics."""

    data: TTSData
    mel_cfg: MelConfig
    tokenizer: _MemoTokenizer
    table: SymbolTable
    train_set: TTSDataset
    valid_set: TTSDataset
    stats: MelStats

    def symbols(self, task: str, model: dict[str, Any]) -> dict[str, Any]:
        """The checkpoint's ``symbols``: what inference needs besides the weights."""
        return {
            "task": task,
            "model": model,
            "symbols": self.table.to_dict(),
            "tokenizer": self.tokenizer.tokenizer.to_dict(),
            "add_eos": self.data.add_eos,
            "add_bos": self.data.add_bos,
            "mel": self.mel_cfg.to_dict(),
            "stats": self.stats.to_dict(),
        }


def text_speech_data(cfg: Any, data_dir: Path) -> TextSpeechData:
    """The ``data:`` section of `cfg` read from manifests under ``data_dir`` (TTS and the
    alignment model)."""
    data = from_dict(TTSData, cfg.data, where="data")
    mel_cfg = mel_settings(data)
    train_items = read_manifest(manifest_path(data_dir, data.train, "train"))
    valid_items = read_manifest(manifest_path(data_dir, data.valid, "valid"))
    tokenizer = _MemoTokenizer(build_tokenizer(data.tokenizer, **data.tokenizer_opts))
    # the tokenizer's whole inventory, not only what the training texts happen to contain
    table = SymbolTable.from_corpus(
        [tokenizer.tokenizer.inventory(), *tokenizer.prime([it["text"] for it in train_items])]
    )
    cache = Path(data_dir) / data.cache_dir
    common = dict(
        tokenizer=tokenizer,
        symbols=table,
        mel_cfg=mel_cfg,
        cache_dir=cache,
        add_eos=data.add_eos,
        add_bos=data.add_bos,
    )
    train_set = TTSDataset(train_items, **common)
    valid_set = TTSDataset(valid_items, unknown="map", **common)
    stats = compute_stats(train_set.mel, len(train_set), data.stats_items)
    train_set.stats = valid_set.stats = stats
    return TextSpeechData(data, mel_cfg, tokenizer, table, train_set, valid_set, stats)


def build(cfg: Any, data_dir: Path) -> TTSTask:
    """The TTS task of an ``ExperimentConfig`` from manifests under ``data_dir``."""
    corpus = text_speech_data(cfg, data_dir)
    tacotron_cfg, loss_cfg = model_config(cfg.model, corpus.mel_cfg.n_mels, len(corpus.table))
    model = Tacotron.from_config(tacotron_cfg)
    task = TTSTask(
        model,
        corpus.train_set,
        corpus.valid_set,
        loss_cfg,
        corpus.mel_cfg,
        corpus.stats,
        corpus.data.log,
        table=corpus.table,
        kind=corpus.data.tokenizer,
        tokenizer=corpus.tokenizer,
        add_eos=corpus.data.add_eos,
    )
    task.symbols = corpus.symbols("tts", tacotron_cfg.to_dict())
    return task
