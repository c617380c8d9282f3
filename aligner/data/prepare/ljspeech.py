"""LJSpeech-1.1 from a local folder: ``metadata.csv`` (``id|text|normalized text``,
no quoting) and ``wavs/ID.wav``.

torchaudio.datasets.LJSPEECH reads the same file, but it loads audio with
``torchaudio.load`` (which needs TorchCodec from torchaudio 2.9 on) and stops at the
first bad line; this reader reports every bad line and file instead.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aligner.data.prepare.audio_check import check_audio
from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    split_items,
    text_lines,
    write_corpus,
)
from aligner.data.report import BadItemReport

SPEAKER = "LJ"


def read_metadata(corpus: Path, report: BadItemReport) -> list[dict[str, Any]]:
    """Items from ``metadata.csv``; the normalized text is used (the raw one when the
    third column is empty). Bad lines go to ``report`` with their line number."""
    path = corpus / "metadata.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; give the LJSpeech-1.1 folder")
    items, seen = [], set()
    for _, where, line in text_lines(path, report):
        fields = line.split("|")
        if len(fields) < 2 or not fields[0]:
            report.add(where, "malformed line (expected id|text|normalized text)")
            continue
        uid, text = fields[0], (fields[2] if len(fields) > 2 and fields[2].strip() else fields[1])
        if not text.strip():
            report.add(where, f"empty text for {uid}")
        elif uid in seen:
            report.add(where, f"duplicate id {uid}")
        else:
            seen.add(uid)
            audio = str(corpus / "wavs" / f"{uid}.wav")
            items.append({"id": uid, "audio": audio, "text": text.strip(), "speaker": SPEAKER})
    return items


def prepare_ljspeech(
    corpus: Path,
    out_dir: Path,
    seed: int = 0,
    skip_bad: bool = False,
    force: bool = False,
    progress: Callable[[int], object] | None = None,
) -> PrepareSummary:
    """Validate every line and wav, then write train/valid/test manifests."""
    corpus, out_dir = Path(corpus), Path(out_dir)
    check_outputs(out_dir, force)
    report = BadItemReport()
    items = check_audio(read_metadata(corpus, report), report, progress)
    report.check(skip_bad)
    summary = PrepareSummary("ljspeech", out_dir, bad=report)
    summary.figures = {"hours": round(sum(i["duration"] for i in items) / 3600, 4)}
    return write_corpus(out_dir, split_items(items, seed=seed), summary)
