"""Splitting a text to synthesize into sentences (and over-long sentences into chunks)."""

from __future__ import annotations

import re

# Words ending in "." that do not end a sentence (case-insensitive).
ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col capt lt sgt rev hon vs etc no fig approx e.g i.e".split()
)
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n\s*\n")
_DOTTED = re.compile(r"[a-z](\.[a-z])*")  # an initial (J.) or dotted abbreviation (p.m.)
_CLAUSE = re.compile(r"(?<=[,;:])\s+")


def split_sentences(text: str, max_chars: int = 250) -> list[str]:
    """Split `text` into sentences at ``. ! ?`` followed by a space and at blank lines.

    A period after a known abbreviation (``Mr.``, ``Dr.``, ``etc.``), a single letter
    (``J. Smith``) or a dotted abbreviation (``p.m.``) does not end a sentence. A sentence
    longer than `max_chars` is split further at commas, semicolons and colons, then between
    words. Empty pieces are dropped.
    """
    pieces, start = [], 0
    for m in _BOUNDARY.finditer(text):
        before = text[start : m.start()].split()
        last = before[-1].lower() if before else ""
        if m.group().startswith(".") and (last in ABBREVIATIONS or _DOTTED.fullmatch(last)):
            continue
        pieces.append(text[start : m.end()])
        start = m.end()
    pieces.append(text[start:])
    sentences = [" ".join(p.split()) for p in pieces]
    return [c for s in sentences if s for c in _split_long(s, max_chars)]


def _split_long(sentence: str, max_chars: int) -> list[str]:
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
