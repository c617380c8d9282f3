"""Splitting a text to synthesize into sentences (and over-long sentences into chunks).

A sentence ends at ``.``, ``!`` or ``?`` (with any closing quotes or brackets) followed by
whitespace, and at a blank line. A single period after an abbreviation is judged by
`aligner.text.abbreviations.ends_sentence`:

- after a prefix (``Mr.``, ``Dr.``, ``St.``, ``e.g.``, ``vs.``, ``approx.``), an initial
  (``J. Smith``) or a capitals initialism (``U.S.``) it never ends the sentence;
- after ``No.``, ``Fig.``, ``p.`` it does not when a number follows (``No. 5``);
- after a terminal abbreviation (``etc.``, ``Inc.``, ``Jr.``, ``Jan.``, ``Mon.``,
  ``p.m.``, a unit after a number ``5 min.``) it ends the sentence only when the next
  word starts with a capital letter: ``Jan. 5th`` stays whole, ``at 5 p.m. Then we left``
  is two sentences;
- after any other word it ends the sentence.
"""

from __future__ import annotations

import re

from aligner.text.abbreviations import ends_sentence

_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n\s*\n")
_CLAUSE = re.compile(r"(?<=[,;:])\s+")


def raw_sentences(text: str) -> list[str]:
    """The sentences of `text` (rules in the module docstring), whitespace collapsed, empty
    ones dropped; no length limit."""
    pieces, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group().rstrip("\"')]") == ".":
            words = text[start : m.start()].split()
            last = words[-1] if words else ""
            previous = words[-2] if len(words) > 1 else ""
            if last and not ends_sentence(last, previous, text[m.end() : m.end() + 8]):
                continue
        pieces.append(text[start : m.end()])
        start = m.end()
    pieces.append(text[start:])
    return [s for s in (" ".join(p.split()) for p in pieces) if s]


def split_sentences(text: str, max_chars: int = 250) -> list[str]:
    """Split `text` into sentences (`raw_sentences`); a sentence longer than `max_chars` is
    split further at commas, semicolons and colons, then between words."""
    return [c for s in raw_sentences(text) for c in chunk_sentence(s, max_chars)]


def chunk_sentence(sentence: str, max_chars: int) -> list[str]:
    """Greedily pack the clauses of `sentence` into chunks of at most `max_chars`; a clause
    that is itself too long is packed word by word (a single longer word stays whole)."""
    if len(sentence) <= max_chars:
        return [sentence]
    chunks: list[str] = []
    for clause in _CLAUSE.split(sentence):
        parts = [clause] if len(clause) <= max_chars else clause.split()
        for part in parts:
            if chunks and len(chunks[-1]) + 1 + len(part) <= max_chars:
                chunks[-1] += " " + part
            else:
                chunks.append(part)
    return chunks
