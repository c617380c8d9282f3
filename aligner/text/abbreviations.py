"""English abbreviations: their spoken forms, and whether a period after one ends a sentence.

Three kinds, by where they stand (what the sentence splitter needs to know):

- *prefixes* stand before what they name (``Mr.``, ``Dr.``, ``St.``, ``Prof.``, ``e.g.``,
  ``vs.``, ``approx.``): their period never ends a sentence;
- *number prefixes* (``No.``, ``Fig.``, ``Vol.``, ``p.``) are abbreviations only before a
  number; otherwise the word is a plain word ("I said no. Then ...");
- *terminals* can end a sentence (``etc.``, ``Inc.``, ``Jr.``, months ``Jan.``, days
  ``Mon.``, units after a number ``5 min.``, and dotted ``p.m.``): their period ends a
  sentence only when the next word starts with a capital letter.

Expansion keeps a leading capital (``Dr.`` -> "Doctor") and the period of a terminal
that ends a sentence (``etc. The`` -> "et cetera. The"). Months and days are expanded
only when capitalized (``Sat.`` -> "Saturday", but "he sat."); units only after a number,
singular after 1 (``1 min.`` -> "1 minute", ``5 ft.`` -> "5 feet").
"""

from __future__ import annotations

import re

PREFIXES = {
    "mr": "mister",
    "mrs": "missus",
    "ms": "miz",
    "dr": "doctor",
    "drs": "doctors",
    "prof": "professor",
    "rev": "reverend",
    "hon": "honorable",
    "gen": "general",
    "col": "colonel",
    "capt": "captain",
    "lt": "lieutenant",
    "sgt": "sergeant",
    "maj": "major",
    "cpl": "corporal",
    "adm": "admiral",
    "gov": "governor",
    "sen": "senator",
    "rep": "representative",
    "pres": "president",
    "st": "saint",
    "mt": "mount",
    "ft": "fort",
    "messrs": "messieurs",
    "supt": "superintendent",
    "approx": "approximately",
    "vs": "versus",
    "cf": "compare",
    "viz": "namely",
    "e.g": "for example",
    "i.e": "that is",
}
NUMBER_PREFIXES = {
    "no": "number",
    "nos": "numbers",
    "fig": "figure",
    "figs": "figures",
    "vol": "volume",
    "ch": "chapter",
    "p": "page",
    "pp": "pages",
    "sec": "section",
    "art": "article",
    "apt": "apartment",
    "eq": "equation",
    "ca": "circa",
}
TERMINALS = {
    "etc": "et cetera",
    "inc": "incorporated",
    "ltd": "limited",
    "co": "company",
    "corp": "corporation",
    "bros": "brothers",
    "jr": "junior",
    "sr": "senior",
    "esq": "esquire",
    "dept": "department",
    "govt": "government",
    "ave": "avenue",
    "blvd": "boulevard",
    "rd": "road",
    "hwy": "highway",
    "al": "al",
}
MONTHS = {
    "Jan": "January",
    "Feb": "February",
    "Mar": "March",
    "Apr": "April",
    "Jun": "June",
    "Jul": "July",
    "Aug": "August",
    "Sep": "September",
    "Sept": "September",
    "Oct": "October",
    "Nov": "November",
    "Dec": "December",
}
DAYS = {
    "Mon": "Monday",
    "Tue": "Tuesday",
    "Tues": "Tuesday",
    "Wed": "Wednesday",
    "Thu": "Thursday",
    "Thur": "Thursday",
    "Thurs": "Thursday",
    "Fri": "Friday",
    "Sat": "Saturday",
    "Sun": "Sunday",
}
# unit (case-sensitive, as written after a number) -> (singular, plural)
UNITS = {
    "min": ("minute", "minutes"),
    "mins": ("minute", "minutes"),
    "sec": ("second", "seconds"),
    "secs": ("second", "seconds"),
    "hr": ("hour", "hours"),
    "hrs": ("hour", "hours"),
    "ms": ("millisecond", "milliseconds"),
    "ft": ("foot", "feet"),
    "in.": ("inch", "inches"),
    "yd": ("yard", "yards"),
    "yds": ("yard", "yards"),
    "mi": ("mile", "miles"),
    "lb": ("pound", "pounds"),
    "lbs": ("pound", "pounds"),
    "oz": ("ounce", "ounces"),
    "kg": ("kilogram", "kilograms"),
    "g": ("gram", "grams"),
    "mg": ("milligram", "milligrams"),
    "km": ("kilometer", "kilometers"),
    "cm": ("centimeter", "centimeters"),
    "mm": ("millimeter", "millimeters"),
    "m": ("meter", "meters"),
    "ml": ("milliliter", "milliliters"),
    "gal": ("gallon", "gallons"),
    "mph": ("mile per hour", "miles per hour"),
    "km/h": ("kilometer per hour", "kilometers per hour"),
    "kph": ("kilometer per hour", "kilometers per hour"),
    "Hz": ("hertz", "hertz"),
    "kHz": ("kilohertz", "kilohertz"),
    "KB": ("kilobyte", "kilobytes"),
    "MB": ("megabyte", "megabytes"),
    "GB": ("gigabyte", "gigabytes"),
    "TB": ("terabyte", "terabytes"),
    "°C": ("degree Celsius", "degrees Celsius"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    "°": ("degree", "degrees"),
}

_UNIT_NAMES = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_UNIT = re.compile(rf"(\d+(?:[.,]\d+)*)\s?({_UNIT_NAMES})(?:(?<=\.)|\b|(?<=°))(\.?)")
_KEEP_PERIOD = re.compile(r"\s+[\"'(\[]?[A-Z]|\s*$")  # what follows a sentence's last period
_DOTTED = re.compile(r"[a-z](?:\.[a-z])+")  # p.m., a.m. (without the final period)
_STREET = re.compile(r"\b([A-Z][a-z]+\s+)(St|Dr)\.(?!\s+[A-Z\d])")


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_PREFIX = re.compile(rf"\b({_alternation(PREFIXES)})\.", re.IGNORECASE)
_NUMBER_PREFIX = re.compile(rf"\b({_alternation(NUMBER_PREFIXES)})\.(?=\s*\d)", re.IGNORECASE)
_TERMINAL = re.compile(rf"\b({_alternation(TERMINALS)})\.", re.IGNORECASE)
_CALENDAR = re.compile(rf"\b({_alternation({**MONTHS, **DAYS})})(?:\.|(?=\s+\d))")
_VERSUS = re.compile(r"\bvs\b", re.IGNORECASE)


def _cased(abbr: str, full: str) -> str:
    """`full` with a capital first letter when `abbr` has one."""
    return full[:1].upper() + full[1:] if abbr[:1].isupper() else full


def _period(m: re.Match[str]) -> str:
    """ "." when the abbreviation ends its sentence (end of text or a capital next)."""
    return "." if m.group(0).endswith(".") and _KEEP_PERIOD.match(m.string, m.end()) else ""


def expand_units(text: str) -> str:
    """Units after a number: ``5 ft.`` -> "5 feet", ``1 min`` -> "1 minute", ``30 °C``
    -> "30 degrees Celsius"."""

    def unit(m: re.Match[str]) -> str:
        singular, plural = UNITS[m.group(2)]
        return f"{m.group(1)} {singular if m.group(1) == '1' else plural}{_period(m)}"

    return _UNIT.sub(unit, text)


def expand_abbreviations(text: str) -> str:
    """Spell out the abbreviations of this module's tables (``Mr.`` -> "Mister", ``Jan.``
    -> "January", ``No. 5`` -> "Number 5", ``etc.`` -> "et cetera", ``Main St.`` -> "Main
    Street"); units after numbers are `expand_units`' work."""
    street = {"St": "Street", "Dr": "Drive"}
    text = _STREET.sub(lambda m: m.group(1) + street[m.group(2)] + _period(m), text)
    text = _PREFIX.sub(lambda m: _cased(m.group(1), PREFIXES[m.group(1).lower()]), text)
    text = _NUMBER_PREFIX.sub(
        lambda m: _cased(m.group(1), NUMBER_PREFIXES[m.group(1).lower()]), text
    )
    text = _TERMINAL.sub(
        lambda m: _cased(m.group(1), TERMINALS[m.group(1).lower()]) + _period(m), text
    )
    calendar = {**MONTHS, **DAYS}
    text = _CALENDAR.sub(lambda m: calendar[m.group(1)] + _period(m), text)
    return _VERSUS.sub("versus", text)


def _is_number(word: str) -> bool:
    return bool(re.fullmatch(r"[$£€]?\d[\d.,:]*", word))


_ORDINAL_NEXT = re.compile(r"\s*(?:\d|(?=[^\W\d_])(?!\w*[A-Z]))")  # a digit or a lowercase word


def ends_sentence(word: str, previous: str, following: str) -> bool:
    """Whether the period after `word` ends a sentence, `word` written without its final
    period (``"Dr"``, ``"e.g"``, ``"J"``), `previous` the word before it and `following`
    the text after the period (with its leading whitespace). See the module docstring."""
    bare = word.lstrip("\"'([{")
    lower = bare.lower()
    capital_next = re.match(r"\s*[\"'(\[]?[A-Z]", following) is not None
    if _is_number(previous) and (bare in UNITS or f"{bare}." in UNITS):
        return capital_next  # a unit: 6 ft. Tall men ...
    if lower in PREFIXES or re.fullmatch(r"[A-Za-z]|(?:[A-Z]\.)+[A-Z]", bare):
        return False  # initials: J. Smith, the U.S. Army
    if lower in NUMBER_PREFIXES and re.match(r"\s*\d", following):
        return False
    if bare.isdigit() and _ORDINAL_NEXT.match(following):
        return False  # an ordinal written with a period: 1. 5. 2024, 28. října
    terminal = lower in TERMINALS or bare in MONTHS or bare in DAYS
    if terminal or _DOTTED.fullmatch(bare):
        return capital_next
    return True
