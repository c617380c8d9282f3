"""English text cleaners: case, whitespace, abbreviations and numbers spelled out.

Numbers use the ``inflect`` library (integers, ordinals, decimals, years, currency),
following the conventions of the Tacotron / keithito text front end.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import inflect

_ABBREVIATIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{abbr}\.", re.IGNORECASE), full)
    for abbr, full in [
        ("mrs", "misess"),
        ("mr", "mister"),
        ("dr", "doctor"),
        ("st", "saint"),
        ("co", "company"),
        ("jr", "junior"),
        ("maj", "major"),
        ("gen", "general"),
        ("drs", "doctors"),
        ("rev", "reverend"),
        ("lt", "lieutenant"),
        ("hon", "honorable"),
        ("sgt", "sergeant"),
        ("capt", "captain"),
        ("esq", "esquire"),
        ("ltd", "limited"),
        ("col", "colonel"),
        ("ft", "fort"),
        ("prof", "professor"),
        ("vs", "versus"),
        ("etc", "et cetera"),
    ]
]

_COMMA_NUMBER = re.compile(r"(\d)(,)(?=\d{3}\b)")
_CURRENCY = re.compile(r"([$£€])(\d+(?:\.\d+)?)")
_DECIMAL = re.compile(r"\d+\.\d+")
_ORDINAL = re.compile(r"\b\d+(st|nd|rd|th)\b", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)%")
_NUMBER = re.compile(r"\d+")
_WHITESPACE = re.compile(r"\s+")

_CURRENCY_NAMES = {"$": ("dollar", "cent"), "£": ("pound", "penny"), "€": ("euro", "cent")}


@lru_cache(maxsize=1)
def _engine() -> inflect.engine:
    return inflect.engine()


def _words(n: str | int, **kw: object) -> str:
    """``inflect`` number to words without commas or 'and' (speech style)."""
    text = _engine().number_to_words(str(n), andword="", **kw)
    return _WHITESPACE.sub(" ", text.replace(",", "")).strip()


def _plural(word: str, n: int) -> str:
    if n == 1:
        return word
    return "pence" if word == "penny" else word + "s"


def _expand_currency(m: re.Match[str]) -> str:
    major_name, minor_name = _CURRENCY_NAMES[m.group(1)]
    whole, _, frac = m.group(2).partition(".")
    major = int(whole)
    minor = int((frac + "00")[:2]) if frac else 0
    parts = []
    if major or not minor:
        parts.append(f"{_words(major)} {_plural(major_name, major)}")
    if minor:
        parts.append(f"{_words(minor)} {_plural(minor_name, minor)}")
    return " ".join(parts[:1] + [f"and {p}" for p in parts[1:]])


def _expand_decimal(m: re.Match[str]) -> str:
    whole, frac = m.group(0).split(".")
    digits = " ".join(_words(d) for d in frac)
    return f"{_words(whole)} point {digits}"


def _expand_ordinal(m: re.Match[str]) -> str:
    return _words(_engine().ordinal(int(m.group(0)[:-2])))


def _expand_number(m: re.Match[str]) -> str:
    """Integers; four-digit numbers 1000..2999 read as years (1984 -> nineteen eighty four)."""
    num = int(m.group(0))
    if 1000 < num < 3000 and len(m.group(0)) == 4:
        if num == 2000:
            return "two thousand"
        if 2000 < num < 2010:
            return "two thousand " + _words(num % 100)
        if num % 100 == 0:
            return _words(num // 100) + " hundred"
        return _words(num, group=2).replace(" zero ", " oh ")
    return _words(num)


def expand_numbers(text: str) -> str:
    """Spell out currency, percentages, decimals, ordinals, years and integers."""
    text = _COMMA_NUMBER.sub(r"\1", text)
    text = _CURRENCY.sub(_expand_currency, text)
    text = _PERCENT.sub(lambda m: m.group(1) + " percent", text)
    text = _DECIMAL.sub(_expand_decimal, text)
    text = _ORDINAL.sub(_expand_ordinal, text)
    return _NUMBER.sub(_expand_number, text)


def expand_abbreviations(text: str) -> str:
    """Expand common English abbreviations (``Mr.`` -> ``mister``)."""
    for pattern, full in _ABBREVIATIONS:
        text = pattern.sub(full, text)
    return text


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace -> one space; leading and trailing whitespace removed."""
    return _WHITESPACE.sub(" ", text).strip()


def basic_cleaners(text: str) -> str:
    """Unicode NFC, lowercase and whitespace collapse only (any language)."""
    return collapse_whitespace(unicodedata.normalize("NFC", text).lower())


def english_cleaners(text: str) -> str:
    """English: NFC, numbers and abbreviations expanded, lowercase, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text)
    text = expand_numbers(text)
    text = expand_abbreviations(text)
    return collapse_whitespace(text.lower())


CLEANERS = {"english": english_cleaners, "basic": basic_cleaners, "none": lambda t: t}


def get_cleaner(name: str):
    """The cleaner function registered under ``name`` (``english``, ``basic``, ``none``)."""
    try:
        return CLEANERS[name]
    except KeyError:
        raise ValueError(f"unknown cleaner {name!r}; choose one of {sorted(CLEANERS)}") from None
