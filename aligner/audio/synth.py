"""Speech synthesis with eSpeak NG from the ``espeakng-loader`` wheel (no system package).

The library is driven through ctypes: ``espeak_Initialize`` in synchronous mode, a
synthesis callback that collects the 16-bit samples, ``espeak_SetVoiceByName`` and
``espeak_SetParameter`` for the voice, then ``espeak_Synth``. Phoneme events are on (with
IPA names): the callback also collects the word and phoneme events, which give every
word's and phone's sample position (`aligner.audio.espeak_timings`); they do not change the
audio. eSpeak NG keeps global state and is not thread-safe, so one process holds one engine (guarded by a lock);
parallel synthesis uses a process pool in which every worker initializes its own.

eSpeak NG carries state from one utterance to the next (pitch flutter, echo buffers)
and seeds its noise generator from the clock. ``synthesize`` reseeds the generator from
the text and voice before every utterance, so a fresh process always produces the same
samples for the same sequence of calls; ``synthesize_to_files`` runs fixed chunks of
jobs in fresh worker processes, so a corpus is byte-identical from run to run whatever
the number of workers.

Voices are ``NAME[,key=value...]`` specs (`aligner.audio.voices`), e.g.
``en-us+f2,rate=200,pitch=70``.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import threading
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from aligner.alignment.intervals import Timings
from aligner.audio.espeak_timings import Event, closures_into_stops, timings_from_events
from aligner.audio.io import write_audio_array
from aligner.audio.voices import PARAM, Voice, data_path, language_aliases

SAMPLE_RATE = 22050  # eSpeak NG's output rate (checked against espeak_Initialize)

_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_INITIALIZE_PHONEME_EVENTS = 0x0001
_INITIALIZE_PHONEME_IPA = 0x0002
_EVENT_KINDS = {1: "word", 7: "phoneme"}  # espeakEVENT_WORD, espeakEVENT_PHONEME
_CHARS_UTF8 = 1
_POS_CHARACTER = 1


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    """``espeak_EVENT`` of speak_lib.h."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event)
)


class SynthError(RuntimeError):
    """eSpeak NG could not be loaded, or refused a voice or a text."""


