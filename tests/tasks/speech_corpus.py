"""A tiny synthetic speech corpus (tones whose length follows the text) for task tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from aligner.data.manifest import write_manifest

SR = 8000
MEL = {
    "sample_rate": SR,
    "n_fft": 256,
    "win_length": 256,
    "hop_length": 80,
    "n_mels": 16,
    "f_max": 4000.0,
}
TEXTS = ["a cab", "bad bead", "dab", "a bee", "cede a dab", "faced"]


def _tone(text: str, rate: float, seed: int) -> np.ndarray:
    """One 0.04 s * rate tone per character, pitch from the character."""
    rng = np.random.default_rng(seed)
    pieces = []
    for ch in text:
        n = int(0.04 * rate * SR)
        f = 200 + 40 * (ord(ch) % 16)
        t = np.arange(n) / SR
        pieces.append(0.3 * np.sin(2 * np.pi * f * t) + 0.01 * rng.standard_normal(n))
    return np.concatenate(pieces).astype(np.float32)


def char_timings(text: str) -> dict:
    """Reference timings of `_tone(text, 1.0, ...)`: each character lasts 0.04 s; a word
    spans its characters and, as between eSpeak NG's words, runs on to where the next word
    starts (the space is no pause); no phones (the tokens are characters)."""
    words, start = [], 0
    for word in text.split(" "):
        end = start + len(word) + (1 if start + len(word) < len(text) else 0)
        words.append([0.04 * start, 0.04 * end, word])
        start += len(word) + 1
    return {"duration": 0.04 * len(text), "words": words, "phones": []}


def make_corpus(root: Path, parallel: bool = False) -> Path:
    """Write wavs and train/valid manifests under ``root`` (TTS items with reference
    timings); returns ``root``."""
    (root / "wavs").mkdir(parents=True, exist_ok=True)
    items = []
    for i, text in enumerate(TEXTS):
        sf.write(root / "wavs" / f"u{i}.wav", _tone(text, 1.0, i), SR)
        item = {
            "id": f"u{i}",
            "audio": str(root / "wavs" / f"u{i}.wav"),
            "text": text,
            "speaker": "s",
        }
        if not parallel:
            item["timings"] = char_timings(text)
        if parallel:
            sf.write(root / "wavs" / f"t{i}.wav", _tone(text[::-1], 1.4, i + 100), SR)
            item["target_audio"] = str(root / "wavs" / f"t{i}.wav")
        items.append(item)
    write_manifest(root / "train.jsonl", items[:4])
    write_manifest(root / "valid.jsonl", items[4:])
    return root


TINY_MODEL = {
    "r": 2,
    "decoder": {"prenet_dims": [16, 16], "attn_rnn_dim": 32, "attn_dim": 16, "dec_dim": 32},
    "postnet": {"channels": 16},
}
