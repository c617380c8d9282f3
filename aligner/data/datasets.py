"""Map-style datasets yielding dict examples: TTS (text -> mel), VC (mel -> mel), text pairs.

Each dataset reads a manifest (a path or already-read items), checks every item when
built (one error naming the manifest item and what to do), and exposes ``lengths``
for :class:`~aligner.data.sampler.BucketBatchSampler`. Mels come from
:class:`~aligner.data.cache.FeatureCache`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

import soundfile as sf
import torch
from torch.utils.data import Dataset

from aligner.audio.features import MelConfig, MelStats
from aligner.audio.io import AudioError
from aligner.data.cache import FeatureCache
from aligner.data.manifest import read_manifest
from aligner.text.symbols import SymbolTable, UnknownSymbolError

Manifest = str | os.PathLike | Sequence[dict[str, Any]]


def _items(manifest: Manifest, required: Sequence[str]) -> list[dict[str, Any]]:
    where = str(manifest) if isinstance(manifest, str | os.PathLike) else "manifest"
    items = read_manifest(manifest) if isinstance(manifest, str | os.PathLike) else list(manifest)
    if not items:
        raise ValueError(f"{where}: no items; run `aligner prepare` or check the path")
    check_items(items, required, where)
    return items


AUDIO_KEYS = ("audio", "target_audio")  # the recordings an item names
LISTED = 5  # bad items named in a message (all are counted)


def check_items(items: Sequence[dict[str, Any]], required: Sequence[str], where: str) -> None:
    """ValueError naming every item of `items` (the manifest `where`) that lacks one of
    `required`, or whose recording (``audio``, ``target_audio``) is not a file, counted,
    the first `LISTED` named with their place: a corpus is fixed in one go, not one item
    per run. Where no item has ``target_audio``, the recipe wants a parallel corpus."""
    if "target_audio" in required and items and not any(it.get("target_audio") for it in items):
        raise ValueError(
            f"{where}: no item has target_audio: this recipe trains on a parallel corpus of "
            "two voices (aligner prepare ... --parallel SOURCE TARGET)"
        )
    bad = []
    for n, item in enumerate(items, 1):
        name = f"item {n} ({item.get('id', 'no id')})"
        missing = [k for k in required if item.get(k) in (None, "")]
        if missing:
            bad.append(f"{name} lacks {', '.join(missing)}")
            continue
        lost = [k for k in AUDIO_KEYS if k in required and not os.path.isfile(str(item[k]))]
        if lost:
            bad.append(f"{name}: no file {item[lost[0]]}")
    if bad:
        more = f"; and {len(bad) - LISTED} more" if len(bad) > LISTED else ""
        raise ValueError(
            f"{where}: {len(bad)} bad item(s): {'; '.join(bad[:LISTED])}{more}; fix or remove them"
        )


def estimate_frames(item: dict[str, Any], key: str, cfg: MelConfig) -> int:
    """Mel frames of ``item[key]`` from its ``duration`` (for ``audio``) or the file header."""
    if key == "audio" and item.get("duration"):
        return cfg.num_frames(round(float(item["duration"]) * cfg.sample_rate))
    if not os.path.isfile(item[key]):
        raise AudioError(item[key], f"file not found (manifest item {item.get('id')!r}, {key})")
    try:
        info = sf.info(str(item[key]))
    except (sf.LibsndfileError, RuntimeError) as err:
        raise AudioError(item[key], f"not a readable audio file ({err})") from None
    return cfg.num_frames(round(info.frames * cfg.sample_rate / info.samplerate))


def _encode(
    tokens: Sequence[str], symbols: SymbolTable, unknown: str, item_id: str
) -> torch.Tensor:
    if not tokens:
        raise ValueError(f"{item_id}: empty token sequence after cleaning; fix or remove it")
    return torch.tensor(symbols.encode(tokens, unknown=unknown, context=item_id), dtype=torch.long)


def _tokenize_all(tokenizer: Any, texts: list[str]) -> list[list[str]]:
    batch = getattr(tokenizer, "tokenize_batch", None)
    return batch(texts) if batch else [tokenizer.tokenize(t) for t in texts]


class TTSDataset(Dataset):
    """Text -> mel examples: ``{"id", "tokens" (N,) long, "mel" (T, n_mels), "speaker"}``.

    Args:
        manifest: JSON Lines manifest path or its items (``id``, ``audio``, ``text``).
        tokenizer: from :func:`aligner.text.tokenizers.build_tokenizer`.
        symbols: the model's symbol table.
        mel_cfg: feature settings; cache_dir: feature cache root.
        stats: normalize mels with these statistics when given.
        unknown: ``"error"`` (UnknownSymbolError naming the item) or ``"map"`` to ``<unk>``.
        add_eos: append ``</s>`` to every token sequence.
        add_bos: prepend ``<s>`` to every token sequence.
    """

    def __init__(
        self,
        manifest: Manifest,
        tokenizer: Any,
        symbols: SymbolTable,
        mel_cfg: MelConfig,
        cache_dir: str | os.PathLike,
        stats: MelStats | None = None,
        unknown: Literal["error", "map"] = "error",
        add_eos: bool = False,
        add_bos: bool = False,
    ) -> None:
        self.items = _items(manifest, ("id", "audio", "text"))
        self.cache = FeatureCache(cache_dir, mel_cfg)
        self.stats = stats
        token_lists = _tokenize_all(tokenizer, [it["text"] for it in self.items])
        self.tokens = []
        for item, toks in zip(self.items, token_lists):
            ids = _encode(toks, symbols, unknown, str(item["id"]))
            if add_eos:
                ids = torch.cat([ids, torch.tensor([symbols.eos_id])])
            if add_bos:
                ids = torch.cat([torch.tensor([symbols.bos_id]), ids])
            self.tokens.append(ids)
        self.lengths: list[int] = [estimate_frames(it, "audio", mel_cfg) for it in self.items]

    def __len__(self) -> int:
        return len(self.items)

    def keep(self, indices: list[int]) -> None:
        """Keep only the items at `indices` (in that order), in place."""
        self.items = [self.items[i] for i in indices]
        self.tokens = [self.tokens[i] for i in indices]
        self.lengths = [self.lengths[i] for i in indices]

    def mel(self, index: int) -> torch.Tensor:
        """Log-mel ``(T, n_mels)`` of item ``index`` (normalized when stats were given)."""
        mel = self.cache.get(self.items[index]["audio"])
        return self.stats.normalize(mel) if self.stats is not None else mel

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = self.items[index]
        return {
            "id": str(item["id"]),
            "tokens": self.tokens[index],
            "mel": self.mel(index),
            "speaker": item.get("speaker"),
        }


class VCDataset(Dataset):
    """Parallel mel -> mel examples: ``{"id", "src_mel" (S, n_mels), "mel" (T, n_mels)}``.

    Items need ``audio`` (source voice) and ``target_audio`` (target voice).
    ``lengths`` are the larger of the two frame counts.
    """

    def __init__(
        self,
        manifest: Manifest,
        mel_cfg: MelConfig,
        cache_dir: str | os.PathLike,
        stats_src: MelStats | None = None,
        stats_tgt: MelStats | None = None,
    ) -> None:
        self.items = _items(manifest, ("id", "audio", "target_audio"))
        self.cache = FeatureCache(cache_dir, mel_cfg)
        self.stats_src = stats_src
        self.stats_tgt = stats_tgt
        self.lengths: list[int] = [
            max(estimate_frames(it, "audio", mel_cfg), estimate_frames(it, "target_audio", mel_cfg))
            for it in self.items
        ]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        item = self.items[index]
        src = self.cache.get(item["audio"])
        tgt = self.cache.get(item["target_audio"])
        if self.stats_src is not None:
            src = self.stats_src.normalize(src)
        if self.stats_tgt is not None:
            tgt = self.stats_tgt.normalize(tgt)
        return {"id": str(item["id"]), "src_mel": src, "mel": tgt}


def split_tokens(kind: str | Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A text splitter by name: ``chars`` (each character) or ``words`` (on whitespace)."""
    if callable(kind):
        return kind
    splitters: dict[str, Callable[[str], list[str]]] = {"chars": list, "words": str.split}
    if kind not in splitters:
        raise ValueError(f"unknown token split {kind!r}; choose 'chars', 'words' or a function")
    return splitters[kind]