class Espeak:
    """One eSpeak NG engine per process: ``Espeak.get().synthesize(text, voice)``."""

    _instance: Espeak | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        import espeakng_loader

        try:
            self._lib = ctypes.CDLL(espeakng_loader.get_library_path())
        except OSError as err:
            raise SynthError(f"cannot load eSpeak NG from espeakng-loader: {err}") from None
        self._lib.espeak_Initialize.restype = ctypes.c_int
        self._lib.espeak_Initialize.argtypes = [
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        self._lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        self._lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self._lib.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        self._lib.espeak_Synth.argtypes = [
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_uint,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_void_p,
            ctypes.c_void_p,
        ]
        options = _INITIALIZE_DONT_EXIT | _INITIALIZE_PHONEME_EVENTS | _INITIALIZE_PHONEME_IPA
        rate = self._lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 500, str(data_path()).encode(), options
        )
        if rate != SAMPLE_RATE:
            raise SynthError(f"eSpeak NG initialization failed (returned {rate})")
        self._chunks: list[np.ndarray] = []
        self._events: list[Event] = []
        self._callback = _CALLBACK(self._collect)  # keep a reference: C holds the pointer
        self._lib.espeak_SetSynthCallback(self._callback)
        self._voice: Voice | None = None

    @classmethod
    def get(cls) -> Espeak:
        """The process-wide engine, created on first use."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def _collect(self, wav, n_samples: int, events) -> int:
        if n_samples > 0 and wav:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n_samples,)).copy())
        i = 0
        while events and events[i].type != 0:  # espeakEVENT_LIST_TERMINATED
            e = events[i]
            kind = _EVENT_KINDS.get(e.type)
            if kind is not None:
                name = e.id.string.decode("utf-8", "replace") if kind == "phoneme" else ""
                self._events.append(Event(kind, e.text_position, e.length, e.sample, name))
            i += 1
        return 0

    def _set_voice(self, voice: Voice) -> None:
        if voice == self._voice:
            return
        self._voice = None
        base, plus, variant = voice.name.partition("+")
        names = [voice.name]
        if base.lower() in language_aliases():
            names.append(language_aliases()[base.lower()] + plus + variant)
        if all(self._lib.espeak_SetVoiceByName(name.encode()) != 0 for name in names):
            raise SynthError(
                f"unknown eSpeak NG voice {voice.name!r}; use a language such as en-us, en, "
                "en-gb-x-rp with an optional variant such as +m3 or +f2"
            )
        for key, param in PARAM.items():
            self._lib.espeak_SetParameter(param, getattr(voice, key), 0)
        self._voice = voice

    def synthesize(self, text: str, voice: Voice) -> tuple[np.ndarray, list[Event]]:
        """Speak ``text`` with ``voice``: int16 samples ``(L,)`` at 22050 Hz and the word and
        phoneme events, in order."""
        data = text.encode("utf-8") + b"\0"
        with self._lock:
            self._set_voice(voice)
            self._lib.espeak_ng_SetRandSeed(zlib.crc32(data + voice.spec.encode()))
            self._chunks, self._events = [], []
            err = self._lib.espeak_Synth(
                data, len(data), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None
            )
            chunks, self._chunks = self._chunks, []
            events, self._events = self._events, []
        if err != 0:
            raise SynthError(f"eSpeak NG failed on {text[:40]!r} (error {err})")
        if not chunks:
            return np.zeros(0, dtype=np.int16), events
        return np.concatenate(chunks).astype(np.int16, copy=False), events


def synthesize(text: str, voice: Voice | str = "en-us") -> np.ndarray:
    """Speak ``text``; returns int16 samples ``(L,)`` at ``SAMPLE_RATE``."""
    return synthesize_timed(text, voice)[0]


def synthesize_timed(
    text: str, voice: Voice | str = "en-us", stops: str = "closure"
) -> tuple[np.ndarray, Timings]:
    """Speak ``text``: int16 samples ``(L,)`` at ``SAMPLE_RATE`` and the word and phone
    intervals in them (from eSpeak NG's own events; `aligner.audio.espeak_timings`). ``stops``:
    "closure" starts stops and affricates at their closure (phoneticians' convention),
    "burst" where eSpeak NG's events put them."""
    if isinstance(voice, str):
        voice = Voice.parse(voice)
    wav, events = Espeak.get().synthesize(text, voice)
    if stops == "closure":
        events = closures_into_stops(events, wav, SAMPLE_RATE)
    elif stops != "burst":
        raise ValueError(f"stops={stops!r}: use closure or burst")
    return wav, timings_from_events(events, text, len(wav), SAMPLE_RATE)


@dataclass(frozen=True)
class SynthJob:
    """One utterance to synthesize into a 16-bit WAV file."""

    text: str
    voice: Voice
    path: str
    stops: str = "closure"  # where the reference timings start a stop (synthesize_timed)


def _run_chunk(jobs: Sequence[SynthJob]) -> list[Timings]:
    """Synthesize ``jobs`` in order (in a fresh worker); returns the timings of each file
    (its duration among them)."""
    timings = []
    for job in jobs:
        wav, timed = synthesize_timed(job.text, job.voice, job.stops)
        if wav.size == 0:
            raise SynthError(f"eSpeak NG produced no audio for {job.text[:40]!r}")
        write_audio_array(job.path, wav, SAMPLE_RATE)
        timings.append(timed)
    return timings


def synthesize_to_files(
    jobs: Sequence[SynthJob],
    workers: int = 2,
    chunk_size: int = 25,
    progress: Callable[[int], object] | None = None,
) -> list[Timings]:
    """Write every job's WAV file; returns the word and phone timings of each (with its
    duration), in job order.

    Jobs are cut into fixed chunks of ``chunk_size``; each chunk runs in a fresh process
    (``maxtasksperchild=1``), so the bytes written do not depend on ``workers``.
    ``progress(n)`` is called with the number of jobs finished by each chunk.
    """
    chunks = [jobs[i : i + chunk_size] for i in range(0, len(jobs), chunk_size)]
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    timings: list[Timings] = []
    with ctx.Pool(max(1, min(workers, len(chunks))), maxtasksperchild=1) as pool:
        for chunk_timings in pool.imap(_run_chunk, chunks):
            timings.extend(chunk_timings)
            if progress is not None:
                progress(len(chunk_timings))
    return timings
