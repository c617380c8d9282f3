"""The text a Festival voice is given: its language's letters in its own encoding.

Festival reads a script as bytes and each voice reads its strings in the encoding its
language uses: a voice states it in its description (``(coding ISO-8859-2)`` for Debian's
Czech voices, `voice_settings`), and one that states none reads ISO-8859-1 (Latin-1).
`speakable` keeps every letter, digit and sign of a sentence as written; a letter or a
sign the voice's encoding cannot hold (``±``, ``→``, an emoji: a reader says them, and so
does a tokenizer that learns from the text) makes the sentence an error that names it
(`UnspeakableText`), never a word quietly spoken without it. Only punctuation, which no
one speaks, is replaced: a typographic quote or dash the encoding lacks becomes its ASCII
form, any other mark a space.

English voices are the one exception: their lexicon and letter-to-sound rules know the
26 ASCII letters, so an accented Latin letter is read as its base letter (``café`` ->
``cafe``, the word an English speaker says); a letter with no ASCII base (``æ``, ``ø``,
Cyrillic) is an error as in any other language.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from aligner.text.letters import ascii_base

DEFAULT_CODING = "ISO-8859-1"
# signs no one speaks that an encoding may lack -> their ASCII form
_ASCII_SIGNS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2026": "...", "\u00a0": " ",
})  # fmt: skip


class UnspeakableText(ValueError):
    """A sentence has a letter or sign the voice's encoding cannot hold (the message names
    it)."""


@dataclass(frozen=True)
class VoiceSetting:
    """A voice's ``language`` (Festival's name: ``english``, ``czech``, ...) and the
    ``coding`` its strings are read in (a Python codec name)."""

    language: str = "english"
    coding: str = DEFAULT_CODING


def parse_descriptions(voices: list[str], printed: str) -> dict[str, VoiceSetting]:
    """Each voice's setting from what ``(print (voice.description 'VOICE))`` printed for
    them (``english`` and ISO-8859-1 where the description names none); ValueError when a
    voice names an encoding Python does not know."""
    found = {}
    for voice in voices:
        fields = _entry(printed, voice)
        language = re.search(r"\(language (\w+)\)", fields)
        coding = re.search(r"\(coding ([\w.-]+)\)", fields)
        setting = VoiceSetting(
            language.group(1).lower() if language else "english",
            coding.group(1) if coding else DEFAULT_CODING,
        )
        try:
            codecs.lookup(setting.coding)
        except LookupError:
            raise ValueError(
                f"Festival voice {voice!r} reads the encoding {setting.coding!r}, "
                "which Python does not know"
            ) from None
        found[voice] = setting
    return found


def _entry(printed: str, voice: str) -> str:
    """The fields of `voice`'s description in `printed` (``(VOICE ((language x) (coding y)
    (description "...") ...))``, in any order; its quoted strings blanked, so that a
    description mentioning ``(coding ...)`` is not read as one); "" when not there."""
    match = re.search(rf"\({re.escape(voice)}\s+\(", printed)
    if match is None:
        return ""
    depth, quoted, out = 1, False, []
    for char in printed[match.end() :]:
        if quoted:
            quoted = char != '"'
            continue
        if char == '"':
            quoted = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                break
        out.append(char)
    return "".join(out)


def _spoken(char: str) -> bool:
    """Whether `char` is read aloud: a letter, a digit or a combining mark."""
    return unicodedata.category(char)[0] in "LNM"


def _sign(char: str) -> bool:
    """Whether `char` is a sign a reader says (``±``, ``€``, ``→``, an emoji: Unicode's
    symbols), not punctuation."""
    return unicodedata.category(char)[0] == "S"


def _fits(char: str, coding: str) -> bool:
    try:
        char.encode(coding)
    except UnicodeEncodeError:
        return False
    return True


def speakable(text: str, setting: VoiceSetting) -> str:
    """`text` as the voice of `setting` is given it (see the module docstring): NFC, letters,
    digits and signs as written (an English voice's accented letters as their ASCII base),
    punctuation the encoding lacks replaced; UnspeakableText naming the letters and signs
    it cannot hold."""
    text = unicodedata.normalize("NFC", text).translate(_ASCII_SIGNS)
    coding = "ascii" if setting.language == "english" else setting.coding
    out, missing = [], []
    for char in text:
        if setting.language == "english" and not _fits(char, coding) and _spoken(char):
            char = ascii_base(char)
        if _fits(char, coding):
            out.append(char)
        elif _spoken(char) or _sign(char):
            missing.append(char)
        else:
            out.append(" ")
    if missing:
        letters = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in dict.fromkeys(missing))
        held = "ASCII letters" if setting.language == "english" else setting.coding
        signs = any(_sign(c) for c in missing)
        raise UnspeakableText(
            f"characters the voice cannot read ({held}, Festival's "
            f"{setting.language} voices read): {letters}; write the sentence in the letters "
            f"of its language{', its signs as words' if signs else ''}"
        )
    return " ".join("".join(out).split())


def scheme_string(text: str, coding: str) -> bytes:
    """A one-line Scheme string literal of `text` in `coding` (backslashes and quotes
    escaped); `text` must fit `coding` (`speakable` makes it so)."""
    flat = " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"')
    return b'"' + flat.encode(coding) + b'"'


def recoded(name: str, coding: str) -> str:
    """A name Festival printed, read as Latin-1 (which maps every byte to one character),
    decoded again in the voice's `coding`."""
    return name.encode("latin-1").decode(coding, errors="replace")
