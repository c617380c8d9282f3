"""Two words or more of a sentence that a long recording's audio lacks (a clause the
reader left out, a recording edited inside a sentence): found by the search of
`aligner.alignment.dropped` over each sentence's log-probabilities (`sentence_drop`, past
a margin that grows with the recording's word evidence: `drop_margin`), taken out of the
sentence's text (`leave_out`: the written words the model reads as them), and
reported as ``text not in the audio`` at the gap between the words beside them
(`left_out_words`) once the sentence is aligned again without them
(`aligner.inference.long_recording`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aligner.alignment.dropped import dropped_words
from aligner.alignment.tiers import optional_tokens, separator_log_probs, word_runs
from aligner.inference.mismatches import mismatch, read_instead
from aligner.inference.unreadable import ReadableText, readable_text
from aligner.text.metrics import edit_distance

MIN_DROP = 2  # words: a shorter run the audio lacks is a word unlike its audio, or swallowed
# nats the best path must gain with the run left out: DROP_MARGIN, or DROP_SPREAD times the
# recording's median word evidence where that is more (on 12 sentences with 3 words cut
# from the audio, eSpeak NG and three Festival voices, the gain was 0.7-22 times the
# median, on their 1,278 other sentences at most -2.5 times it; with white noise at 20 dB
# SNR a sentence said in full gained up to 1.6 times it, the median 27-42 nats against
# 8-17 on clean speech)
DROP_MARGIN, DROP_SPREAD = 5.0, 2.0


def drop_margin(scores: list[float]) -> float:
    """The nats by which leaving a run of words out must raise a sentence's best path in
    a recording whose words have evidence `scores` against them (`word_scores` of every
    sentence): `DROP_MARGIN`, or `DROP_SPREAD` times their median where that is more."""
    if not scores:
        return DROP_MARGIN
    return max(DROP_MARGIN, DROP_SPREAD * float(np.median(-np.asarray(scores))))


def search_log_probs(
    tokens: list[str], log_probs: np.ndarray, pauses: np.ndarray | None
) -> np.ndarray:
    """``log_probs (T, N)`` with the word separators given ``pauses (T,)`` as the fine
    search gives them (`separator_log_probs`)."""
    override = separator_log_probs(tokens, pauses)
    if override is None:
        return log_probs
    return np.where(np.isnan(override), log_probs, override)


def sentence_drop(
    tokens: list[str], log_probs: np.ndarray | None, pauses: np.ndarray | None, margin: float
) -> tuple[int, int] | None:
    """The words ``[first, end)`` of a sentence (its `tokens`) that its audio lacks:
    `dropped_words` over the model's ``log_probs (T, N)`` of its piece (None: none), the
    word separators given the piece's ``pauses (T,)`` as the fine search gives them; at
    least `MIN_DROP` words whose leaving out gains the path `margin` nats (`drop_margin`)."""
    if log_probs is None:
        return None
    lp = search_log_probs(tokens, log_probs, pauses)
    return dropped_words(lp, optional_tokens(tokens), margin, MIN_DROP)


# tokens: how far the rest of a sentence, read without the words left out, may sound from
# what it sounded with them, where the words meet across the gap (eSpeak NG's linking r:
# `senter after` reads `sˈɛntɚɹ ˈæftɚ`, `senter so` reads `sˈɛntɚ sˌoʊ`)
JUNCTION = 2

END_MARKS = ".!?;:\"')]»”’…"  # what ends a sentence's last word: kept when the word goes


def _end_mark_kept(last: str, gone: list[str]) -> tuple[str, list[str]]:
    """The last written word kept and the words left out after it, which ended the
    sentence: the marks that closed it (`END_MARKS`, a word of them alone too) moved onto
    the word kept, in place of its own trailing commas (``paid,`` + ``coffees.`` ->
    ``paid.``)."""
    tail = " ".join(gone)
    mark = len(tail) - len(tail.rstrip(END_MARKS + " "))
    if mark == 0:
        return last, gone
    kept = tail[len(tail) - mark :].replace(" ", "")
    rest = tail[: len(tail) - mark].split()
    return last.rstrip(",;:") + kept, rest


def _words_read(speech: Any, words: list[str]) -> list[int]:
    """How many words the model reads in each run of `words` from the first (none to all:
    ``len(words) + 1`` counts; a number is read as several, a symbol of no letter as none)."""
    out = [0]
    for i in range(1, len(words) + 1):
        try:
            ids = readable_text(speech, [" ".join(words[:i])]).ids[0]
        except ValueError:  # the model cannot read these words alone
            out.append(out[-1])
            continue
        out.append(len(word_runs(optional_tokens(speech.symbols.decode(ids.tolist())))))
    return out


def without_words(
    speech: Any, sentence: str, tokens: list[str], first: int, end: int
) -> tuple[str, str, ReadableText] | None:
    """``(`sentence` without the written words that the model reads as its words
    ``[first, end)`` (`word_runs` of its `tokens`), those written words, the rest as the
    model reads it)``; None where no run of written words reads so (tried in order of how
    near the words the model reads before and up to them are to `first` and `end`). Where
    they end the sentence, its closing marks stay on the word before them: the pause a
    full stop stands for is still said. The rest sounds as it did, or within `JUNCTION`
    tokens of it with as many words (the closest such)."""

    def sounds(toks: list[str]) -> list[str]:
        return [t for t, skip in zip(toks, optional_tokens(toks)) if not skip]

    runs = word_runs(optional_tokens(tokens))
    want = sounds(tokens[: runs[first][0]]) + sounds(tokens[runs[end - 1][1] + 1 :])
    words = sentence.split()
    read = _words_read(speech, words)
    spans = [(a, b) for a in range(len(words)) for b in range(a + 1, len(words) + 1)]
    spans.sort(key=lambda ab: (abs(read[ab[0]] - first) + abs(read[ab[1]] - end), ab))
    left = len(runs) - (end - first)
    near: tuple[int, tuple[str, str, ReadableText]] | None = None
    for a, b in spans[:64]:
        kept, gone = words[:a] + words[b:], words[a:b]
        if b == len(words) and a > 0:  # the sentence's last words: its end mark stays
            kept[-1], gone = _end_mark_kept(kept[-1], gone)
        rest = " ".join(kept)
        try:
            part = readable_text(speech, [rest])
        except ValueError:  # the model cannot read what is left (or nothing is)
            continue
        reading = speech.symbols.decode(part.ids[0].tolist())
        if sounds(reading) == want:
            return rest, " ".join(gone), part
        if len(word_runs(optional_tokens(reading))) != left:
            continue
        off = edit_distance(sounds(reading), want)
        if off <= JUNCTION and (near is None or off < near[0]):
            near = off, (rest, " ".join(gone), part)
    return None if near is None else near[1]


def left_out_words(
    left_out: dict[int, tuple[int, str]], rec: dict[str, list], end: float
) -> list[dict[str, Any]]:
    """A ``text not in the audio`` mismatch for each run of words a sentence's audio lacks
    (``left_out``: ``{sentence: (how many of its words come before the run, its text)}``),
    spanning the gap where the run would be: from the end of the word before it to the
    start of the word after it in the recording's record `rec` (`end`: the recording's
    length in seconds)."""
    out = []
    words = rec["words"]
    for k, first, stop in rec["sentence_words"]:
        if k not in left_out:
            continue
        before, text = left_out[k]
        g = min(first + before, stop)  # the record's first word after the run
        start = words[g - 1][1] if g > 0 else 0.0
        after = words[g][0] if g < len(words) else end
        out.append(mismatch(0, start, max(start, after), text))
    return out


def leave_out(
    speech: Any,
    drops: dict[int, tuple[int, int]],
    sentences: list[str],
    readable: ReadableText,
    tokens: list[tuple[torch.Tensor, list[str]]],
    passed: dict[int, list[tuple[int, int, int, int]]],
) -> dict[int, tuple[int, str]]:
    """Each sentence of `drops` (``{sentence: (first word, end word)}``, `sentence_drop`'s)
    without those words, in place: its text in `sentences`, `readable` and `tokens`, its
    words passed over (`passed`, counted in the tokens it had) forgotten. Returns
    ``{sentence: (how many of its words come before the run, the run's written words)}``
    (`left_out_words`' argument); a run no written words read as is left in."""
    out = {}
    for k, (first, end) in drops.items():
        rest = without_words(speech, sentences[k], tokens[k][1], first, end)
        if rest is not None:
            sentences[k], out[k] = rest[0], (first, rest[1])
            read_instead(speech, readable, tokens, k, rest[2])
            passed.pop(k, None)
    return out
