"""The second reference corpus: natural sentences spoken by Festival's voices (English by
default; any language Debian has a Festival voice for, with the user's text).

Sentence ``i`` is spoken by ``voices[i % len(voices)]`` (the item's ``speaker``), each at
its voice's own sample rate. A parallel corpus (VC pairs, ``parallel=(src, tgt)``) has every
sentence spoken by both voices: ``audio`` and ``target_audio``, each with its own timings
(``timings``, ``target_timings``; ``textgrids/ID_target.TextGrid``), as `aligner prepare
espeak --parallel` writes them; a sentence either voice fails on is skipped whole. Every item carries ``timings``: Festival's own word and
segment times (`aligner.audio.festival`), with Festival's phone names (the English
voices' ``radio`` phone set: CMUdict's ARPAbet in lower case, without stress; another
language's voice its own set), pauses as the gaps; the same intervals are written as
``textgrids/ID.TextGrid``. Recordings keep Festival's silence before the first word and
after the last, as real recordings have. Each voice is given the text in its own encoding
(ISO-8859-2 for Debian's Czech voices; `aligner.audio.festival_text.speakable`): a sentence
with a letter the voice cannot read is reported and skipped, never spoken without it.

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

from aligner.alignment.intervals import Interval, Timings
from aligner.alignment.textgrid import write_textgrid
from aligner.audio.festival import (
    DEFAULT_VOICES,
    ESPEAK_LANGUAGES,
    FestivalError,
    FestivalJob,
    FestivalResult,
    check_voices,
    festival_timings,
    synthesize_jobs,
    voice_settings,
)
from aligner.audio.festival_text import UnspeakableText, VoiceSetting, speakable
from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    corpus_files,
    empty_split_warnings,
    split_items,
    text_lines,
    write_corpus,
)
from aligner.data.prepare.natural_text import fortune_sentences, text_words
from aligner.data.report import BadItemReport
from aligner.files import make_folder
from aligner.text.letters import APOSTROPHES

CHUNK = 20  # utterances per Festival process
LONG_SECONDS = 30.0  # an item longer than this is kept with a warning


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
    parallel: Sequence[str] | None = None,
) -> PrepareSummary:
    """Speak `utterances` sentences (from `text_file`, else the fortunes) with Festival's
    `voices` (or each with both voices of `parallel`), write wavs, TextGrids, manifests and
    ``summary.json`` into `out_dir`."""
    if utterances < 1:
        raise ValueError(f"--utterances must be at least 1, got {utterances}")
    if parallel is not None and (len(parallel) != 2 or parallel[0] == parallel[1]):
        raise ValueError(f"--parallel takes two voices (source, target), got {list(parallel)}")
    voices = list(parallel) if parallel is not None else list(voices)
    if not voices:
        raise ValueError("give at least one Festival voice with --voices")
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    check_voices(voices)
    start = time.perf_counter()
    summary = PrepareSummary("festival", out_dir)
    settings = voice_settings(voices)
    languages = {voice: setting.language for voice, setting in settings.items()}
    if text_file is not None:
        texts = read_sentences(Path(text_file), summary.bad)[:utterances]
    else:
        _english_only(languages)
        texts = fortune_sentences(utterances, seed)
    if not texts:
        first = f" (first: {summary.bad.items[0]})" if summary.bad else ""
        raise ValueError(f"no sentences to speak{f' in {text_file}' if text_file else ''}{first}")
    _clear_old_outputs(out_dir)
    make_folder(out_dir / "wavs")
    make_folder(out_dir / "textgrids")
    plans = []  # the jobs of each sentence: one voice, or source and target
    for i, text in enumerate(texts):
        uid = f"festival_{i:06d}"
        sides = (
            [(voices[0], uid), (voices[1], f"{uid}_target")]
            if parallel
            else [(voices[i % len(voices)], uid)]
        )
        jobs = [
            FestivalJob(
                text,
                voice,
                str(out_dir / "wavs" / f"{name}.wav"),
                settings[voice].language,
                settings[voice].coding,
            )
            for voice, name in sides
        ]
        if all(_words_to_speak(job, summary.bad) for job in jobs):
            plans.append(jobs)
    results = iter(_synthesize([job for jobs in plans for job in jobs], workers, progress))
    items = [_item(jobs, [next(results) for _ in jobs], out_dir, summary.bad) for jobs in plans]
    kept = [item for item in items if item is not None]
    if not kept:
        first = f": first {summary.bad.items[0]}" if summary.bad else ""
        kinds = ", ".join(f"{n} {kind}" for kind, n in summary.bad.counts().items())
        raise ValueError(
            f"Festival spoke none of the {len(texts)} sentences as written ({kinds}){first}"
        )
    summary.figures = _figures(kept, voices, languages, text_file, time.perf_counter() - start)
    if parallel:
        summary.figures["parallel"] = f"{voices[0]} -> {voices[1]}"
    longest = {it["id"]: max(it["duration"], it.get("target_duration", 0.0)) for it in kept}
    summary.warnings += [
        f"{uid}: {seconds:.0f} s of speech (a batch holds its longest item: split long lines "
        "of the text into sentences)"
        for uid, seconds in longest.items()
        if seconds > LONG_SECONDS
    ]
    splits = split_items(kept, seed=seed)
    summary.warnings += empty_split_warnings(splits, "item(s) kept")
    return write_corpus(out_dir, splits, summary)


def _english_only(languages: dict[str, str]) -> None:
    """ValueError when a voice of another language would be given the built-in sentences
    (English fortunes): such a voice needs the user's text."""
    other = {voice: lang for voice, lang in languages.items() if lang != "english"}
    if other:
        named = ", ".join(f"{voice} ({lang})" for voice, lang in other.items())
        raise ValueError(
            f"--voices {named}: the built-in sentences are English; give sentences in the "
            "voice's language with --text FILE (one a line)"
        )


