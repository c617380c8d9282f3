"""Text normalization for synthesis: English written forms to spoken forms, sentence by
sentence (what `aligner synthesize` says and prints).

    >>> normalize_and_split("Dr. Smith arrived on Jan. 5th at 10:30 am. Call 555-1234!")
    ['Doctor Smith arrived on January fifth at ten thirty a m.',
     'Call five five five, one two three four!']

The order: times and digit strings (phone numbers, ZIP codes) first, so that their digits
are not read as plain numbers; units after numbers; abbreviations (`aligner.text.
abbreviations`); dates (``January 5`` -> "January fifth"); then every other number
(`aligner.text.numbers`). Case is kept (expansions are lowercase, or capitalized where
the abbreviation was); the model's cleaner lowercases as it was trained to.
"""

from __future__ import annotations

import re
import unicodedata

from aligner.text.abbreviations import MONTHS, expand_abbreviations, expand_units
from aligner.text.numbers import (
    expand_decades,
    expand_digit_strings,
    expand_numbers,
    expand_times,
    ordinal_words,
)
from aligner.text.sentences import chunk_sentence, raw_sentences

_WHITESPACE = re.compile(r"\s+")
_MONTH_NAMES = "|".join(sorted(set(MONTHS.values())) + ["May"])
_DATE = re.compile(rf"\b({_MONTH_NAMES})\s+(\d{{1,2}})(?![\d:.,]\d|\s*%|st|nd|rd|th)\b")
FOOTNOTE = re.compile(r"(?<=[^\s\d])\[\d{1,3}\]")  # years.[1]: a note's mark, not said


def drop_footnote_marks(text: str) -> str:
    """`text` without the footnote marks glued to a word (``years.[1]``, ``town[12]``):
    a reader does not say them."""
    return FOOTNOTE.sub("", text)


_DIVISION = re.compile(
    r"\b((?i:Chapter|Book|Part|Volume|Vol\.|Act|Scene|Section|Canto|Psalm))\s+"
    r"([IVXLCDM]+)\b(?!\.\w)"
)  # a division numbered in capitals: Chapter IV, BOOK XII
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def roman_value(numeral: str) -> int | None:
    """The value of a Roman numeral (``IV`` -> 4); None for a string that is not one."""
    values = [_ROMAN.get(c) for c in numeral.upper()]
    if not values or None in values:
        return None
    total = sum(
        -v if i + 1 < len(values) and v < values[i + 1] else v for i, v in enumerate(values)
    )
    if total < 1 or _roman(total) != numeral.upper():
        return None
    return total


_ROMAN_STEPS = tuple(
    zip(
        (1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1),
        ("M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"),
    )
)


def _roman(value: int) -> str:
    """`value` in Roman numerals, written the standard way (4 -> ``IV``)."""
    out = ""
    for number, letters in _ROMAN_STEPS:
        while value >= number:
            out, value = out + letters, value - number
    return out


def _division(m: re.Match[str]) -> str:
    """``Chapter IV`` -> "Chapter 4" (then said as a number), as a reader says it."""
    value = roman_value(m.group(2))
    return f"{m.group(1)} {value}" if value is not None else m.group(0)


_NUMERIC_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b")
_DASH = re.compile(r"(?<=\d)\s?[–—]\s?(?=\d)")
_HASH = re.compile(r"#(?=\d)")
_AMPERSAND = re.compile(r"\s*&\s*")


def _date(m: re.Match[str]) -> str:
    day = int(m.group(2))
    return f"{m.group(1)} {ordinal_words(day)}" if 1 <= day <= 31 else m.group(0)


MONTH_ORDER = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _numeric_date(m: re.Match[str]) -> str:
    """``12/05/2024`` -> "December fifth, 2024" (month first, as American English writes
    it; day first where the first number cannot be a month: ``25/12/2024``); as written
    where neither reading is a date."""
    first, second, year = int(m.group(1)), int(m.group(2)), m.group(3)
    if 1 <= first <= 12 and 1 <= second <= 31:
        month, day = first, second
    elif 1 <= second <= 12 and 1 <= first <= 31:
        month, day = second, first
    else:
        return m.group(0)
    return f"{MONTH_ORDER[month - 1]} {ordinal_words(day)}, {year}"


def normalize_text(text: str) -> str:
    """English written forms spelled out as said (one text, any number of sentences):
    ``"Jan. 5th at 10:30"`` -> "January fifth at ten thirty". Whitespace collapsed."""
    text = drop_footnote_marks(unicodedata.normalize("NFC", text))
    text = _DASH.sub("-", text)
    text = _NUMERIC_DATE.sub(_numeric_date, text)
    text = _DIVISION.sub(_division, text)
    text = expand_times(text)
    text = expand_digit_strings(text)
    text = expand_units(text)
    text = expand_abbreviations(text)
    text = _HASH.sub("number ", text)
    text = _AMPERSAND.sub(" and ", text)
    text = _DATE.sub(_date, text)
    text = expand_decades(text)
    text = expand_numbers(text)
    return _WHITESPACE.sub(" ", text).strip()


def has_words(text: str) -> bool:
    """Whether `text` has a letter or digit to say (not punctuation or symbols alone:
    ``...``, ``***``, an emoji)."""
    return any(c.isalnum() for c in text)


def normalize_and_split(text: str, max_chars: int = 250, cleaner: str = "english") -> list[str]:
    """The sentences of `text`, each normalized (`normalize_text`), in order; a sentence
    longer than `max_chars` once normalized is cut at clauses, then between words.

    Sentences are split first (on the written text, where abbreviations are still
    visible; see `aligner.text.sentences`). With a `cleaner` other than ``english`` (a
    model of another language) the sentences are only split, with whitespace collapsed.
    """
    english = cleaner == "english"
    out = []
    for sentence in raw_sentences(text):
        said = normalize_text(sentence) if english else _WHITESPACE.sub(" ", sentence).strip()
        out.extend(chunk_sentence(said, max_chars) if said else [])
    return out
