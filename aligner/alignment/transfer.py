"""Frames per token of a model's token sequence from another tool's timed phones (a
TextGrid of the Montreal Forced Aligner, Festival, Praat, or a corpus's own labels): what
lets such timings guide a Tacotron's attention in place of the alignment model's.

The phones are paired with the tokens of sounds (not separators, punctuation or markers:
`aligner.alignment.tiers.optional_tokens`) by an edit alignment of their labels compared
without case and stress (`label_key`: ``AH0``, ``ah`` and Festival's reduced ``ax`` alike),
so that a lexicon's variants (another vowel, a dropped or an added phone) cost one edit
each and the rest still pairs. A paired token holds its phone's
frames (its start and end at the nearest frame edge, `frame_edge`, so that the frames of a
record written out as times come back as they were); the frames between two
paired tokens (a pause, or a phone no token pairs with) go to a separator or punctuation
mark between them when there is one, else half to each; the frames before the first and
after the last go to ``<s>``/``</s>`` (or the edge token). A token no phone pairs with
holds none. The frames add up to the item's frame count by construction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from aligner.alignment.intervals import Interval
from aligner.alignment.tiers import FRAME_CENTRE, PUNCTUATION

MAX_EDITS = 0.25  # the share of edits beyond which the phones are not the tokens' sounds
FIT_FRAMES = 2  # frames past the audio's end a phone may reach (rounding, a trailing pad)
_STRESS = re.compile(r"[0-9ˈˌːˑ'\u0300-\u036f]")
# TIMIT's and Festival's reduced ARPAbet vowels as CMUdict spells them (Lee and Hon's folding)
_REDUCED = {"ax": "ah", "ax-h": "ah", "ix": "ih", "axr": "er", "ux": "uw"}


def label_key(label: str) -> str:
    """A phone label as compared: lower case, without stress digits or marks, length marks
    or combining diacritics, and ARPAbet's reduced vowels as CMUdict's (``ax`` as ``ah``)."""
    key = _STRESS.sub("", label).lower()
    return _REDUCED.get(key, key)


def edit_alignment(a: Sequence[str], b: Sequence[str]) -> tuple[list[int | None], int]:
    """For each of `a`, the index in `b` it is aligned with (None: deleted) on an alignment
    with the fewest edits (substitution, insertion, deletion: one each), and that number
    (`edit_distance`)."""
    n, m = len(a), len(b)
    cost = [[i + j if i == 0 or j == 0 else 0 for j in range(m + 1)] for i in range(n + 1)]
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            cost[i][j] = min(
                cost[i - 1][j - 1] + (a[i - 1] != b[j - 1]), cost[i - 1][j] + 1, cost[i][j - 1] + 1
            )
    paired: list[int | None] = [None] * n
    i, j = n, m
    while i > 0 and j > 0:
        if cost[i][j] == cost[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            paired[i - 1] = j - 1
            i, j = i - 1, j - 1
        elif cost[i][j] == cost[i - 1][j] + 1:
            i -= 1
        else:
            j -= 1
    return paired, cost[n][m]


def pair_labels(theirs: Sequence[str], mine: Sequence[str]) -> tuple[list[int | None], int]:
    """For each of `theirs`, the index of the label of `mine` it pairs with (None: none), by
    the alignment of their `label_key`s with the fewest edits; and that number of edits."""
    return edit_alignment([label_key(x) for x in theirs], [label_key(x) for x in mine])


def frame_edge(seconds: float, frame_seconds: float) -> int:
    """The frame edge whose boundary in time is nearest `seconds`: the boundary before frame
    ``a`` lies half a frame before its centre (`aligner.alignment.tiers.frame_bounds`), at
    ``(a - 1/2) * frame_seconds``, the first at 0; a time exactly between two goes to the
    later edge."""
    edge = int(np.floor(seconds / frame_seconds + FRAME_CENTRE + 0.5))
    return 0 if edge == 1 and seconds < FRAME_CENTRE * frame_seconds / 2 else max(edge, 0)


def _gap_token(tokens: Sequence[str], optional: np.ndarray, lo: int, hi: int) -> int | None:
    """The optional token strictly between `lo` and `hi` that takes a pause: the first
    punctuation mark, else the first other optional token; None when there is none."""
    between = [k for k in range(lo + 1, hi) if optional[k]]
    marks = [k for k in between if tokens[k] in PUNCTUATION]
    return (marks or between or [None])[0]


def _edge_token(
    tokens: Sequence[str], optional: np.ndarray, span: range, marker: str
) -> int | None:
    """The token in `span` that takes the silence at an edge: `marker` (``<s>``, ``</s>``)
    when there, else the optional token nearest the sounds; None when there is none.
    `span` runs from the edge inwards."""
    inside = [k for k in span if optional[k]]  # from the outside in
    if marker in [tokens[k] for k in inside]:
        return next(k for k in inside if tokens[k] == marker)
    return inside[-1] if inside else None


def transferred_frames(
    phones: Sequence[Interval],
    tokens: Sequence[str],
    optional: np.ndarray,
    n_frames: int,
    frame_seconds: float,
) -> tuple[np.ndarray, int] | None:
    """``(N,)`` frames of each of `tokens` (summing to `n_frames`) from timed `phones`
    (silences left out), and the edits of their pairing; None when more than `MAX_EDITS`
    of the labels differ (the phones are not these tokens' sounds), when none pairs, or when
    the phones are not within the audio (a time before 0 or more than `FIT_FRAMES` frames
    past its end: another recording's, or times in other units)."""
    optional = np.asarray(optional, bool)
    if not phones or min(p.start for p in phones) < 0:
        return None
    if max(p.end for p in phones) > (n_frames + FIT_FRAMES) * frame_seconds:
        return None
    sounds = [k for k in range(len(tokens)) if not optional[k]]
    paired, edits = pair_labels([p.label for p in phones], [tokens[k] for k in sounds])
    if not sounds or edits > MAX_EDITS * max(len(phones), len(sounds)):
        return None
    spans: dict[int, tuple[int, int]] = {}
    last = 0
    for phone, j in zip(phones, paired):
        if j is None:
            continue
        start = min(max(frame_edge(phone.start, frame_seconds), last), n_frames)
        end = min(max(frame_edge(phone.end, frame_seconds), start), n_frames)
        spans[sounds[j]] = (start, end)
        last = end
    if not spans:
        return None
    out = np.zeros(len(tokens), dtype=np.int64)
    order = sorted(spans)
    for k in order:
        out[k] = spans[k][1] - spans[k][0]
    for a, b in zip(order, order[1:]):
        gap = spans[b][0] - spans[a][1]
        k = _gap_token(tokens, optional, a, b)
        if k is not None:
            out[k] += gap
        else:
            out[a] += gap // 2
            out[b] += gap - gap // 2
    first, final = order[0], order[-1]
    lead = _edge_token(tokens, optional, range(0, first), "<s>")
    out[first if lead is None else lead] += spans[first][0]
    trail = _edge_token(tokens, optional, range(len(tokens) - 1, final, -1), "</s>")
    out[final if trail is None else trail] += n_frames - spans[final][1]
    return out, edits