def _words_to_speak(job: FestivalJob, bad: BadItemReport) -> bool:
    """Whether `job`'s text fits its voice's encoding and has words to speak; the others
    are reported here, before Festival (which crashes on an empty text)."""
    where = f"{Path(job.path).stem} ({job.voice}: {job.text!r})"
    try:
        if text_words(speakable(job.text, VoiceSetting(job.language, job.coding))):
            return True
    except UnspeakableText as err:
        bad.add(where, str(err))
        return False
    bad.add(where, "no words to speak (give a sentence with letters)")
    return False


def _clear_old_outputs(out_dir: Path) -> None:
    """Remove what a previous run wrote (`check_outputs` let it be overwritten): its
    ``festival_*`` wavs and TextGrids, so that a smaller corpus leaves none of the old
    items, and its manifests and summary, so that a run that fails leaves no manifest
    naming audio that is gone."""
    for folder, suffix in (("wavs", ".wav"), ("textgrids", ".TextGrid")):
        for old in (out_dir / folder).glob(f"festival_*{suffix}"):
            old.unlink()
    for path in corpus_files(out_dir):
        path.unlink(missing_ok=True)


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
    jobs: list[FestivalJob],
    results: list[FestivalResult | FestivalError],
    out_dir: Path,
    bad: BadItemReport,
) -> dict[str, Any] | None:
    """The manifest item of one sentence spoken by one voice (or by a parallel pair's two:
    ``target_*`` fields), or None (reported, its wavs removed)."""
    import soundfile

    uid = Path(jobs[0].path).stem
    sides = []
    for job, result in zip(jobs, results):
        try:
            if isinstance(result, FestivalError):
                raise result
            duration = soundfile.info(job.path).duration
            sides.append(_labelled(festival_timings(result, duration), job))
        except (ValueError, RuntimeError) as err:
            bad.add(f"{Path(job.path).stem} ({job.voice}: {job.text!r})", str(err))
            for spoken in jobs:
                Path(spoken.path).unlink(missing_ok=True)
            return None
    item: dict[str, Any] = {"id": uid, "audio": jobs[0].path, "text": jobs[0].text}
    for (job, timings), (prefix, name) in zip(
        zip(jobs, sides), (("", uid), ("target_", f"{uid}_target"))
    ):
        write_textgrid(timings.tiers, timings.duration, out_dir / "textgrids" / f"{name}.TextGrid")
        item.update(
            {
                f"{prefix}audio": job.path,
                f"{prefix}speaker": job.voice,
                f"{prefix}duration": round(timings.duration, 4),
                f"{prefix}timings": timings.to_dict(),
            }
        )
    return item


