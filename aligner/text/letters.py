"""Words of any script in regular expressions.

Python's ``\\w`` holds letters and digits but not the combining marks that many scripts
write their vowels with (Devanagari's ``ा``, Telugu's ``్``, Thai's ``ั``): a pattern of
``\\w`` cuts ``भारत`` into ``भ`` and ``रत``. `word_pattern` matches a word as its
writers see it: letters with their marks, and apostrophes inside it (``don't``,
``M’agrada``).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

APOSTROPHES = "'\u2019\u02bc"  # ' ’ ʼ


def ascii_base(char: str) -> str:
    """An accented Latin letter's ASCII base (``é`` -> ``e``, how an English reader says
    it); any other character unchanged (``ß``, ``ж``)."""
    if char.isascii():
        return char
    base = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
    return base if base.isalnum() else char


@cache
def _marks() -> str:
    """The body of a character class holding every combining mark (categories Mn, Mc,
    Me), as ranges."""
    runs: list[tuple[int, int]] = []
    for cp in range(sys.maxunicode + 1):
        if unicodedata.category(chr(cp))[0] == "M":
            if runs and runs[-1][1] == cp - 1:
                runs[-1] = (runs[-1][0], cp)
            else:
                runs.append((cp, cp))
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs
    )


@cache
def word_pattern(digits: bool = False) -> re.Pattern[str]:
    """A word: a run of letters (and digits, with `digits`) with their combining marks,
    apostrophes allowed between them. A mark may not start it."""
    first = r"[^\W_]" if digits else r"[^\W\d_]"
    char = rf"(?:{first}|[{_marks()}])"
    return re.compile(rf"{first}{char}*(?:[{APOSTROPHES}]{char}+)*")
