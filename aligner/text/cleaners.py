"""Text cleaners: what a tokenizer applies to every text before it becomes tokens.

``english`` spells out numbers, times, digit strings, units and abbreviations
(`aligner.text.normalize`) and lowercases; ``basic`` only lowercases and collapses
whitespace (any language); ``none`` leaves the text as it is.
"""

from __future__ import annotations

import re
import unicodedata

from aligner.text.abbreviations import expand_abbreviations
from aligner.text.normalize import normalize_text
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


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace -> one space; leading and trailing whitespace removed."""
    return _WHITESPACE.sub(" ", text).strip()


def basic_cleaners(text: str) -> str:
    """Unicode NFC, lowercase and whitespace collapse only (any language)."""
    return collapse_whitespace(unicodedata.normalize("NFC", text).lower())


def english_cleaners(text: str) -> str:
    """English: NFC, written forms spelled out (`normalize_text`), lowercase, whitespace
    collapsed. Idempotent: cleaning a cleaned text changes nothing."""
    return collapse_whitespace(normalize_text(text).lower())


CLEANERS = {"english": english_cleaners, "basic": basic_cleaners, "none": lambda t: t}


def get_cleaner(name: str):
    """The cleaner function registered under ``name`` (``english``, ``basic``, ``none``)."""
    try:
        return CLEANERS[name]
    except KeyError:
        raise ValueError(f"unknown cleaner {name!r}; choose one of {sorted(CLEANERS)}") from None
