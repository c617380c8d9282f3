"""Datasets and the feature cache on small generated corpora."""

import math
import os

import numpy as np
import pytest
import soundfile as sf
import torch
from torch.utils.data import DataLoader

from aligner.audio.features import MelConfig, MelStats, log_mel
from aligner.audio.io import load_audio
from aligner.data.cache import FeatureCache
from aligner.data.collate import collate_tts, collate_vc
from aligner.data.datasets import TextPairDataset, TTSDataset, VCDataset
from aligner.data.manifest import write_manifest
from aligner.data.sampler import BucketBatchSampler
from aligner.text.symbols import SymbolTable, UnknownSymbolError
from aligner.text.tokenizers import build_tokenizer

CFG = MelConfig(
    sample_rate=16000, n_fft=512, hop_length=160, win_length=400, n_mels=20, f_max=8000.0
)
CHARS = SymbolTable(list("abcdefghijklmnopqrstuvwxyz .,!?'-"))


def _wav(path, seconds, freq, sr=16000):
    t = np.arange(int(sr * seconds)) / sr
    sf.write(path, (0.3 * np.sin(2 * math.pi * freq * t)).astype(np.float32), sr)
    return path


@pytest.fixture
def corpus(tmp_path):
    items = []
    for k, (sec, text) in enumerate(
        [(0.3, "Hello world."), (0.5, "Dr. Who has 2 cats."), (0.2, "Short one!")]
    ):
        audio = _wav(tmp_path / f"u{k}.wav", sec, 200 + 100 * k)
        target = _wav(tmp_path / f"t{k}.wav", sec * 1.3, 300 + 50 * k, sr=22050)
        items.append(
            {
                "id": f"u{k}",
                "audio": str(audio),
                "target_audio": str(target),
                "text": text,
                "speaker": "spk",
            }
        )
    return write_manifest(tmp_path / "train.jsonl", items)


def test_tts_dataset_examples_match_features(corpus, tmp_path):
    ds = TTSDataset(corpus, build_tokenizer("chars"), CHARS, CFG, tmp_path / "cache")
    ex = ds[1]
    assert ex["id"] == "u1" and ex["speaker"] == "spk"
    assert CHARS.decode(ex["tokens"].tolist()) == list("doctor who has two cats.")
    wav, _ = load_audio(tmp_path / "u1.wav", CFG.sample_rate)
    assert torch.allclose(ex["mel"], log_mel(wav, CFG), atol=1e-5)
    assert ds.lengths == [len(ds[i]["mel"]) for i in range(len(ds))]


def test_tts_dataset_normalizes_with_stats_and_eos(corpus, tmp_path):
    raw = TTSDataset(corpus, build_tokenizer("chars"), CHARS, CFG, tmp_path / "c")
    stats = MelStats.compute(raw[i]["mel"] for i in range(len(raw)))
    ds = TTSDataset(
        corpus, build_tokenizer("chars"), CHARS, CFG, tmp_path / "c", stats=stats, add_eos=True
    )
    assert torch.allclose(ds[0]["mel"], stats.normalize(raw[0]["mel"]))
    assert ds[0]["tokens"][-1].item() == CHARS.eos_id
    assert len(ds[0]["tokens"]) == len(raw[0]["tokens"]) + 1


def test_unknown_symbols_name_the_item(corpus, tmp_path):
    small = SymbolTable(list("abcdefghijklmnopqrstuvwxyz "))
    with pytest.raises(UnknownSymbolError, match=r"u0.*'\.'"):
        TTSDataset(corpus, build_tokenizer("chars"), small, CFG, tmp_path / "c")
    ds = TTSDataset(corpus, build_tokenizer("chars"), small, CFG, tmp_path / "c", unknown="map")
    assert small.unk_id in ds[0]["tokens"].tolist()


