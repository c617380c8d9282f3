"""A mismatch's neighbours kept to their own sound: in a long recording's alignment, the
words beside a word unlike its audio give their phone at that side no more than that
phone's usual longest length in the same recording (`keep_neighbours`, `longest_phones`;
`aligner.inference.long_recording` applies them)."""

from __future__ import annotations

import numpy as np

LONGEST_QUANTILE = 0.9  # a length 9 of 10 of a phone's occurrences stay within
LONGEST_MIN_COUNT = 5  # fewer occurrences: no longest length for that phone
MEET_SECONDS = 1e-3  # two intervals this close meet (no pause between them)


def longest_phones(
    phones: list[list], quantile: float = LONGEST_QUANTILE, min_count: int = LONGEST_MIN_COUNT
) -> dict[str, float]:
    """``{phone: seconds}``: per phone label, the `quantile` of its lengths over the
    occurrences that meet a phone on both sides (no pause before or after), for labels
    seen there at least `min_count` times. ``phones``: ``[start, end, label]`` in time
    order (one recording's phones tier): the recording's own speaker and rate decide
    how long a phone may last."""
    lengths: dict[str, list[float]] = {}
    for prev, (s, e, label), nxt in zip(phones, phones[1:], phones[2:]):
        if abs(prev[1] - s) <= MEET_SECONDS and abs(nxt[0] - e) <= MEET_SECONDS:
            lengths.setdefault(label, []).append(e - s)
    return {
        label: float(np.quantile(v, quantile))
        for label, v in lengths.items()
        if len(v) >= min_count
    }


def keep_neighbours(
    words: list[list], phones: list[list], span: tuple[float, float], longest: dict[str, float]
) -> tuple[float, float]:
    """A mismatch's neighbours kept to their own sound: the word whose end meets the
    mismatch's ``span (start, end)`` (s) gives its last phone at most that phone's
    `longest` length (`longest_phones`), the word whose start meets the span's end its
    first phone likewise; what they give up joins the span. A wrong word in the text beside
    a word of the same sound (``some backpedals`` read as ``some messenger``: the ``m`` of
    ``some`` took the ``m`` of ``messenger``, 80 ms) would otherwise stretch its neighbour
    over the audio it does not explain. ``words`` and ``phones`` (``[start, end, label]``
    in time order, one recording's tiers) are changed in place; returns the new span."""
    start, end = span
    for word in words:
        if abs(word[1] - span[0]) <= MEET_SECONDS and word[0] < span[0]:
            phone = _edge_phone(phones, word, last=True)
            cap = longest.get(phone[2]) if phone else None
            if cap is not None and phone[1] - phone[0] > cap:
                start = phone[0] + cap
                _move(words, phones, span[0], start)
        if abs(word[0] - span[1]) <= MEET_SECONDS and word[1] > span[1]:
            phone = _edge_phone(phones, word, last=False)
            cap = longest.get(phone[2]) if phone else None
            if cap is not None and phone[1] - phone[0] > cap:
                end = phone[1] - cap
                _move(words, phones, span[1], end)
    return round(start, 6), round(end, 6)


def _edge_phone(phones: list[list], word: list, last: bool) -> list | None:
    """The last (or first) phone of `word`: the phone inside it that ends (starts) where
    it does."""
    edge = word[1] if last else word[0]
    for phone in phones:
        inside = phone[0] >= word[0] - MEET_SECONDS and phone[1] <= word[1] + MEET_SECONDS
        if inside and abs((phone[1] if last else phone[0]) - edge) <= MEET_SECONDS:
            return phone
    return None


def _move(words: list[list], phones: list[list], old: float, new: float) -> None:
    """Every boundary of `words` and `phones` at time `old` moved to `new` (s)."""
    for tier in (words, phones):
        for interval in tier:
            for side in (0, 1):
                if abs(interval[side] - old) <= MEET_SECONDS:
                    interval[side] = round(new, 6)
