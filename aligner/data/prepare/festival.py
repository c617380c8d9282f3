"""The second reference corpus: natural English sentences spoken by Festival's voices.

Sentence ``i`` is spoken by ``voices[i % len(voices)]`` (the item's ``speaker``), each at
its voice's own sample rate. Every item carries ``timings``: Festival's own word and
segment times (`aligner.audio.festival`), with Festival's phone names (its ``radio``
phone set: CMUdict's ARPAbet in lower case, without stress), pauses as the gaps; the same
intervals are written as ``textgrids/ID.TextGrid``. Recordings keep Festival's silence
before the first word and after the last, as real recordings have.

An utterance whose words Festival splits differently from its text (a number or an
abbreviation read as several words, a word it drops) is reported and skipped, never
mislabelled; so is one whose segments run past its audio.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aligner.audio.festival import (
    DEFAULT_VOICES,
    FestivalError,
    FestivalJob,
    FestivalResult,
    ascii_fold,
    check_voices,
    festival_timings,
    synthesize_jobs,
)
from aligner.alignment.intervals import Interval, Timings
from aligner.alignment.textgrid import write_textgrid
from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    split_items,
    text_lines,
    write_corpus,
)
from aligner.data.prepare.natural_text import fortune_sentences, text_words
from aligner.data.report import BadItemReport

CHUNK = 20  # utterances per Festival process


def read_sentences(path: Path, report: BadItemReport) -> list[str]:
    """The non-blank lines of a UTF-8 text file, one sentence each (bad lines reported)."""
    if not path.is_file():
        raise FileNotFoundError(f"--text {path} does not exist")
    return [" ".join(line.split()) for _, _, line in text_lines(path, report)]


def prepare_festival(
    out_dir: Path,
    utterances: int = 1000,
    voices: Sequence[str] = DEFAULT_VOICES,
    text_file: Path | None = None,
    seed: int = 0,
    workers: int = 2,
    force: bool = False,
    progress: Callable[[int], object] | None = None,
) -> PrepareSummary:
    """Speak `utterances` sentences (from `text_file`, else the fortunes) with Festival's
    `voices`, write wavs, TextGrids, manifests and ``summary.json`` into `out_dir`."""
    if utterances < 1:
        raise ValueError(f"--utterances must be at least 1, got {utterances}")
    if not voices:
        raise ValueError("give at least one Festival voice with --voices")
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    check_voices(voices)
    start = time.perf_counter()
    summary = PrepareSummary("festival", out_dir)
    if text_file is not None:
        texts = read_sentences(Path(text_file), summary.bad)[:utterances]
    else:
        texts = fortune_sentences(utterances, seed)
    if not texts:
        raise ValueError(f"no sentences to speak{f' in {text_file}' if text_file else ''}")
    (out_dir / "wavs").mkdir(parents=True, exist_ok=True)
    (out_dir / "textgrids").mkdir(parents=True, exist_ok=True)
    jobs = [
        FestivalJob(text, voices[i % len(voices)], str(out_dir / "wavs" / f"festival_{i:06d}.wav"))
        for i, text in enumerate(texts)
    ]
    results = _synthesize(jobs, workers, progress)
    items = [_item(job, res, out_dir, summary.bad) for job, res in zip(jobs, results)]
    kept = [item for item in items if item is not None]
    if not kept:
        raise ValueError(f"Festival spoke none of the {len(jobs)} sentences as written")
    summary.figures = _figures(kept, voices, text_file, time.perf_counter() - start)
    return write_corpus(out_dir, split_items(kept, seed=seed), summary)


def _synthesize(
    jobs: list[FestivalJob], workers: int, progress: Callable[[int], object] | None
) -> list[FestivalResult | FestivalError]:
    """Festival's result for each job, or the error of a job Festival failed on (a chunk
    that fails is run again job by job, so one bad sentence costs only itself)."""
    chunks = [jobs[i : i + CHUNK] for i in range(0, len(jobs), CHUNK)]

    def one(job: FestivalJob) -> FestivalResult | FestivalError:
        try:
            return synthesize_jobs([job])[0]
        except FestivalError as err:
            return err

    def run(chunk: list[FestivalJob]) -> list[FestivalResult | FestivalError]:
        try:
            done: list[FestivalResult | FestivalError] = list(synthesize_jobs(chunk))
        except FestivalError:
            done = [one(job) for job in chunk]
        if progress is not None:
            progress(len(chunk))
        return done

    with ThreadPoolExecutor(max(1, workers)) as pool:
        return [r for chunk in pool.map(run, chunks) for r in chunk]


def _item(
    job: FestivalJob, result: FestivalResult | FestivalError, out_dir: Path, bad: BadItemReport
) -> dict[str, Any] | None:
    """The manifest item of one spoken sentence, or None (reported, wav removed)."""
    import soundfile

    uid = Path(job.path).stem
    try:
        if isinstance(result, FestivalError):
            raise result
        duration = soundfile.info(job.path).duration
        timings = festival_timings(result, duration)
        timings = _labelled(timings, job.text)
    except (ValueError, RuntimeError) as err:
        bad.add(f"{uid} ({job.voice}: {job.text!r})", str(err))
        Path(job.path).unlink(missing_ok=True)
        return None
    write_textgrid(timings.tiers, timings.duration, out_dir / "textgrids" / f"{uid}.TextGrid")
    return {
        "id": uid, "audio": job.path, "text": job.text, "speaker": job.voice,
        "duration": round(duration, 4), "timings": timings.to_dict(),
    }


def _labelled(timings: Timings, text: str) -> Timings:
    """`timings` with its words labelled as in `text`; ValueError when Festival's words
    are not the text's words."""
    said = [w.label for w in timings.words]
    written = text_words(text)
    if not written:
        raise ValueError("no words to speak (give a sentence with letters)")
    if [_key(w) for w in said] != [_key(w) for w in written]:
        raise ValueError(
            f"Festival read other words than the text's (it said {' '.join(said)!r}; "
            "write numbers and abbreviations out in words)"
        )
    words = [Interval(w.start, w.end, label) for w, label in zip(timings.words, written)]
    return Timings(words, timings.phones, timings.duration)


def _figures(
    items: list[dict[str, Any]], voices: Sequence[str], text_file: Path | None, elapsed: float
) -> dict[str, Any]:
    seconds = [item["duration"] for item in items]
    words = [len(text_words(item["text"])) for item in items]
    per_voice = {v: sum(1 for item in items if item["speaker"] == v) for v in voices}
    return {
        "utterances": len(items),
        "hours": round(sum(seconds) / 3600, 4),
        "words_per_sentence": f"{min(words)}-{max(words)} (mean {sum(words) / len(words):.1f})",
        "voices": per_voice,
        "texts": str(text_file) if text_file else "Debian fortunes",
        "seconds_taken": round(elapsed, 1),
    }


def _key(word: str) -> str:
    """A word as compared with Festival's (which drops some apostrophes: ma'am -> maam)."""
    return ascii_fold(word).lower().replace("'", "")
