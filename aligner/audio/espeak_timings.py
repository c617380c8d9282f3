"""Reference timings of the built-in corpus from eSpeak NG's own phoneme and word events
(`timings_from_events`): every phoneme event starts a phone at its sample position, and
the phone ends where the next phoneme event (a phone or a pause) starts, the last one at
the end of the audio. A word spans its phones: from the start of its first to the end of
its last. Pauses (eSpeak's unnamed phonemes) belong to no word and no phone; they are the
gaps between intervals (empty intervals in a TextGrid). eSpeak now and then gives a phone
no samples (the ``l`` of "jewelmasters" runs into the ``m``): the timings keep it as a
zero-length interval, so that the phones are those of the phonemes tokenizer one for one,
but a TextGrid cannot hold it and leaves it out.

Stops: eSpeak NG queues the closure of a stop or affricate (25-60 ms of silence) *before*
the stop's phoneme event, so its events start a ``p``, ``t`` or ``k`` at the burst and count
the closure into the phone before it. Phoneticians' conventions (TIMIT, Buckeye, the
Montreal Forced Aligner) start a stop at its closure. `closures_into_stops` moves such
events back to the start of the closure: the silent run (every 1 ms window below
``SILENCE_LEVEL``) that ends at the event inside the phone before it, at most
``MAX_CLOSURE`` seconds and never into a pause. ``aligner prepare espeak --stops burst``
keeps eSpeak's own event times.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from aligner.alignment.intervals import Interval, Timings

STOP_CONVENTIONS = ("closure", "burst")
# Stops and affricates (eSpeak NG's IPA names), whose closure starts them.
CLOSURE_PHONES = frozenset(
    {"p", "t", "k", "b", "d", "ɡ", "g", "c", "ɟ", "q", "ʔ", "tʃ", "dʒ", "ts", "dz"}
)
SILENCE_LEVEL = 64 / 32768  # peak of a silent 1 ms window, of full scale (-54 dBFS)
MAX_CLOSURE = 0.08  # seconds; eSpeak NG's closures are 25-60 ms


class Event(NamedTuple):
    """One eSpeak NG event: ``kind`` is "word" or "phoneme"; `position` the 1-based
    character of the text it belongs to, `length` (words) its characters, `sample` where
    it starts in the audio, `name` the phoneme (empty for a pause)."""

    kind: str
    position: int
    length: int
    sample: int
    name: str = ""


def timings_from_events(
    events: Sequence[Event], text: str, n_samples: int, sample_rate: int
) -> Timings:
    """Word and phone intervals of an utterance of `n_samples` from its eSpeak NG events
    (in the order eSpeak reported them; see the module docstring)."""
    phonemes = [e for e in events if e.kind == "phoneme"]
    starts = [min(e.sample, n_samples) for e in phonemes] + [n_samples]
    phones: list[Interval] = []
    words: list[tuple[str, list[Interval]]] = []
    word: tuple[str, list[Interval]] | None = None
    k = 0
    for event in events:
        if event.kind == "word":
            label = text[event.position - 1 : event.position - 1 + event.length]
            word = (label, [])
            words.append(word)
            continue
        if event.kind != "phoneme":
            continue
        start, end = starts[k], starts[k + 1]
        k += 1
        if not event.name:  # a pause
            continue
        phone = Interval(start / sample_rate, end / sample_rate, event.name)
        phones.append(phone)
        if word is not None:
            word[1].append(phone)
    spans = [Interval(ph[0].start, ph[-1].end, label) for label, ph in words if ph]
    return Timings(spans, phones, n_samples / sample_rate)


def closures_into_stops(
    events: Sequence[Event], wav: Any, sample_rate: int, max_closure: float = MAX_CLOSURE
) -> list[Event]:
    """The events with each stop's and affricate's phoneme event moved back to the start
    of its closure (see the module docstring); `wav` ``(L,)`` int16 or float samples."""
    import numpy as np

    x = np.abs(np.asarray(wav, dtype=np.float64))
    if np.issubdtype(np.asarray(wav).dtype, np.integer):
        x = x / 32768.0
    win = max(1, sample_rate // 1000)
    out = list(events)
    previous: int | None = None  # index in `out` of the last phoneme event
    for i, event in enumerate(out):
        if event.kind != "phoneme":
            continue
        before, previous = previous, i
        if event.name not in CLOSURE_PHONES or before is None or not out[before].name:
            continue
        floor = max(out[before].sample + win, event.sample - int(max_closure * sample_rate))
        start = min(event.sample, len(x))
        while start - win >= floor and x[start - win : start].max(initial=0.0) < SILENCE_LEVEL:
            start -= win
        if start < event.sample:
            out[i] = event._replace(sample=start)
    return out
