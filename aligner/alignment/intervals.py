"""Word and phone timings of an utterance: intervals in seconds, their JSON form, and the
boundary errors of one set of intervals against another.

Tiers are named ``words`` and ``phones`` (the names MFA uses). Pauses belong to no word
and no phone: they are the gaps between intervals (empty intervals in a TextGrid). A
reference may hold a zero-length interval (eSpeak NG now and then gives a phone no
samples), so that its phones are a tokenizer's one for one; a TextGrid cannot hold it
and leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

TIERS = ("words", "phones")
SILENCE_LABELS = frozenset({"", "sil", "sp", "pau", "<sil>", "silence", "<eps>", "#"})


class Interval(NamedTuple):
    """A labelled span of an utterance, in seconds."""

    start: float
    end: float
    label: str


Tiers = dict[str, list[Interval]]


@dataclass
class Timings:
    """The word and phone intervals of one utterance, in time order, each within
    ``[0, duration]`` seconds."""

    words: list[Interval] = field(default_factory=list)
    phones: list[Interval] = field(default_factory=list)
    duration: float = 0.0

    def tier(self, name: str) -> list[Interval]:
        return {"words": self.words, "phones": self.phones}[name]

    @property
    def tiers(self) -> Tiers:
        """``{"words": [...], "phones": [...]}``."""
        return {name: self.tier(name) for name in TIERS}

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
            tiers = tiers_from_rows(data, required=True)
            return cls(tiers["words"], tiers["phones"], float(data["duration"]))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(
                f"malformed timings ({err!r}); expected {TIERS} and duration"
            ) from None


def tiers_from_rows(data: dict[str, Any], required: bool = False) -> Tiers:
    """The tiers of a JSON form (``{"words": [[start, end, label], ...], ...}``: reference
    timings or an ``ID.durations.json``); `required`: both tiers must be there, else only
    those present are read. KeyError, TypeError or ValueError when malformed."""
    return {
        name: [Interval(float(s), float(e), str(label)) for s, e, label in data[name]]
        for name in TIERS
        if required or name in data
    }


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