def _labelled(timings: Timings, job: FestivalJob) -> Timings:
    """`timings` with its words labelled as in `job`'s text; ValueError when the words
    Festival said are not those it was given (`speakable`: the text's own letters)."""
    written = text_words(job.text)
    given = text_words(speakable(job.text, VoiceSetting(job.language, job.coding)))
    if not written:
        raise ValueError("no words to speak (give a sentence with letters)")
    said = _elisions_joined(timings.words, given)
    if len(given) != len(written) or [_key(w.label) for w in said] != [_key(w) for w in given]:
        raise ValueError(
            f"Festival read other words than the text's (it said "
            f"{' '.join(w.label for w in timings.words)!r}, the text's words are "
            f"{' '.join(given)!r}; write numbers, abbreviations and signs out in words)"
        )
    words = [Interval(w.start, w.end, label) for w, label in zip(said, written)]
    return Timings(words, timings.phones, timings.duration)


def _elisions_joined(said: list[Interval], given: list[str]) -> list[Interval]:
    """Festival's words with those it split at a text word's apostrophe joined again
    (Catalan, French, Italian elisions: ``L'àvia`` said as ``L'`` and ``àvia``): where a
    word of the text holds an apostrophe and the next two or three words said make it up
    letter for letter, they become one word spanning them. Any other difference is left
    for the caller to report."""
    out: list[Interval] = []
    i = 0
    for word in given:
        if i >= len(said):
            break
        key, take = _key(word), 1
        if _key(said[i].label) != key and any(a in word for a in APOSTROPHES):
            joins = (k for k in (2, 3) if "".join(_key(w.label) for w in said[i : i + k]) == key)
            take = next(joins, 1)
        run = said[i : i + take]
        out.append(Interval(run[0].start, run[-1].end, "".join(w.label for w in run)))
        i += take
    return out + said[i:]


def _figures(
    items: list[dict[str, Any]],
    voices: Sequence[str],
    languages: dict[str, str],
    text_file: Path | None,
    elapsed: float,
) -> dict[str, Any]:
    seconds = [
        item[key] for item in items for key in ("duration", "target_duration") if key in item
    ]
    words = [len(text_words(item["text"])) for item in items]
    spoken_by = [(item["speaker"], item.get("target_speaker")) for item in items]
    per_voice = {v: sum(1 for pair in spoken_by if v in pair) for v in voices}
    figures = {
        "utterances": len(items),
        "hours": round(sum(seconds) / 3600, 4),
        "longest_seconds": round(max(seconds), 2),
        "words_per_sentence": f"{min(words)}-{max(words)} (mean {sum(words) / len(words):.1f})",
        "voices": per_voice,
        "languages": sorted(set(languages.values())),
        "texts": str(text_file) if text_file else "Debian fortunes",
        "seconds_taken": round(elapsed, 1),
    }
    spoken = figures["languages"]
    if len(spoken) > 1:
        figures["tokenizer"] = (
            f"voices of {len(spoken)} languages: a tokenizer reads one, "
            "prepare a corpus per language"
        )
    elif spoken[0] in ESPEAK_LANGUAGES and spoken[0] != "english":
        figures["tokenizer"] = (
            f"train with --set data.tokenizer_opts.language={ESPEAK_LANGUAGES[spoken[0]]} "
            f"(eSpeak NG's {spoken[0]}; the arpabet tokenizer is English)"
        )
    elif spoken[0] != "english":
        figures["tokenizer"] = (
            f"no eSpeak NG code known for {spoken[0]!r}: train with "
            "--set data.tokenizer_opts.language=CODE (espeak-ng --voices lists them)"
        )
    return figures


def _key(word: str) -> str:
    """A word as compared with Festival's (which may change its case and drops some
    apostrophes: ma'am -> maam); its letters are compared as they are."""
    return "".join(c for c in word.lower() if c not in APOSTROPHES)
