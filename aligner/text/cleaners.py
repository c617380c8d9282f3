"""Text cleaners: what a tokenizer applies to every text before it becomes tokens.

``english`` spells out numbers, times, digit strings, units and abbreviations
(`aligner.text.normalize`) and lowercases; ``basic`` only lowercases and collapses
whitespace (any language); both read square and curly brackets as parentheses; ``none``
leaves the text as it is.
"""

from __future__ import annotations

import re
import unicodedata

from aligner.text.abbreviations import expand_abbreviations
from aligner.text.normalize import drop_footnote_marks, normalize_text
from aligner.text.numbers import expand_numbers

__all__ = [
    "CLEANERS",
    "basic_cleaners",
    "collapse_whitespace",
    "english_cleaners",
    "expand_abbreviations",
    "expand_numbers",
    "get_cleaner",
]

_WHITESPACE = re.compile(r"\s+")
# square and curly brackets read as parentheses: punctuation every tokenizer knows (eSpeak
# NG glued "[" to the next phone: "[1]" became the unknown symbol "[w")
_BRACKETS = str.maketrans("[]{}", "()()")


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace -> one space; leading and trailing whitespace removed."""
    return _WHITESPACE.sub(" ", text).strip()


def basic_cleaners(text: str) -> str:
    """Unicode NFC, lowercase and whitespace collapse only (any language)."""
    return collapse_whitespace(unicodedata.normalize("NFC", text).lower().translate(_BRACKETS))


def english_cleaners(text: str) -> str:
    """English: NFC, written forms spelled out (`normalize_text`), lowercase, whitespace
    collapsed. Idempotent: cleaning a cleaned text changes nothing."""
    return collapse_whitespace(
        normalize_text(drop_footnote_marks(text).translate(_BRACKETS)).lower()
    )


CLEANERS = {"english": english_cleaners, "basic": basic_cleaners, "none": lambda t: t}


def get_cleaner(name: str):
    """The cleaner function registered under ``name`` (``english``, ``basic``, ``none``)."""
    try:
        return CLEANERS[name]
    except KeyError:
        raise ValueError(f"unknown cleaner {name!r}; choose one of {sorted(CLEANERS)}") from None
