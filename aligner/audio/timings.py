"""Word and phone timings of an utterance: intervals in seconds, their JSON form, and Praat
TextGrids with tiers named ``words`` and ``phones`` (the tier names MFA uses).

For the built-in corpus the timings come from eSpeak NG's own phoneme and word events
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

TIERS = ("words", "phones")
STOP_CONVENTIONS = ("closure", "burst")
# Stops and affricates (eSpeak NG's IPA names), whose closure starts them.
CLOSURE_PHONES = frozenset(
    {"p", "t", "k", "b", "d", "ɡ", "g", "c", "ɟ", "q", "ʔ", "tʃ", "dʒ", "ts", "dz"}
)
SILENCE_LEVEL = 64 / 32768  # peak of a silent 1 ms window, of full scale (-54 dBFS)
MAX_CLOSURE = 0.08  # seconds; eSpeak NG's closures are 25-60 ms
SILENCE_LABELS = frozenset({"", "sil", "sp", "pau", "<sil>", "silence", "<eps>", "#"})


class Interval(NamedTuple):
    """A labelled span of an utterance, in seconds."""

    start: float
    end: float
    label: str


@dataclass
class Timings:
    """The word and phone intervals of one utterance, in time order, each within
    ``[0, duration]`` seconds."""

    words: list[Interval] = field(default_factory=list)
    phones: list[Interval] = field(default_factory=list)
    duration: float = 0.0

    def tier(self, name: str) -> list[Interval]:
        return {"words": self.words, "phones": self.phones}[name]

    def to_dict(self, digits: int = 5) -> dict[str, Any]:
        """``{"duration": s, "words": [[start, end, label], ...], "phones": [...]}``."""

        def rows(tier: list[Interval]) -> list[list[Any]]:
            return [[round(a.start, digits), round(a.end, digits), a.label] for a in tier]

        return {
            "duration": round(self.duration, digits),
            "words": rows(self.words),
            "phones": rows(self.phones),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Timings:
        """Inverse of `to_dict`; ValueError naming what is malformed."""
        try:
            tiers = {
                name: [Interval(float(s), float(e), str(label)) for s, e, label in data[name]]
                for name in TIERS
            }
            return cls(tiers["words"], tiers["phones"], float(data["duration"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(
                f"malformed timings ({err!r}); expected {TIERS} and duration"
            ) from None


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


def write_textgrid(timings: Timings, path: str | Path) -> None:
    """A Praat TextGrid (praatio) with interval tiers ``words`` and ``phones``; the gaps
    between intervals (pauses) are empty intervals."""
    from praatio import textgrid

    from aligner.files import save_by_name

    end = timings.duration
    grid = textgrid.Textgrid(0.0, end)
    for name in TIERS:
        entries = [(a.start, a.end, a.label) for a in timings.tier(name) if a.end > a.start]
        grid.addTier(textgrid.IntervalTier(name, entries, 0.0, end))
    save_by_name(
        path,
        lambda tmp: grid.save(
            str(tmp), format="long_textgrid", includeBlankSpaces=True, reportingMode="error"
        ),
    )


def read_textgrid(path: str | Path) -> dict[str, list[Interval]]:
    """The labelled (non-silent) intervals of every interval tier of a TextGrid written by
    any tool, by lower-cased tier name; ValueError naming the file when it cannot be read."""
    from praatio import textgrid

    try:
        grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    except Exception as err:  # praatio raises many types for a foreign or broken file
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"{path} is not a readable TextGrid ({first})") from None
    tiers: dict[str, list[Interval]] = {}
    for name in grid.tierNames:
        tier = grid.getTier(name)
        if not isinstance(tier, textgrid.IntervalTier):
            continue
        tiers[name.strip().lower()] = [
            Interval(float(s), float(e), str(label).strip())
            for s, e, label in tier.entries
            if str(label).strip().lower() not in SILENCE_LABELS
        ]
    return tiers


def boundary_errors(reference: Sequence[Interval], predicted: Sequence[Interval]) -> list[float]:
    """Signed errors in seconds (predicted minus reference) of the start and the end of
    each interval, paired in order; ValueError when the counts differ."""
    if len(reference) != len(predicted):
        raise ValueError(f"{len(predicted)} intervals against {len(reference)} in the reference")
    return [
        err
        for ref, pred in zip(reference, predicted)
        for err in (pred.start - ref.start, pred.end - ref.end)
    ]


def mapping_errors(
    durations: Sequence[int],
    source_step: float,
    target_step: float,
    source: Timings,
    target: Timings,
    tier: str = "phones",
) -> list[float]:
    """Signed errors (seconds) of a source-to-target time mapping at the reference
    boundaries of two renditions of the same text (voice conversion).

    `durations[p]`: target frames (of `target_step` seconds) given to source position `p`
    (of `source_step` seconds), in order, as a monotonic alignment gives them. Each
    boundary (start and end of every interval of `tier`) of the source is mapped to the
    target: position ``b / source_step``, interpolated within the target frames of that
    position; the error is that time minus the same boundary in `target`. ValueError when
    the two renditions have another number of intervals in `tier`.
    """
    import numpy as np

    src, tgt = source.tier(tier), target.tier(tier)
    if len(src) != len(tgt):
        raise ValueError(f"{len(src)} {tier} in the source, {len(tgt)} in the target")
    starts = np.concatenate([[0], np.cumsum(durations)]) * target_step
    positions = np.arange(len(starts)) * source_step  # source time at each position edge
    src_bounds = np.array([b for a in src for b in (a.start, a.end)])
    tgt_bounds = np.array([b for a in tgt for b in (a.start, a.end)])
    mapped = np.interp(src_bounds, positions, starts)
    return (mapped - tgt_bounds).tolist()
