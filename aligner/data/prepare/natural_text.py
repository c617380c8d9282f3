"""Natural English sentences for a reference corpus: from a text file the user gives (one
sentence a line, used as it is), or from Debian's ``fortunes`` files (package
``fortunes``; quotations, offline).

From the fortunes, a sentence is kept when it is plain prose that a synthesizer reads word
for word and every tokenizer covers: 5 to 20 words, only ASCII letters, spaces, ``, . ; :
! ?`` and apostrophes inside words, ending in ``.``, ``!`` or ``?``, no word in capitals
(an acronym is spelled out letter by letter), no blocked word, every word in CMUdict (so
the ``arpabet`` tokenizer covers it too). The selection is deterministic for a seed.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from aligner.data.prepare.sentences import BLOCKED
from aligner.text.letters import word_pattern
from aligner.text.tokenizers import cmudict_lexicon

FORTUNE_DIR = Path("/usr/share/games/fortunes")
_PLAIN = re.compile(r"[A-Z][A-Za-z ,.;:!?']*[.!?]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def text_words(text: str) -> list[str]:
    """The words of `text` (letters of any script with their marks, inner apostrophes), in
    order."""
    return word_pattern().findall(text)


def fortune_entries(folder: Path = FORTUNE_DIR) -> list[str]:
    """Every quotation of the fortune files in `folder` (not its subfolders: Debian keeps
    the offensive ones in ``off/``), attribution lines (``-- Name``) left out, whitespace
    collapsed; sorted by file name, in file order."""
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder} does not exist: install Debian's fortunes (apt-get install fortunes) "
            "or give the sentences with --text FILE"
        )
    entries = []
    for path in sorted(folder.iterdir()):
        if not path.is_file() or path.suffix in (".dat", ".u8") or path.name.startswith("."):
            continue
        raw = path.read_bytes().decode("utf-8", errors="replace")
        for entry in re.split(r"\n%\n", raw):
            lines = [ln for ln in entry.splitlines() if not ln.strip().startswith("--")]
            entries.append(" ".join(" ".join(lines).split()))
    return entries


def plain_sentence(sentence: str, lexicon: dict[str, object]) -> bool:
    """Whether `sentence` is kept (see the module docstring)."""
    if (
        not _PLAIN.fullmatch(sentence)
        or re.search(r"[.!?:;,]\S", sentence)
        or re.search(r"(^|[^A-Za-z])'|'($|[^A-Za-z])", sentence)
    ):
        return False
    words = text_words(sentence)
    if not 5 <= len(words) <= 20:
        return False
    lower = sentence.lower()
    if any(b in lower for b in BLOCKED):
        return False
    if any(len(w) > 1 and w.isupper() for w in words):
        return False
    return all(w.lower() in lexicon for w in words)


def fortune_sentences(n: int, seed: int = 0, folder: Path = FORTUNE_DIR) -> list[str]:
    """`n` distinct plain sentences of the fortunes (fewer when there are not so many),
    chosen with `seed`."""
    lexicon = cmudict_lexicon()
    found: dict[str, None] = {}
    for entry in fortune_entries(folder):
        for sentence in _SENTENCE_END.split(entry):
            if plain_sentence(sentence, lexicon):
                found.setdefault(sentence)
    sentences = list(found)
    random.Random(seed).shuffle(sentences)
    return sentences[:n]
