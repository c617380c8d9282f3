"""Builders of tiny corpora in the real on-disk formats (LJSpeech, CMU ARCTIC, TSV)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

SR = 22050


def tone(path: Path, seconds: float, f0: float, sr: int = SR) -> None:
    """Write a sine tone of ``seconds`` as a 16-bit WAV."""
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * sr)) / sr
    sf.write(path, (0.3 * np.sin(2 * np.pi * f0 * t)).astype(np.float32), sr, subtype="PCM_16")


def ljspeech(root: Path, n: int = 8) -> Path:
    """LJSpeech-1.1 layout: metadata.csv (``id|text|normalized text``) + wavs/ID.wav.

    Utterance i lasts ``0.5 + 0.1 * i`` seconds; line 2 has raw text with a number and
    its normalized form spelled out, so the reader must take the third column.
    """
    lines = []
    for i in range(n):
        uid = f"LJ001-{i + 1:04d}"
        tone(root / "wavs" / f"{uid}.wav", 0.5 + 0.1 * i, 150 + 10 * i)
        raw = f'Sentence "{i}" here.' if i != 1 else "Printing in 1450, Mr. Smith said."
        norm = raw if i != 1 else "Printing in fourteen fifty, Mister Smith said."
        lines.append(f"{uid}|{raw}|{norm}")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def arctic(root: Path, speakers: tuple[str, ...] = ("bdl", "slt"), n: int = 6) -> Path:
    """CMU ARCTIC layout: cmu_us_SPK_arctic/{wav/arctic_aNNNN.wav, etc/txt.done.data}."""
    for k, spk in enumerate(speakers):
        base = root / f"cmu_us_{spk}_arctic"
        lines = []
        for i in range(n):
            uid = f"arctic_a{i + 1:04d}"
            tone(base / "wav" / f"{uid}.wav", 0.5 + 0.05 * i + 0.2 * k, 120 + 100 * k)
            lines.append(f'( {uid} "Author of the danger trail, number {i}." )')
        (base / "etc").mkdir(parents=True, exist_ok=True)
        (base / "etc" / "txt.done.data").write_text("\n".join(lines) + "\n")
    return root


def tsv(path: Path, n: int = 10) -> Path:
    """Tatoeba-style pairs ``source<TAB>target<TAB>attribution``; two lines share a source."""
    lines = [f"Sentence {i}.\tPhrase {i}.\tCC-BY 2.0 (France) Attribution: #{i}" for i in range(n)]
    lines.append("Sentence 0.\tAutre phrase 0.\tCC-BY")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
