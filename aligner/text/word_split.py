"""Word boundaries back where eSpeak NG merged words, or split one.

eSpeak NG joins an unstressed function word to the next word in its phoneme output ("of
the" -> ``ʌvðə``, "to be" -> ``təbi``), so a phonemized sentence can have fewer words than
its text: the words tier of an alignment then cannot pair with a reference's, and the
tokens lose a word boundary. `split_merged` puts the boundaries back: the phonemized words
are matched to runs of the text's words (each phonemized word to one or more consecutive
text words), and a word that stands for several text words is cut where the phones of each
text word, said alone, fit best (edit distance without stress marks). The sentence's own
phones are kept (its reduced forms, "ɐ" for "a"); only separators are added.
`join_split` does the reverse where eSpeak NG says one word of the text as two (Russian
``влюблён``): the runs of phonemized words that best make up each text word become one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from aligner.text.metrics import edit_distance as token_edit_distance

STRESS = "ˈˌ"  # eSpeak NG's primary and secondary stress, before a syllable's vowel
MAX_RUN = 4  # text words one phonemized word may stand for


def _bare(phone: str) -> str:
    return phone.strip(STRESS)


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two phone sequences, stress marks ignored
    (`aligner.text.metrics.edit_distance` of the bare phones)."""
    return token_edit_distance([_bare(p) for p in a], [_bare(p) for p in b])


def _cuts(phones: Sequence[str], alone: Sequence[Sequence[str]]) -> list[list[str]]:
    """`phones` cut into ``len(alone)`` non-empty pieces, each close to its word alone."""
    n, k = len(phones), len(alone)

    @cache
    def best(start: int, word: int) -> tuple[int, tuple[int, ...]]:
        if word == k - 1:
            return edit_distance(phones[start:], alone[word]), (n,)
        options = []
        for end in range(start + 1, n - (k - word - 1) + 1):
            cost, rest = best(end, word + 1)
            options.append((edit_distance(phones[start:end], alone[word]) + cost, (end, *rest)))
        return min(options)

    ends = best(0, 0)[1]
    starts = (0, *ends[:-1])
    return [list(phones[a:b]) for a, b in zip(starts, ends)]


def _runs(units: int, items: int, cost: Callable[[int, int, int], float]) -> list[int] | None:
    """How many of `items` each of `units` takes, in order (each 1 to `MAX_RUN`, all taken),
    at the least total ``cost(unit, first item, end item)``; None when no split fits."""
    inf = float("inf")
    # best[u][i]: units [:u] over items [:i]; back[u][i]: the last unit's run
    best = [[inf] * (items + 1) for _ in range(units + 1)]
    back = [[0] * (items + 1) for _ in range(units + 1)]
    best[0][0] = 0.0
    for u in range(1, units + 1):
        for i in range(u, items + 1):
            for run in range(1, min(MAX_RUN, i) + 1):
                if best[u - 1][i - run] == inf:
                    continue
                c = best[u - 1][i - run] + cost(u - 1, i - run, i)
                if c < best[u][i]:
                    best[u][i], back[u][i] = c, run
    if best[units][items] == inf:
        return None
    runs, i = [], items
    for u in range(units, 0, -1):
        runs.append(back[u][i])
        i -= back[u][i]
    return runs[::-1]


def split_merged(
    words: Sequence[Sequence[str]], text_words: Sequence[str], alone: dict[str, Sequence[str]]
) -> list[list[str]]:
    """The phonemized `words` (each a list of phones, punctuation at its end) regrouped as
    one word per text word when eSpeak merged some (`words` unchanged otherwise, or when no
    grouping fits). `alone`: each text word's phones said alone."""
    n, k = len(words), len(text_words)
    if n >= k or k > n * MAX_RUN or any(w not in alone for w in text_words):
        return [list(w) for w in words]

    def cost(word: int, a: int, b: int) -> float:  # phonemized word for text words [a, b)
        said = [p for w in text_words[a:b] for p in alone[w]]
        return edit_distance(_phones(words[word]), said)

    runs = _runs(n, k, cost)
    if runs is None:
        return [list(w) for w in words]
    out: list[list[str]] = []
    j = 0
    for word, run in zip(words, runs):
        out += _split_one(list(word), [alone[w] for w in text_words[j : j + run]])
        j += run
    return out


def join_split(
    words: Sequence[Sequence[str]], text_words: Sequence[str], alone: dict[str, Sequence[str]]
) -> list[list[str]]:
    """The phonemized `words` regrouped as one word per text word when eSpeak NG split some
    (Russian ``влюблён`` said as ``vɭʲu | bɭʲɵn``): each text word takes a run of one or
    more consecutive phonemized words, chosen so that each run's phones are closest to the
    word said alone, and a run becomes one word. `words` unchanged when eSpeak split none,
    when no grouping fits, or when a run would hold punctuation between its phones."""
    n, k = len(words), len(text_words)
    if n <= k or n > k * MAX_RUN or any(w not in alone for w in text_words):
        return [list(w) for w in words]

    def cost(word: int, a: int, b: int) -> float:  # text word for phonemized words [a, b)
        said = [p for w in words[a:b] for p in _phones(w)]
        return edit_distance(said, alone[text_words[word]])

    runs = _runs(k, n, cost)
    if runs is None:
        return [list(w) for w in words]
    out: list[list[str]] = []
    i = 0
    for run in runs:
        joined = [p for w in words[i : i + run] for p in w]
        inner = [x for x, p in enumerate(joined) if p not in PUNCT]
        if inner and inner[-1] - inner[0] + 1 != len(inner):  # punctuation among its phones
            return [list(w) for w in words]
        out.append(joined)
        i += run
    return out


PUNCT = frozenset(';:,.!?¡¿—…"«»“”()-')


def _phones(word: Sequence[str]) -> list[str]:
    return [p for p in word if p not in PUNCT]


def _split_one(word: list[str], alone: list[Sequence[str]]) -> list[list[str]]:
    """One phonemized word standing for ``len(alone)`` text words, cut; punctuation before
    its phones stays on the first piece, after them on the last (a word with punctuation
    among its phones is left whole)."""
    inner = [i for i, p in enumerate(word) if p not in PUNCT]
    if len(alone) == 1 or len(inner) < len(alone) or inner[-1] - inner[0] + 1 != len(inner):
        return [word]
    head, phones, tail = word[: inner[0]], word[inner[0] : inner[-1] + 1], word[inner[-1] + 1 :]
    pieces = _cuts(phones, alone)
    pieces[0] = head + pieces[0]
    pieces[-1] += tail
    return pieces
