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

from collections.abc import Sequence
from functools import cache

from aligner.text.metrics import edit_distance as token_edit_distance

STRESS = "ˈˌ"
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


def split_merged(
    words: Sequence[Sequence[str]], text_words: Sequence[str], alone: dict[str, Sequence[str]]
) -> list[list[str]]:
    """The phonemized `words` (each a list of phones, punctuation at its end) regrouped as
    one word per text word when eSpeak merged some (`words` unchanged otherwise, or when no
    grouping fits). `alone`: each text word's phones said alone."""
    n, k = len(words), len(text_words)
    if n >= k or k > n * MAX_RUN or any(w not in alone for w in text_words):
        return [list(w) for w in words]
    inf = float("inf")
    # cost[i][j]: phonemized words [:i] for text words [:j]; back[i][j]: the run taken
    cost = [[inf] * (k + 1) for _ in range(n + 1)]
    back = [[0] * (k + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(1, n + 1):
        for j in range(i, k + 1):
            for run in range(1, min(MAX_RUN, j) + 1):
                if cost[i - 1][j - run] == inf:
                    continue
                said = [p for w in text_words[j - run : j] for p in alone[w]]
                c = cost[i - 1][j - run] + edit_distance(_phones(words[i - 1]), said)
                if c < cost[i][j]:
                    cost[i][j], back[i][j] = c, run
    if cost[n][k] == inf:
        return [list(w) for w in words]
    runs, j = [], k
    for i in range(n, 0, -1):
        runs.append(back[i][j])
        j -= back[i][j]
    out: list[list[str]] = []
    j = 0
    for word, run in zip(words, reversed(runs)):
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
    inf = float("inf")
    # cost[i][j]: phonemized words [:i] for text words [:j]; back[i][j]: the run taken
    cost = [[inf] * (k + 1) for _ in range(n + 1)]
    back = [[0] * (k + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for j in range(1, k + 1):
        for i in range(j, n + 1):
            for run in range(1, min(MAX_RUN, i) + 1):
                if cost[i - run][j - 1] == inf:
                    continue
                said = [p for w in words[i - run : i] for p in _phones(w)]
                c = cost[i - run][j - 1] + edit_distance(said, alone[text_words[j - 1]])
                if c < cost[i][j]:
                    cost[i][j], back[i][j] = c, run
    if cost[n][k] == inf:
        return [list(w) for w in words]
    runs, i = [], n
    for j in range(k, 0, -1):
        runs.append(back[i][j])
        i -= back[i][j]
    out: list[list[str]] = []
    i = 0
    for run in reversed(runs):
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
