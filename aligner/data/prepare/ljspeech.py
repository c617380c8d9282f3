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

from aligner.data.prepare.audio_check import prepare_recordings
from aligner.data.prepare.common import (
    PrepareSummary,
    text_lines,
)
from aligner.data.report import BadItemReport
from aligner.text.normalize import has_words

SPEAKER = "LJ"


def _line_id(raw: bytes) -> str:
    """The id of a raw metadata line (its ASCII first field), or ''."""
    head = raw.split(b"|", 1)[0]
    return head.decode("ascii") if head.isascii() and head.strip() else ""


def _parse(fields: list[str], where: str) -> tuple[str, str] | str:
    """(id, text) of one line's fields, or the reason it is bad."""
    uid = fields[0].strip()
    if len(fields) not in (2, 3) or not uid:
        named = f" of {uid}" if uid else ""
        return (
            f"malformed line{named}: {len(fields)} field(s), expected 3 (id|text|normalized text)"
        )
    text = fields[2] if len(fields) > 2 and fields[2].strip() else fields[1]
    if not text.strip():
        return f"empty text for {uid}"
    if not has_words(text):
        return f"no words in the text of {uid} ({text.strip()!r}): only punctuation or symbols"
    return uid, text.strip()


def read_metadata(corpus: Path, report: BadItemReport) -> list[dict[str, Any]]:
    """Items from ``metadata.csv``; the normalized text is used (the raw one when the
    third column is empty). Bad lines go to ``report`` with their line number and id."""
    path = corpus / "metadata.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; give the LJSpeech-1.1 folder")
    items, seen = [], set()
    for _, where, line in text_lines(path, report, ident=_line_id):
        parsed = _parse(line.split("|"), where)
        if isinstance(parsed, str):
            report.add(where, parsed)
        elif parsed[0] in seen:
            report.add(where, f"duplicate id {parsed[0]}")
        else:
            uid, text = parsed
            seen.add(uid)
            audio = str(corpus / "wavs" / f"{uid}.wav")
            items.append({"id": uid, "audio": audio, "text": text, "speaker": SPEAKER})
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
    read = lambda report: read_metadata(Path(corpus), report)  # noqa: E731
    return prepare_recordings("ljspeech", out_dir, read, seed, skip_bad, force, progress)