class TextPairDataset(Dataset):
    """Text -> text examples: ``{"id", "src" (N,) long, "tgt" (U,) long}``.

    Items need ``source`` and ``target``. G2P defaults: the source word split into
    characters, the target pronunciation split on whitespace. ``lengths`` are the
    larger of the source and target lengths.
    """

    def __init__(
        self,
        manifest: Manifest,
        src_symbols: SymbolTable,
        tgt_symbols: SymbolTable,
        src_split: str | Callable[[str], list[str]] = "chars",
        tgt_split: str | Callable[[str], list[str]] = "words",
        unknown: Literal["error", "map"] = "error",
    ) -> None:
        self.items = _items(manifest, ("source", "target"))
        src_fn, tgt_fn = split_tokens(src_split), split_tokens(tgt_split)
        self.src: list[torch.Tensor] = []
        self.tgt: list[torch.Tensor] = []
        for n, item in enumerate(self.items):
            name = str(item.get("id", n))
            self.src.append(_encode(src_fn(item["source"]), src_symbols, unknown, name))
            self.tgt.append(_encode(tgt_fn(item["target"]), tgt_symbols, unknown, name))
        self.lengths: list[int] = [max(len(s), len(t)) for s, t in zip(self.src, self.tgt)]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {
            "id": str(self.items[index].get("id", index)),
            "src": self.src[index],
            "tgt": self.tgt[index],
        }


__all__ = [
    "TTSDataset",
    "TextPairDataset",
    "UnknownSymbolError",
    "VCDataset",
    "estimate_frames",
    "split_tokens",
]
