"""What a long recording's text and its audio disagree on, and how a sentence with a word
unlike its audio is aligned without moving its neighbours (`aligner.inference.long_recording`
puts the recording's alignment together with them).

A mismatch is ``{"kind", "start", "end", "text"}`` (seconds of the recording) with ``kind``
one of `KINDS`: ``text not in the audio`` (a sentence the audio does not hold, at the gap
where it would be, `missing_text`; a word aligned to silence alone, `silent_words`; the
words after the end of a recording that stops inside a sentence, or before the start of
one that begins inside one, `heard_part`; two words or more of a sentence that its audio
lacks, `aligner.inference.left_out`), ``audio
not in the text``, ``word unlike its audio`` (`wrong_words`: a word whose frames the model
finds far likelier on other tokens, past `word_margin`) and ``word the model cannot read``
(`unread_words`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

import numpy as np
import torch

from aligner.alignment.record import UtteranceAlignment, resolve
from aligner.alignment.tiers import optional_tokens, word_runs
from aligner.inference.longform import _sentence_tokens, word_scores
from aligner.inference.unreadable import ReadableText, readable_text

KINDS = (
    "text not in the audio",
    "audio not in the text",
    "word unlike its audio",
    "word the model cannot read",
)


def mismatch(kind: int, start: float, end: float, text: str) -> dict[str, Any]:
    return {"kind": KINDS[kind], "start": round(start, 3), "end": round(end, 3), "text": text}


WORD_SPREAD = 7.0  # a word unlike its audio: this many times the recording's median evidence


def word_margin(scores: list[float], floor: float) -> float:
    """The nats of evidence against a word past which it is unlike its audio: `floor`
    (``word_margin``), or `WORD_SPREAD` times the median over the recording's words
    (`scores`: `word_scores` of every sentence) where that is more. Noise or another
    microphone raises every word's score alike (white noise at 20 dB SNR: the median from
    15 to 43 nats on eSpeak NG), and a fixed margin then reported one word in ten; on
    clean speech the median is about 15 and the floor decides."""
    if floor <= 0 or not scores:
        return floor
    return max(floor, WORD_SPREAD * float(np.median(-np.asarray(scores))))


# a sentence the audio does not hold, though the coarse search put it somewhere: at least
# NOT_SAID_WORDS of its words, and half of them, past NOT_SAID_SPREAD times the recording's
# median word evidence (on 24 recordings whose text says another sentence of the corpus
# where the audio holds one, 6 of the 7 such sentences the coarse search put on that audio
# had 3-7 words and half or more past 6 times the median; of 582 other sentences of
# eSpeak NG and three Festival voices, with a wrong word or three words the audio lacks
# among them, none more than 2 words or a quarter); and never at fewer than NOT_SAID_FLOOR
# nats (a median of 8-13 on those voices: the spread decides; a model that finds its
# words far likelier, a median of 2, would take a sentence of unclear words for another)
NOT_SAID_SPREAD, NOT_SAID_WORDS, NOT_SAID_FLOOR = 6.0, 3, 50.0


def not_said(scores: list[float], every: list[float]) -> bool:
    """Whether a sentence whose words have evidence `scores` (`word_scores`) is not what
    its audio says (see `NOT_SAID_SPREAD`), in a recording whose words have `every`."""
    if not scores or not every:
        return False
    far = max(NOT_SAID_FLOOR, NOT_SAID_SPREAD * float(np.median(-np.asarray(every))))
    past = int(np.sum(-np.asarray(scores) > far))
    return past >= NOT_SAID_WORDS and 2 * past >= len(scores)


def sentence_record(
    utt: UtteranceAlignment, log_probs: np.ndarray | None, unread: Collection[int] = ()
) -> tuple[dict[str, Any], list[float]]:
    """One sentence's durations record (its piece's time) and its words' `word_scores`
    (none without the model's `log_probs` of its piece; 0 for the words `unread`: they
    stand for words the model cannot read, and are no evidence)."""
    one = resolve(utt).record
    if log_probs is None:
        return one, []
    scores = word_scores(log_probs, utt.tokens, one["frames"])
    return one, [0.0 if j in unread else s for j, s in enumerate(scores)]


def wrong_words(
    scores: list[float], one: dict[str, Any], offset: float, margin: float
) -> list[dict[str, Any]]:
    """The words of one sentence (record `one`) whose frames the model finds `margin` nats
    (summed) likelier on other tokens (`scores`: `word_scores` of its words)."""
    return [
        {**mismatch(2, s + offset, e + offset, label), "score": round(score, 2)}
        for (s, e, label), score in zip(one.get("words", []), scores)
        if score < -margin
    ]


def edge_words(
    tokens: list[str], scores: list[float], margin: float
) -> list[tuple[int, int, bool]]:
    """``[(first token, last token, last word?)]`` (tokens counted without ``<s>``) of a
    sentence's first and last word where it is unlike its audio (``scores``, `word_scores`
    of the words of `tokens`, below ``-margin``); a sentence of one word lists it twice."""
    shift = 1 if tokens and tokens[0] == "<s>" else 0
    runs = word_runs(optional_tokens(tokens))
    ends = [(0, False), (len(runs) - 1, True)] if runs else []
    return [
        (runs[j][0] - shift, runs[j][1] - shift, at_end)
        for j, at_end in ends
        if scores[j] < -margin
    ]


def unread_words(
    one: dict[str, Any], unread: dict[int, str], offset: float
) -> list[dict[str, Any]]:
    """The words of one sentence (record `one`, its piece from `offset` seconds) that the
    model cannot read (``{word: its text}``): labelled in place with their text, and each
    a mismatch spanning the audio it took."""
    out = []
    words = one.get("words", [])
    for j, text in sorted(unread.items()):
        if j < len(words):
            words[j][2] = text
            out.append(mismatch(3, words[j][0] + offset, words[j][1] + offset, text))
    return out


SILENT_WORD = 3  # frames of silence inside a word, its edge frames aside, to report it


def silent_words(
    words: list, pauses: np.ndarray | None, sec: float, found: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A ``text not in the audio`` mismatch for each word aligned to silence alone (every
    frame of it but one at each edge a pause frame of ``pauses (T,)``, `SILENT_WORD` of
    them at least) that no mismatch of
    `found` covers: a heading in the text that the reader left out was put in the silence
    before the chapter's first words, and nothing said it was not there."""
    if pauses is None:
        return []
    out = []
    for start, end, text in words:
        a, b = int(round(start / sec)) + 1, int(round(end / sec)) - 1
        if b - a < SILENT_WORD or not pauses[a:b].all():
            continue
        if any(m["start"] <= start + 1e-3 and end - 1e-3 <= m["end"] for m in found):
            continue
        out.append(mismatch(0, start, end, text))
    return out