def test_missing_audio_and_empty_text_are_clear(tmp_path):
    items = [{"id": "x", "audio": str(tmp_path / "nope.wav"), "text": "hi"}]
    with pytest.raises(ValueError, match=r"item 1 \(x\): no file .*nope.wav"):
        TTSDataset(items, build_tokenizer("chars"), CHARS, CFG, tmp_path / "c")
    good = str(_wav(tmp_path / "a.wav", 0.2, 300))
    items = [{"id": "y", "audio": good, "text": ""}, {"id": "z", "audio": good, "text": "hi"}]
    items += [{"id": "w", "audio": str(tmp_path / "gone.wav"), "text": "hi"}]
    with pytest.raises(ValueError, match=r"2 bad item\(s\): item 1 \(y\) lacks text; item 3"):
        TTSDataset(items, build_tokenizer("chars"), CHARS, CFG, tmp_path / "c")


def test_cache_computes_once_and_recomputes_on_settings_change(corpus, tmp_path, monkeypatch):
    audio = tmp_path / "u0.wav"
    cache = FeatureCache(tmp_path / "cache", CFG)
    first = cache.get(audio)
    calls = []
    monkeypatch.setattr(FeatureCache, "compute", lambda self, a: calls.append(a))
    assert torch.equal(cache.get(audio), first) and calls == []  # a hit: no recompute
    monkeypatch.undo()

    other = MelConfig(**{**CFG.to_dict(), "hop_length": 80})
    cache2 = FeatureCache(tmp_path / "cache", other)
    assert cache2.dir != cache.dir
    second = cache2.get(audio)
    assert second.shape[0] == other.num_frames(int(0.3 * 16000)) != first.shape[0]
    assert not [p for p in (tmp_path / "cache").rglob("*.tmp")]


def test_cache_recomputes_when_audio_file_changes(tmp_path):
    audio = _wav(tmp_path / "a.wav", 0.2, 300)
    cache = FeatureCache(tmp_path / "cache", CFG)
    before = cache.get(audio)
    _wav(audio, 0.4, 300)
    os.utime(audio, ns=(1, 10**18))
    assert cache.get(audio).shape[0] > before.shape[0]


def test_cache_survives_a_corrupt_file(tmp_path):
    audio = _wav(tmp_path / "a.wav", 0.2, 300)
    cache = FeatureCache(tmp_path / "cache", CFG)
    good = cache.get(audio)
    cache.path_for(audio).write_bytes(b"\x93NUMPY garbage")
    assert torch.equal(cache.get(audio), good)


def test_concurrent_workers_share_one_cache(corpus, tmp_path):
    ds = TTSDataset(corpus, build_tokenizer("chars"), CHARS, CFG, tmp_path / "cache")
    sampler = BucketBatchSampler(ds.lengths, 2, seed=0)
    loader = DataLoader(ds, batch_sampler=sampler, collate_fn=collate_tts, num_workers=2)
    batches = list(loader) + list(loader)
    assert sum(len(b["ids"]) for b in batches) == 2 * len(ds)
    files = list(ds.cache.dir.glob("*.npy"))
    assert len(files) == len(ds) and not list(ds.cache.dir.glob("*.tmp"))


def test_vc_dataset_pairs_and_resamples(corpus, tmp_path):
    ds = VCDataset(corpus, CFG, tmp_path / "cache")
    ex = ds[2]
    assert ex["src_mel"].shape == (CFG.num_frames(int(0.2 * 16000)), CFG.n_mels)
    assert abs(ex["mel"].shape[0] - CFG.num_frames(int(0.26 * 16000))) <= 1
    assert ds.lengths[2] == max(len(ex["src_mel"]), len(ex["mel"]))
    batch = collate_vc([ds[0], ds[1]])
    assert batch["src_mel"].shape[0] == 2


def test_text_pair_dataset_for_g2p(tmp_path):
    items = [
        {"id": "hello", "source": "hello", "target": "HH AH0 L OW1"},
        {"id": "hi", "source": "hi", "target": "HH AY1"},
    ]
    src = SymbolTable(list("ehilo"))
    tgt = SymbolTable(["HH", "AH0", "L", "OW1", "AY1"])
    ds = TextPairDataset(items, src, tgt)
    assert src.decode(ds[0]["src"].tolist()) == list("hello")
    assert tgt.decode(ds[0]["tgt"].tolist()) == ["HH", "AH0", "L", "OW1"]
    assert ds.lengths == [5, 2]
    with pytest.raises(UnknownSymbolError, match="'x'"):
        TextPairDataset([{"id": "x", "source": "x", "target": "HH"}], src, tgt)
