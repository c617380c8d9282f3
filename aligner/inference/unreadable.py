"""Words of a long recording's text that the model cannot read (a word in another script
for an English model, a name neither in CMUdict nor in Latin letters): each stands in the
text the model reads as the recording's shortest readable word, which the fine pass
scores as a filler (`aligner.inference.long_recording`), so that the word's audio is
taken by it, its neighbours keep theirs, and it is reported with its span instead of
stopping the whole recording. A symbol of no letter or digit that the model cannot read
(an emoji, an arrow), alone or beside a word, is not said: it is left out of that text.

An utterance with such a word is refused as a whole (`aligner align` reports the item):
a long recording is minutes of good words around it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import torch

from aligner.alignment.tiers import PUNCTUATION, optional_tokens, word_runs
from aligner.inference.common import InferenceError

CANDIDATES = 20  # the shortest distinct words of a text tried as the stand-in
_EDGES = re.compile(r"^(\W*)(.*?)(\W*)$", re.S)  # a word's leading and trailing marks


@dataclass
class ReadableText:
    """Sentences as the model reads them (``texts``, one per sentence given, and their
    token ids ``ids``: `encode_text`'s), per sentence the words it cannot read (``unread``:
    ``{sentence: {word: the word}}``, words counted as `word_runs` counts a sentence's
    tokens) and the symbols left out."""

    texts: list[str]
    ids: list[torch.Tensor] = field(default_factory=list)
    unread: dict[int, dict[int, str]] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)


def _punctuation(marks: str) -> str:
    """The sentence punctuation of `marks` (a word's leading or trailing characters)."""
    return "".join(c for c in marks if c in PUNCTUATION)


def _readable(speech: Any, text: str) -> bool:
    try:
        speech.encode_text(text)
    except ValueError:  # InferenceError, or the tokenizer's word it cannot say
        return False
    return True


def _words(speech: Any, text: str) -> int:
    """How many words the model reads in `text` (0 for none)."""
    if not text.strip():
        return 0
    tokens = speech.symbols.decode(speech.encode_text(text).tolist())
    return len(word_runs(optional_tokens(tokens)))


def _stand_in(speech: Any, sentences: list[str]) -> str:
    """The readable word of `sentences` with the fewest tokens (of their shortest
    `CANDIDATES` distinct words, by letters): it stands for a word the model cannot read."""
    seen = {w.strip("".join(PUNCTUATION) + "'") for s in sentences for w in s.split()}
    words = sorted((w for w in seen if any(c.isalpha() for c in w)), key=lambda w: (len(w), w))
    best: tuple[int, str] | None = None
    for word in words[:CANDIDATES]:
        try:
            n = len(speech.encode_text(word))
        except ValueError:
            continue
        if best is None or n < best[0]:
            best = (n, word)
    if best is None:
        raise InferenceError(
            "the model cannot read any word of its text: use a model of the text's language"
        )
    return best[1]


def readable_text(speech: Any, sentences: list[str]) -> ReadableText:
    """`ReadableText` of `sentences`: each sentence the model cannot read as it is, with
    its unreadable words replaced by a stand-in (`_stand_in`) or, without a letter or
    digit, left out. InferenceError (the model's own message) where a sentence is still
    unreadable, or where it cannot read most of a sentence's words: then the text is not
    in the model's language."""
    out = ReadableText(list(sentences))
    stand_in: str | None = None
    for k, sentence in enumerate(sentences):
        where = f"sentence {k + 1} ({sentence[:40]!r})"
        try:
            out.ids.append(speech.encode_text(sentence, where))
            continue
        except ValueError as err:
            failure = err
        words = sentence.split()
        bad = [i for i, w in enumerate(words) if not _readable(speech, w)]
        if not bad or 2 * len(bad) > len(words):
            raise failure
        stand_in = stand_in or _stand_in(speech, sentences)
        kept: list[str] = []
        unread: dict[int, str] = {}
        for i, word in enumerate(words):
            if i not in bad:
                kept.append(word)
                continue
            lead, core, trail = _EDGES.match(word).groups()  # type: ignore[union-attr]
            symbols = "".join(c for c in lead + trail if c not in PUNCTUATION)
            lead, trail = _punctuation(lead), _punctuation(trail)
            if not any(c.isalnum() for c in core):  # a symbol alone (an emoji): not said
                out.left_out.append(word)
                continue
            if symbols:  # a symbol beside a word (``love😀``): the word is said, not it
                out.left_out.append(symbols)
            if _readable(speech, core):
                kept.append(lead + core + trail)
            else:
                unread[_words(speech, " ".join(kept))] = core
                kept.append(lead + stand_in + trail)
        out.texts[k] = " ".join(kept)
        out.ids.append(speech.encode_text(out.texts[k], where))  # raises if still unreadable
        if unread:
            out.unread[k] = unread
    return out