def missing_text(
    skipped: list[int], sentences: list[str], spans: dict[int, tuple[int, int]], sec: float
) -> list[dict[str, Any]]:
    """A mismatch per sentence the audio does not hold, spanning the gap between the
    sentences aligned before and after it."""
    out = []
    for k in skipped:
        before = [spans[j][1] for j in spans if j < k]
        after = [spans[j][0] for j in spans if j > k]
        start = max(before, default=0) * sec
        end = min(after, default=max(before, default=0)) * sec
        out.append(mismatch(0, start, max(start, end), sentences[k]))
    return out


def heard_part(
    speech: Any, sentence: str, heard: int, begins: bool = False
) -> tuple[str, str, ReadableText] | None:
    """``(the words of `sentence` a recording holds, the rest, those words as the model
    reads them)`` where it ends inside the sentence after `heard` of the words the model
    reads (the coarse search's `words_reached`), or with `begins`, begins inside it with
    `heard` of them left (its words less `words_missed`): the most of its first (last)
    written words that the model reads as no more than `heard` words (a number it reads
    as several words counts as all of them); None where that is none or all of them."""
    words = sentence.split()
    for m in range(1, len(words)):
        held, rest = (words[m:], words[:m]) if begins else (words[: len(words) - m], words[-m:])
        try:
            part = readable_text(speech, [" ".join(held)])
        except ValueError:  # the model cannot read these words alone
            continue
        tokens = speech.symbols.decode(part.ids[0].tolist())
        if len(word_runs(optional_tokens(tokens))) <= heard:
            return " ".join(held), " ".join(rest), part
    return None


