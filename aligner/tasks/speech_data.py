"""The speech corpora of the speech tasks: the ``data:`` sections of TTS, VC and the
alignment model, their manifests, mel settings and normalization statistics, and the
text-and-audio corpus (tokenizer, symbol table, datasets) that TTS and the alignment
model share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aligner.audio.features import MelConfig, MelStats
from aligner.config import ConfigError, from_dict
from aligner.data.datasets import TTSDataset, VCDataset, check_items
from aligner.data.manifest import read_manifest
from aligner.tasks.speech import SpeechLog
from aligner.text.symbols import SymbolTable
from aligner.text.tokenizers import build_tokenizer


@dataclass
class SpeechData:
    """``data:`` section shared by TTS and VC. Paths are relative to the data folder.

    ``stats_items``: compute normalization statistics over the first N training items
    (0 = all). ``log``: what validation draws for its fixed items. ``durations``: folders
    of the alignment model's records of the (target) audio, ``source_durations`` (VC) of
    the source audio: what ``model.loss.guided.source: durations`` guides the attention
    with (`aligner.tasks.guides`).
    """

    train: str = "train.jsonl"
    valid: str = "valid.jsonl"
    cache_dir: str = "features"
    mel: dict[str, Any] = field(default_factory=dict)
    stats_items: int = 0
    log: SpeechLog = field(default_factory=SpeechLog)
    durations: list[str] | str | None = None
    source_durations: list[str] | str | None = None


@dataclass
class TTSData(SpeechData):
    """TTS ``data:`` section: the text front end on top of :class:`SpeechData`."""

    tokenizer: Literal["chars", "phonemes", "arpabet"] = "chars"
    tokenizer_opts: dict[str, Any] = field(default_factory=dict)
    add_eos: bool = True
    add_bos: bool = False  # prepend <s>: room for the silence before the first word
    # the recordings each item gives (a parallel corpus: [audio, target_audio], both voices)
    audio_keys: list[str] = field(default_factory=lambda: ["audio"])


def with_voices(items: list[dict[str, Any]], keys: list[str], where: str) -> list[dict[str, Any]]:
    """One item per recording of each item: ``audio`` as it is, another key (e.g.
    ``target_audio``) as an item ``ID@KEY`` whose ``audio`` is that recording and whose
    ``timings`` are the item's ``target_timings`` (``KEY`` with ``audio`` -> ``timings``).
    ConfigError naming the item when one lacks a key."""
    if keys == ["audio"]:
        return items
    out = []
    for item in items:
        for key in keys:
            if not item.get(key):
                raise ConfigError(
                    f"{where}: item {item.get('id')!r} has no {key!r}; data.audio_keys {keys} "
                    "names the recordings of every item"
                )
            if key == "audio":
                out.append(item)
                continue
            timings = item.get(key.replace("audio", "timings"))
            voice = {k: v for k, v in item.items() if k not in ("timings", "duration")}
            out.append(
                {**voice, "id": f"{item['id']}@{key}", "audio": item[key], "timings": timings}
            )
    return out


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
    try:  # types checked and number-like strings read (YAML 1.1 reads 1e9 as a string)
        return from_dict(MelConfig, data.mel, "data.mel")
    except ConfigError:
        raise
    except (TypeError, ValueError) as err:
        raise ConfigError(f"data.mel: {err}") from None


def compute_stats(mels: Any, count: int, limit: int) -> MelStats:
    """Statistics of ``mels(i)`` over the first ``limit`` (0 = all) of ``count`` items."""
    n = count if limit <= 0 else min(limit, count)
    return MelStats.compute(mels(i) for i in range(n))


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


def _checked(path: Path, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """The items of the manifest `path`, every bad one named at once (`check_items`)."""
    items = read_manifest(path)
    check_items(items, keys, str(path))
    return items


def text_speech_data(cfg: Any, data_dir: Path) -> TextSpeechData:
    """The ``data:`` section of `cfg` read from manifests under ``data_dir`` (TTS and the
    alignment model)."""
    data = from_dict(TTSData, cfg.data, where="data")
    mel_cfg = mel_settings(data)
    train_path = manifest_path(data_dir, data.train, "train")
    valid_path = manifest_path(data_dir, data.valid, "valid")
    needed = ("id", "text", *data.audio_keys)
    train_items = with_voices(_checked(train_path, needed), data.audio_keys, str(train_path))
    valid_items = with_voices(_checked(valid_path, needed), data.audio_keys, str(valid_path))
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


@dataclass
class ParallelCorpus:
    """The parallel train and valid sets of a VC recipe, normalized by the statistics of
    each voice's training mels (``stats_src``, ``stats_tgt``)."""

    data: SpeechData
    mel_cfg: MelConfig
    train_set: VCDataset
    valid_set: VCDataset
    stats_src: MelStats
    stats_tgt: MelStats


def parallel_corpus(cfg: Any, data_dir: Path) -> ParallelCorpus:
    """The `ParallelCorpus` of an ``ExperimentConfig``'s ``data:`` under ``data_dir``."""
    data = from_dict(SpeechData, cfg.data, where="data")
    mel_cfg = mel_settings(data)
    cache = Path(data_dir) / data.cache_dir
    train_set, valid_set = (
        VCDataset(
            _checked(manifest_path(data_dir, name, key), ("id", "audio", "target_audio")),
            mel_cfg,
            cache,
        )
        for name, key in ((data.train, "train"), (data.valid, "valid"))
    )

    def stats_of(side: str) -> MelStats:  # side: "audio" (source) or "target_audio"
        mel = lambda i: train_set.cache.get(train_set.items[i][side])  # noqa: E731
        return compute_stats(mel, len(train_set), data.stats_items)

    stats_src, stats_tgt = stats_of("audio"), stats_of("target_audio")
    for dataset in (train_set, valid_set):
        dataset.stats_src, dataset.stats_tgt = stats_src, stats_tgt
    return ParallelCorpus(data, mel_cfg, train_set, valid_set, stats_src, stats_tgt)
