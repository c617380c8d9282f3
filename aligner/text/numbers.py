"""English numbers spelled out as they are said: money, percentages, decimals, ordinals,
years, times of day, ranges, and digit strings read digit by digit.

Integer words come from the ``inflect`` library in speech style (no commas, no "and"),
following the Tacotron / keithito text front end. Which reading a number gets:

- ``10:30`` -> "ten thirty", ``7:05`` -> "seven oh five", ``10:00`` -> "ten o'clock",
  ``10:30 am`` / ``10:30 a.m.`` -> "ten thirty a m", ``7 pm`` -> "seven p m";
- phone numbers (``555-1234``, ``(555) 123-4567``, ``1-800-555-0199``) and ZIP codes
  (``02139``, ``90210-1234``, five digits after a state code ``MA 02139``) digit by digit,
  groups separated by commas, ``0`` as "oh" in phone numbers;
- a digit string with a leading zero (``007``) or of ten or more digits digit by digit;
- four-digit numbers 1001..2999 as years (1984 -> "nineteen eighty-four", 1905 ->
  "nineteen oh five", 2005 -> "two thousand five");
- ``5-10`` (between numbers of at most four digits) -> "five to ten";
- ``$3.50`` -> "three dollars and fifty cents", ``$5 million`` -> "five million dollars".
"""

from __future__ import annotations

import re
from functools import lru_cache

import inflect

_WHITESPACE = re.compile(r"\s+")
_DIGIT_WORDS = "zero one two three four five six seven eight nine".split()
_CURRENCY_NAMES = {
    "$": ("dollar", "cent"),
    "£": ("pound", "penny"),
    "€": ("euro", "cent"),
    "¥": ("yen", "sen"),
}
_SAME_PLURAL = {"yen", "sen"}

