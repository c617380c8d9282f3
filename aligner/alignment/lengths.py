"""How long each phone usually lasts, in the alignment model's own durations: what the
tiers give a phone beside a pause when the silence hides where it starts.

A stop, an affricate or a weak fricative after a pause starts in silence: its closure
is as silent as the pause before it, so neither the model's scores nor the audio say
where the pause ends and the phone begins, and the word separator, which takes every
pause frame between two words (`aligner.alignment.tiers.separator_log_probs`), left the
phone its burst alone (Festival's kal: `Compassion` after a pause started 76 ms late,
`teaches` 58 ms). Inside a word the same phone meets other phones on both sides and the
model times it from its sound, closure included. `usual_frames` measures that: per
phone, the lower quartile of its lengths where it lies inside a word (both neighbours
phones). The tiers then let a phone that follows a pause, and is shorter than that,
take from the silence before it what it lacks (`aligner.alignment.tiers`): a convention
learned from the model's own alignments of its corpus, not a table of phone classes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from aligner.alignment.tiers import optional_tokens

QUANTILE = 0.25  # a length at least three in four of a phone's occurrences reach
MIN_COUNT = 5  # fewer occurrences inside words: no usual length for that phone


def usual_frames(
    alignments: Iterable[tuple[Sequence[str], Sequence[int]]],
    quantile: float = QUANTILE,
    min_count: int = MIN_COUNT,
) -> dict[str, float]:
    """``{token: frames}``: per token the `quantile` of its frame counts over the
    positions where it lies inside a word (the tokens before and after it hold frames
    and are phones, not separators, punctuation or specials: `optional_tokens`), for the
    tokens seen there at least `min_count` times. `alignments`: ``(tokens, frames)`` per
    utterance (the search's durations)."""
    lengths: dict[str, list[int]] = {}
    for tokens, frames in alignments:
        skip = optional_tokens(tokens)
        frames = np.asarray(frames, int)
        inside = ~skip[1:-1] & ~skip[:-2] & ~skip[2:] & (frames[:-2] > 0) & (frames[2:] > 0)
        for k in np.flatnonzero(inside) + 1:
            lengths.setdefault(tokens[k], []).append(int(frames[k]))
    return {
        tok: round(float(np.quantile(v, quantile)), 3)
        for tok, v in sorted(lengths.items())
        if len(v) >= min_count
    }


def token_lengths(tokens: Sequence[str], usual: dict[str, float] | None) -> np.ndarray | None:
    """``(N,)`` the usual frames of each token (0 where none is known); None without
    `usual`."""
    if not usual:
        return None
    return np.array([float(usual.get(t, 0.0)) for t in tokens])
