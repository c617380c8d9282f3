"""CMU ARCTIC from local speaker folders: ``cmu_us_SPK_arctic/wav/arctic_a0001.wav`` and
``cmu_us_SPK_arctic/etc/txt.done.data`` (lines ``( arctic_a0001 "Text." )``).

One speaker gives a TTS corpus; ``target`` pairs the two speakers' recordings of the
same utterance id (VC). torchaudio.datasets.CMUARCTIC expects its own archive layout
and loads audio with ``torchaudio.load``; this reader takes any folder holding the
speaker folders and reports bad lines and files.
"""

from __future__ import annotations

import re
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

_LINE = re.compile(r'^\(\s*(\S+)\s+"(.*)"\s*\)\s*$')


def speaker_dir(corpus: Path, speaker: str) -> Path:
    """The folder of ``speaker`` (``corpus`` itself may be that folder)."""
    for candidate in (corpus / f"cmu_us_{speaker}_arctic", corpus):
        if (candidate / "etc" / "txt.done.data").is_file() and speaker in candidate.name:
            return candidate
    raise FileNotFoundError(
        f"{corpus}: no cmu_us_{speaker}_arctic/etc/txt.done.data; give the folder that holds "
        "the ARCTIC speaker folders and a speaker such as bdl or slt"
    )


def read_prompts(folder: Path, report: BadItemReport) -> dict[str, str]:
    """``{utterance id: text}`` from ``etc/txt.done.data``; bad lines go to ``report``."""
    path = folder / "etc" / "txt.done.data"
    prompts: dict[str, str] = {}
    for _, where, line in text_lines(path, report):
        match = _LINE.match(line.strip())
        if match is None:
            report.add(where, 'malformed line (expected ( arctic_a0001 "text" ))')
        elif not match.group(2).strip():
            report.add(where, f"empty text for {match.group(1)}")
        elif not has_words(match.group(2)):
            report.add(where, f"no words in the text of {match.group(1)}: only punctuation")
        else:
            prompts[match.group(1)] = match.group(2).strip()
    return prompts


def read_arctic(
    corpus: Path, source: str, target: str | None, report: BadItemReport
) -> list[dict[str, Any]]:
    """Manifest items for one speaker, or pairs by utterance id for two."""
    if target == source:
        raise ValueError(f"--source and --target are both {source}: give two speakers")
    src_dir = speaker_dir(corpus, source)
    prompts = read_prompts(src_dir, report)
    tgt_dir = speaker_dir(corpus, target) if target else None
    tgt_prompts = read_prompts(tgt_dir, report) if tgt_dir else {}
    items = []
    for uid, text in prompts.items():
        item = {"id": f"{source}_{uid}", "audio": str(src_dir / "wav" / f"{uid}.wav")}
        item.update(text=text, speaker=source)
        if tgt_dir is not None:
            if uid not in tgt_prompts:
                report.add(tgt_dir / "etc" / "txt.done.data", f"no prompt for {uid} of {source}")
                continue
            if _words(tgt_prompts[uid]) != _words(text):  # the two may say other words
                report.add(
                    tgt_dir / "etc" / "txt.done.data",
                    f"{uid}: {target}'s prompt {tgt_prompts[uid]!r} is not {source}'s {text!r}",
                )
                continue
            item["id"] = f"{source}_{target}_{uid}"
            item.update(target_audio=str(tgt_dir / "wav" / f"{uid}.wav"), target_speaker=target)
        items.append(item)
    return items


def _words(text: str) -> list[str]:
    """A prompt's words, case and punctuation aside."""
    return re.findall(r"[\w']+", text.casefold())


def prepare_arctic(
    corpus: Path,
    out_dir: Path,
    source: str,
    target: str | None = None,
    seed: int = 0,
    skip_bad: bool = False,
    force: bool = False,
    progress: Callable[[int], object] | None = None,
) -> PrepareSummary:
    """Validate prompts and wavs of ``source`` (and ``target``), write the manifests."""
    return prepare_recordings(
        "arctic",
        out_dir,
        lambda report: read_arctic(Path(corpus), source, target, report),
        seed,
        skip_bad,
        force,
        progress,
        {"speakers": f"{source} -> {target}" if target else source},
    )