_AMPM = r"(?:\s*([ap])(\.)?\s?m\b(?(2)\.?))"  # "am", "a.m." (its final period too)
_TIME = re.compile(rf"\b(\d{{1,2}}):([0-5]\d)(?::([0-5]\d))?{_AMPM}?", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\s+[\"'(\[]?[A-Z]|\s*$")
_HOUR_AMPM = re.compile(rf"(?<![\d.:])\b(\d{{1,2}}){_AMPM}", re.IGNORECASE)
_DOTTED_AMPM = re.compile(r"(?<![\w.])([ap])\.(m)\.", re.IGNORECASE)
_PHONE = re.compile(
    r"(?<![\w.,-])(?:(?:\+?1[-. ])?(?:\(\d{3}\)\s?|\d{3}[-. ])\d{3}[-. ]\d{4}|[2-9]\d{2}-\d{4})(?![\w-])"
)
_ZIP = re.compile(r"\b(?:(?:[A-Z]{2}|[Zz][Ii][Pp](?:\s+code)?:?)\s+\d{5}(?:-\d{4})?|\d{5}-\d{4})\b")
_DIGIT_STRING = re.compile(r"(?<![\d.,])(?:0\d+|\d{10,})(?![\d,]|\.\d)")
_RANGE = re.compile(r"(?<![\d.,-])(\d{1,4})\s?[-–]\s?(\d{1,4})(?![\d.,-])")
_COMMA_NUMBER = re.compile(r"(\d)(,)(?=\d{3}(?!\d))")
# an integer in comma groups, alone (no currency sign, decimals, ordinal or percent): a
# count, never a year ("1,234" -> one thousand two hundred thirty-four)
_GROUPED = re.compile(
    r"(?<![\d.,$£€¥])\d{1,3}(?:,\d{3})+(?![\d,]|\.\d|\s?%|st\b|nd\b|rd\b|th\b)", re.IGNORECASE
)
_SCALE = r"(?:\s+(thousand|million|billion|trillion)\b)?"
_CURRENCY = re.compile(rf"([$£€¥])\s?(\d+(?:\.\d+)?){_SCALE}", re.IGNORECASE)
_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_DECIMAL = re.compile(r"(\d*)\.(\d+)")
_ORDINAL = re.compile(r"\b(\d+)(st|nd|rd|th)\b", re.IGNORECASE)
_DECADE = re.compile(r"(?<![\d.,])'?(\d{2}|\d{3}0)s\b")
_NEGATIVE = re.compile(r"(?<![\w.])-(?=\d)")
_NUMBER = re.compile(r"\d+")


@lru_cache(maxsize=1)
def _engine() -> inflect.engine:
    return inflect.engine()


def number_words(n: str | int, **kw: object) -> str:
    """``inflect`` number to words without commas or 'and' (speech style): 101 -> "one
    hundred one"."""
    text = _engine().number_to_words(str(n), andword="", **kw)
    return _WHITESPACE.sub(" ", text.replace(",", "")).strip()


def digit_words(digits: str, zero: str = "zero") -> str:
    """Each digit of `digits` as a word: "007" -> "zero zero seven" (`zero` names 0)."""
    return " ".join(zero if d == "0" else _DIGIT_WORDS[int(d)] for d in digits if d.isdigit())


def ordinal_words(n: int) -> str:
    """21 -> "twenty-first"."""
    return number_words(_engine().ordinal(n))


def year_words(digits: str) -> str:
    """A year as said: "1984" -> "nineteen eighty-four", "1900" -> "nineteen hundred",
    "2005" -> "two thousand five", "2010" -> "twenty ten"; other numbers as integers."""
    num = int(digits)
    if not (1000 < num < 3000 and len(digits) == 4):
        return number_words(num)
    if num == 2000 or 2000 < num < 2010:
        return "two thousand" + (f" {number_words(num % 100)}" if num % 100 else "")
    if num % 100 == 0:
        return number_words(num // 100) + " hundred"
    return number_words(num, group=2).replace(" zero ", " oh ")


def _ampm(m: re.Match[str], letter: int) -> str:
    """ " a m" / " p m" for group `letter` of `m` (empty without one), with a period where
    the "a.m." that `m` ends with also ends its sentence."""
    if not m.group(letter):
        return ""
    end = m.group(0).endswith(".") and _SENTENCE_END.match(m.string, m.end())
    return f" {m.group(letter).lower()} m" + ("." if end else "")


def _expand_time(m: re.Match[str]) -> str:
    hour, minute, second, ampm = m.group(1), int(m.group(2)), m.group(3), _ampm(m, 4)
    if int(hour) > 24:  # 35:20 is not a time of day (a score, a ratio): leave it
        return m.group(0)
    words = number_words(int(hour))
    if minute == 0:
        words += "" if ampm or second else " o'clock"
    else:
        words += (" oh " if minute < 10 else " ") + number_words(minute)
    if second is not None:
        words += f" and {number_words(int(second))} seconds"
    return words + ampm


def _expand_phone(m: re.Match[str]) -> str:
    groups = re.findall(r"\d+", m.group(0))
    return ", ".join(digit_words(g, zero="oh") for g in groups)


def _expand_zip(m: re.Match[str]) -> str:
    text = m.group(0)
    start = re.search(r"\d", text).start()
    return text[:start] + ", ".join(digit_words(g) for g in re.findall(r"\d+", text[start:]))


def _plural(word: str, n: int) -> str:
    if n == 1 or word in _SAME_PLURAL:
        return word
    return "pence" if word == "penny" else word + "s"


def _expand_currency(m: re.Match[str]) -> str:
    major_name, minor_name = _CURRENCY_NAMES[m.group(1)]
    if m.group(3):  # $1.5 million -> one point five million dollars
        return f"{_decimal_words(m.group(2))} {m.group(3).lower()} {major_name}s"
    whole, _, frac = m.group(2).partition(".")
    major = int(whole)
    minor = int((frac + "00")[:2]) if frac else 0
    parts = []
    if major or not minor:
        parts.append(f"{number_words(major)} {_plural(major_name, major)}")
    if minor:
        parts.append(f"{number_words(minor)} {_plural(minor_name, minor)}")
    return " ".join(parts[:1] + [f"and {p}" for p in parts[1:]])


def _decimal_words(text: str) -> str:
    """ "3.14" -> "three point one four", ".5" -> "point five", "7" -> "seven"."""
    whole, _, frac = text.partition(".")
    words = number_words(whole) if whole else ""
    if frac:
        words = f"{words} point {digit_words(frac)}".strip()
    return words


def _expand_range(m: re.Match[str]) -> str:
    first, second = m.group(1), m.group(2)
    if len(first) == len(second) and int(first) >= int(second):  # a score (3-2), not a range
        return f"{year_words(first)} {year_words(second)}"
    return f"{year_words(first)} to {year_words(second)}"


def expand_times(text: str) -> str:
    """``10:30`` -> "ten thirty", ``7:05 pm`` -> "seven oh five p m", ``7 a.m.`` ->
    "seven a m" (and any other ``a.m.`` / ``p.m.`` -> "a m" / "p m")."""
    text = _TIME.sub(_expand_time, text)
    text = _HOUR_AMPM.sub(lambda m: number_words(int(m.group(1))) + _ampm(m, 2), text)
    return _DOTTED_AMPM.sub(lambda m: _ampm(m, 1).lstrip(), text)


def expand_digit_strings(text: str) -> str:
    """Phone numbers, ZIP codes, digit strings with a leading zero and strings of ten or
    more digits, read digit by digit (groups separated by commas)."""
    text = _PHONE.sub(_expand_phone, text)
    text = _ZIP.sub(_expand_zip, text)
    return _DIGIT_STRING.sub(lambda m: digit_words(m.group(0)), text)


def expand_decades(text: str) -> str:
    """``1990s`` -> "nineteen nineties", ``'80s`` / ``80s`` -> "eighties"."""

    def decade(m: re.Match[str]) -> str:
        digits = m.group(1)
        words = year_words(digits) if len(digits) == 4 else number_words(int(digits))
        head, _, last = words.rpartition(" ")
        return (head + " " if head else "") + _engine().plural(last)

    return _DECADE.sub(decade, text)


def _count(number: str) -> str:
    """An integer as a count (never a year: 2500 -> "two thousand five hundred"); a
    decimal as it is, for the decimal rule."""
    return number_words(int(number)) if number.isdigit() else number


def expand_numbers(text: str) -> str:
    """Spell out every number in `text`: times, digit strings, currency, percentages,
    decimals, ordinals, ranges, years and integers (see the module docstring)."""
    text = expand_times(text)
    text = expand_digit_strings(text)
    text = _GROUPED.sub(lambda m: number_words(int(m.group(0).replace(",", ""))), text)
    text = _COMMA_NUMBER.sub(r"\1", text)
    text = _CURRENCY.sub(_expand_currency, text)
    text = _PERCENT.sub(lambda m: _count(m.group(1)) + " percent", text)
    text = _DECIMAL.sub(lambda m: _decimal_words(m.group(0)), text)
    text = _ORDINAL.sub(lambda m: ordinal_words(int(m.group(1))), text)
    text = _RANGE.sub(_expand_range, text)
    text = _NEGATIVE.sub("minus ", text)
    return _NUMBER.sub(lambda m: year_words(m.group(0)), text)
