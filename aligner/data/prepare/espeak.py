"""The built-in corpus: generated English sentences spoken by eSpeak NG voices.

Single-voice or multi-voice (TTS): each sentence is spoken by one voice, cycling
through ``voices``. Parallel (VC): each sentence is spoken by a source and a target
voice, ``audio`` and ``target_audio`` in the manifest.

Reference timings: every item carries ``timings`` (of ``audio``; and ``target_timings`` of
``target_audio`` in a parallel corpus), the start and end in seconds of each word and each
phone as eSpeak NG reported them while speaking (`aligner.audio.espeak_timings`):
``{"duration": 2.41, "words": [[0.012, 0.379, "Seven"], ...], "phones": [[0.012, 0.085,
"s"], ...]}``. The same intervals are written as Praat TextGrids with tiers ``words`` and
``phones``: ``textgrids/ID.TextGrid`` (and ``textgrids/ID_target.TextGrid``). Stops and
affricates start at their closure by default (``stops="burst"``: at eSpeak NG's event, the
burst; `aligner.audio.espeak_timings`); ``summary.json`` records which (``stops``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aligner.alignment.intervals import Timings
from aligner.alignment.textgrid import write_textgrid
from aligner.audio.synth import SAMPLE_RATE, SynthJob, Voice, synthesize_to_files
from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    split_items,
    write_corpus,
)
from aligner.data.prepare.sentences import SentenceGenerator
from aligner.files import make_folder

DEFAULT_VOICE = "en-us"
# A source and target voice that differ in pitch, timbre and speaking rate.
DEFAULT_PARALLEL = ("en-us+m3,rate=150,pitch=35", "en-us+f2,rate=210,pitch=70")


def speaker_name(voice: Voice) -> str:
    """A file-name-safe speaker label for a voice, e.g. ``en-us+m3_r150_p35``."""
    label = f"{voice.name}_r{voice.rate}_p{voice.pitch}"
    return re.sub(r"[^A-Za-z0-9+_-]", "-", label)


def prepare_espeak(
    out_dir: Path,
    utterances: int = 1000,
    voices: Sequence[str] = (DEFAULT_VOICE,),
    parallel: tuple[str, str] | None = None,
    seed: int = 0,
    workers: int = 2,
    force: bool = False,
    progress: Callable[[int], object] | None = None,
    stops: str = "closure",
) -> PrepareSummary:
    """Generate ``utterances`` sentences, synthesize them, write wavs and manifests.

    With ``parallel=(src, tgt)`` every sentence is spoken by both voices (VC pairs);
    otherwise sentence ``i`` is spoken by ``voices[i % len(voices)]``. Deterministic for
    a seed: same texts, same WAV bytes. ``stops``: "closure" or "burst", where the
    reference timings start a stop (`aligner.audio.synth.synthesize_timed`).
    """
    if utterances < 1:
        raise ValueError(f"--utterances must be at least 1, got {utterances}")
    if stops not in ("closure", "burst"):
        raise ValueError(f"--stops {stops!r}: use closure or burst")
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    start = time.perf_counter()
    parsed = [Voice.parse(v) for v in (parallel or voices)]
    if parallel is not None and parsed[0] == parsed[1]:
        raise ValueError(f"--parallel {parallel[0]} {parallel[1]}: give two different voices")
    texts = SentenceGenerator(seed).generate(utterances)
    items, jobs = _plan(out_dir, texts, parsed, parallel is not None, stops)
    make_folder(out_dir / "wavs")
    timings = synthesize_to_files(jobs, workers=workers, progress=progress)
    seconds = [t.duration for t in timings]
    _add_timings(items, timings, parallel is not None, out_dir / "textgrids")
    summary = PrepareSummary("espeak", out_dir)
    summary.figures = _figures(texts, seconds, parsed, time.perf_counter() - start)
    summary.figures["stops"] = stops
    return write_corpus(out_dir, split_items(items, seed=seed), summary)


def _plan(
    out_dir: Path, texts: list[str], voices: list[Voice], parallel: bool, stops: str
) -> tuple[list[dict[str, Any]], list[SynthJob]]:
    """Manifest items and synthesis jobs (for a parallel pair: source, target, ...)."""
    items, jobs = [], []
    for i, text in enumerate(texts):
        uid = f"espeak_{i:06d}"
        if parallel:
            src, tgt = voices
            src_path = out_dir / "wavs" / f"{uid}_src.wav"
            tgt_path = out_dir / "wavs" / f"{uid}_tgt.wav"
            jobs += [
                SynthJob(text, src, str(src_path), stops),
                SynthJob(text, tgt, str(tgt_path), stops),
            ]
            item = {"id": uid, "audio": str(src_path), "target_audio": str(tgt_path)}
            item.update(text=text, speaker=speaker_name(src), target_speaker=speaker_name(tgt))
        else:
            voice = voices[i % len(voices)]
            path = out_dir / "wavs" / f"{uid}.wav"
            jobs.append(SynthJob(text, voice, str(path), stops))
            item = {"id": uid, "audio": str(path), "text": text, "speaker": speaker_name(voice)}
        items.append(item)
    return items, jobs


def _add_timings(
    items: list[dict[str, Any]], timings: list[Timings], parallel: bool, grids: Path
) -> None:
    """Durations and reference timings into the items; a TextGrid of each audio file."""
    make_folder(grids)
    step = 2 if parallel else 1
    for i, item in enumerate(items):
        source = timings[i * step]
        item["duration"] = round(source.duration, 4)
        item["timings"] = source.to_dict()
        write_textgrid(source.tiers, source.duration, grids / f"{item['id']}.TextGrid")
        if parallel:
            target = timings[i * step + 1]
            item["target_duration"] = round(target.duration, 4)
            item["target_timings"] = target.to_dict()
            write_textgrid(target.tiers, target.duration, grids / f"{item['id']}_target.TextGrid")


def _figures(
    texts: list[str], seconds: list[float], voices: list[Voice], elapsed: float
) -> dict[str, Any]:
    vocabulary = {w for text in texts for w in re.findall(r"[a-z']+", text.lower())}
    words = [len(text.split()) for text in texts]
    return {
        "utterances": len(texts),
        "audio_files": len(seconds),
        "hours": round(sum(seconds) / 3600, 4),
        "vocabulary": len(vocabulary),
        "words_per_sentence": f"{min(words)}-{max(words)} (mean {sum(words) / len(words):.1f})",
        "voices": [v.spec for v in voices],
        "sample_rate": SAMPLE_RATE,
        "seconds_taken": round(elapsed, 1),
    }