def read_instead(
    speech: Any,
    readable: ReadableText,
    tokens: list[tuple[torch.Tensor, list[str]]],
    k: int,
    part: ReadableText,
) -> None:
    """Sentence `k` of `readable` (`readable_text`'s) and of `tokens` replaced, in place,
    by the one sentence of `part` (`readable_text`'s too)."""
    readable.texts[k], readable.ids[k] = part.texts[0], part.ids[0]
    readable.unread.pop(k, None)
    if 0 in part.unread:
        readable.unread[k] = part.unread[0]
    tokens[k] = _sentence_tokens(speech, part.ids)[0]


def phone_ids(speech: Any) -> torch.Tensor:
    """``(P,)`` the ids of every token of the model's table that is a sound (no
    separator, punctuation or special)."""
    table = speech.symbols.symbols
    return torch.tensor(np.flatnonzero(~optional_tokens(table)), dtype=torch.long)


def as_filler(
    utt: UtteranceAlignment,
    words: Collection[int],
    margin: float,
    gain: np.ndarray | None = None,
) -> UtteranceAlignment:
    """`utt` with the tokens of its `words` (indices of its runs of required tokens) weighted as
    the coarse search's filler is scored: at every frame the likeliest token's weight,
    `margin` nats down. A word unlike its audio then takes the frames that no neighbour
    explains better, and its neighbours keep theirs: aligned on its own tokens, a wrong
    word's audio went to whichever of it and its neighbour the model found less unlikely
    there (`tires` for `intelligence`: `higher` before it took the first half). On 32
    wrong words, 5-minute recordings of eSpeak NG and three Festival voices, the largest
    move of a word beside them fell from a median of 23.2 to 12.4 ms (7 to 6 over 50 ms;
    1 nat: 15.9 ms, 4 nats: 13.2), the recordings without them unchanged. `gain` ``(T,)``:
    nats added to that weight at each frame (`FrameScorer.unexplained`: audio the
    sentence's own tokens do not explain goes to the filler)."""
    weights = np.array(utt.weights, copy=True)
    level = weights.max(1) * np.exp(-margin)
    if gain is not None:
        extra = np.zeros(len(weights))
        extra[: min(len(gain), len(weights))] = gain[: len(weights)]
        level = level * np.exp(np.minimum(extra, 30.0))
    runs = word_runs(optional_tokens(utt.tokens))
    for word in words:
        first, last = runs[word]
        weights[:, first : last + 1] = level[:, None]
    return dataclasses.replace(utt, weights=weights)


CONFINE_FRAMES = 2  # how far the coarse search's frames may be off: its step


def confined(
    utt: UtteranceAlignment, passed: list[tuple[int, int, int, int]], start: int
) -> UtteranceAlignment:
    """`utt` (a sentence aligned from frame `start` of the recording) with each word the
    coarse search passed over (``passed``: ``(first token, last token, start, end)``,
    tokens counted without ``<s>``, frames of the recording) kept to the audio it stands
    for, and that audio to it: its tokens lose their weight outside those frames, every
    other token inside them (`CONFINE_FRAMES` either side left free). Aligned as an
    utterance, a sentence with a wrong word stretched a neighbour over the wrong word's
    audio wherever the model found that audio no likelier on the wrong word's tokens."""
    if not passed or utt.r != 1:
        return utt
    weights = np.array(utt.weights, copy=True)
    shift = 1 if utt.tokens and utt.tokens[0] == "<s>" else 0
    optional = optional_tokens(utt.tokens)  # pauses stay free
    m = CONFINE_FRAMES
    for first, last, a, b in passed:
        own = np.zeros(weights.shape[1], bool)
        own[first + shift : last + shift + 1] = True
        a, b = a - start, b - start
        weights[max(0, a + m) : max(0, b - m), ~own & ~optional] = 0.0
        weights[: max(0, a - m), own] = 0.0
        weights[max(0, b + m) :, own] = 0.0
    return dataclasses.replace(utt, weights=weights)
