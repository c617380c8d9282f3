"""Speech synthesis with Festival (Debian's ``festival`` and its voices), with the word and
segment times Festival itself decided: the second reference corpus
(`aligner.data.prepare.festival`).

Festival is run as a program (``festival --batch`` on a generated Scheme script), one
process for a chunk of utterances. For each utterance the script synthesizes the text with
the chosen voice, saves the wave (the voice's own sample rate: 16 kHz for the diphone
voices, 32 kHz for the HTS voices) and prints, between markers, every segment of the
``Segment`` relation (its name and end time) and every item of the ``Word`` relation (its
name, ``word_start`` and ``word_end``).

Times: a segment runs from the end of the segment before it (0 for the first) to its own
end. Festival's pause segments (``pau``, ``h#``, ``#``, ``sil``) belong to no phone and
no word: they are the gaps between intervals, as in the eSpeak corpus. A word spans its
segments; a pause segment that runs past the audio (a unit voice's last) is cut to it, a
phone that does is an error. A word of no letters that Festival gave no sound (a sign
it made a word of: Hindi's danda) is none. A word that starts with an apostrophe
(``'s``, which Festival tokenizes off "Smith's", sometimes leaving its ``s`` in "Smith")
joins the word before it, so the words are those of the text; any other word without
segments is an error of the item.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace

from aligner.alignment.intervals import Interval, Timings
from aligner.audio.festival_text import (
    DEFAULT_CODING,
    VoiceSetting,
    parse_descriptions,
    recoded,
    scheme_string,
    speakable,
)

PAUSES = frozenset({"pau", "h#", "#", "sil", "brth"})
# Debian's English voices (package -> voice): festvox-us-slt-hts, festvox-kallpc16k,
# festvox-kdlpc16k.
DEFAULT_VOICES = ("cmu_us_slt_arctic_hts", "kal_diphone", "ked_diphone")
INSTALL_HINT = (
    "apt-get install festival festlex-cmu festvox-us-slt-hts festvox-kallpc16k festvox-kdlpc16k"
)
_BEGIN, _END = "@@UTT", "@@END"


class FestivalError(RuntimeError):
    """Festival is missing, a voice is not installed, or Festival failed."""


@dataclass(frozen=True)
class FestivalJob:
    """One utterance: ``text`` spoken by ``voice`` (a Festival voice name, e.g.
    ``kal_diphone``) into the wav file ``path``; ``language`` and ``coding``: the voice's
    (`voice_settings`), which decide the bytes Festival is given
    (`aligner.audio.festival_text.speakable`; UnspeakableText when a letter does not fit)."""

    text: str
    voice: str
    path: str
    language: str = "english"
    coding: str = DEFAULT_CODING


@dataclass
class FestivalResult:
    """What Festival reported for one job: its segments ``(name, end s)`` and words
    ``(name, start s, end s)``, in order."""

    segments: list[tuple[str, float]]
    words: list[tuple[str, float, float]]


def festival_program() -> str:
    """The path of ``festival``; FestivalError with the install command when missing."""
    found = shutil.which("festival")
    if found is None:
        raise FestivalError(f"Festival is not installed; install it with: {INSTALL_HINT}")
    return found


def installed_voices() -> list[str]:
    """The names of the voices Festival can load (``voice.list``)."""
    out = _run_scheme("(begin (print (voice.list)))")
    return out.strip().strip("()").split()


def check_voices(voices: Sequence[str]) -> None:
    """FestivalError naming the first voice that is not installed, and what is."""
    have = installed_voices()
    for voice in voices:
        if voice not in have:
            raise FestivalError(
                f"Festival voice {voice!r} is not installed (installed: {', '.join(have) or 'none'}); "
                f"install Debian's voices with: {INSTALL_HINT}"
            )


# Festival's language names -> eSpeak NG's (the `phonemes` tokenizer's `language`)
ESPEAK_LANGUAGES = {
    "english": "en-us",
    "italian": "it",
    "spanish": "es",
    "czech": "cs",
    "finnish": "fi",
    "russian": "ru",
    "catalan": "ca",
    "hindi": "hi",
    "marathi": "mr",
    "telugu": "te",
    "welsh": "cy",
}


def voice_settings(voices: Sequence[str]) -> dict[str, VoiceSetting]:
    """Each voice's language and encoding as Festival describes it
    (`aligner.audio.festival_text.parse_descriptions`)."""
    calls = " ".join(f"(print (voice.description '{v}))" for v in voices)
    return parse_descriptions(list(voices), _run_scheme(f"(begin {calls})"))


def voice_languages(voices: Sequence[str]) -> dict[str, str]:
    """Each voice's language as Festival describes it (``english``, ``italian``, ...;
    ``english`` where the description names none)."""
    return {voice: s.language for voice, s in voice_settings(voices).items()}


def _quote(job: FestivalJob) -> bytes:
    """The Scheme string literal of `job`'s text in its voice's encoding (`speakable`)."""
    return scheme_string(speakable(job.text, VoiceSetting(job.language, job.coding)), job.coding)


def _path_literal(path: str) -> bytes:
    """A Scheme string literal of a file name, as the file system spells it."""
    return b'"' + os.fsencode(path).replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"'


_DUMP = f"""(define (aligner_dump utt path)
  (utt.save.wave utt path 'riff)
  (format t "%s\\n" "{_BEGIN}")
  (mapcar (lambda (s) (format t "S\\t%s\\t%f\\n" (item.name s) (item.feat s 'end)))
          (utt.relation.items utt 'Segment))
  (mapcar (lambda (w) (format t "W\\t%s\\t%f\\t%f\\n" (item.name w)
                              (item.feat w 'word_start) (item.feat w 'word_end)))
          (utt.relation.items utt 'Word))
  (format t "%s\\n" "{_END}"))
"""


def scheme_script(jobs: Sequence[FestivalJob]) -> bytes:
    """The Scheme program that synthesizes `jobs` in order (see the module docstring), each
    text in its voice's encoding; UnspeakableText when a text does not fit it."""
    lines = [_DUMP.encode("ascii")]
    voice = None
    for job in jobs:
        if job.voice != voice:
            lines.append(f"(voice_{job.voice})".encode("ascii"))
            voice = job.voice
        utt = b"(utt.synth (Utterance Text " + _quote(job) + b"))"
        lines.append(b"(aligner_dump " + utt + b" " + _path_literal(job.path) + b")")
    return b"\n".join(lines) + b"\n"


def _run_scheme(script: str | bytes, timeout: float = 600.0) -> str:
    """What Festival printed running `script`, read as Latin-1 (every byte one character;
    `aligner.audio.festival_text.recoded` reads a voice's names in its own encoding)."""
    program = festival_program()
    try:
        done = subprocess.run(
            [program, "--batch", "--pipe"],
            input=script.encode("ascii") if isinstance(script, str) else script,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise FestivalError(f"Festival did not finish within {timeout:.0f} s") from None
    if done.returncode < 0:
        raise FestivalError(f"Festival crashed (signal {-done.returncode}) on this text")
    if done.returncode != 0:
        last = (done.stderr.decode("latin-1").strip().splitlines() or ["no message"])[-1]
        raise FestivalError(f"Festival failed (exit {done.returncode}): {last}")
    return done.stdout.decode("latin-1")


def parse_output(stdout: str) -> list[FestivalResult]:
    """The results of each utterance, in order, from what the script printed."""
    results: list[FestivalResult] = []
    current: FestivalResult | None = None
    # lines end at "\n" alone: a voice's UTF-8 names read as Latin-1 hold bytes that
    # str.splitlines() also takes for line ends (x as D1 85: U+0085, NEL)
    for line in stdout.replace("\r\n", "\n").split("\n"):
        if line == _BEGIN:
            current = FestivalResult([], [])
        elif line == _END and current is not None:
            results.append(current)
            current = None
        elif current is not None and line.startswith(("S\t", "W\t")):
            fields = line.split("\t")
            if fields[0] == "S":
                current.segments.append((fields[1], float(fields[2])))
            else:
                current.words.append((fields[1], float(fields[2]), float(fields[3])))
    return results


def synthesize_jobs(jobs: Sequence[FestivalJob]) -> list[FestivalResult]:
    """Synthesize `jobs` in one Festival process; one result per job, in order."""
    if not jobs:
        return []
    results = parse_output(_run_scheme(scheme_script(jobs), timeout=60.0 + 10.0 * len(jobs)))
    if len(results) != len(jobs):
        raise FestivalError(
            f"Festival stopped after {len(results)} of {len(jobs)} utterances "
            f"(at {jobs[len(results)].text!r})"
        )
    return [_recoded(result, job.coding) for result, job in zip(results, jobs)]


def _recoded(result: FestivalResult, coding: str) -> FestivalResult:
    """`result` with its segment and word names read in the voice's encoding."""
    return replace(
        result,
        segments=[(recoded(name, coding), end) for name, end in result.segments],
        words=[(recoded(name, coding), start, end) for name, start, end in result.words],
    )


def festival_timings(result: FestivalResult, duration: float) -> Timings:
    """Word and phone intervals of one utterance of `duration` seconds (see the module
    docstring); ValueError when a word has no segments or a segment ends past the audio."""
    phones: list[Interval] = []
    start = 0.0
    for name, end in result.segments:
        if end > duration + 0.01 and name not in PAUSES:  # a pause is cut to the audio
            raise ValueError(
                f"segment {name!r} ends at {end:.3f} s, after the audio ({duration:.3f} s)"
            )
        end = min(end, duration)
        if name not in PAUSES:
            phones.append(Interval(start, end, name))
        start = end
    words: list[Interval] = []
    for name, w_start, w_end in result.words:
        if w_end <= w_start and not any(c.isalnum() for c in name):
            continue  # a sign Festival made a word of and did not say (Hindi's danda)
        if name.startswith("'") and words:  # a clitic Festival split off: 's, 'll
            last = words[-1]
            words[-1] = Interval(last.start, max(last.end, min(w_end, duration)), last.label + name)
            continue
        if w_end <= w_start:
            raise ValueError(f"Festival gave the word {name!r} no sound")
        words.append(Interval(w_start, min(w_end, duration), name))
    return Timings(words, phones, duration)
