"""Long recordings with their whole text, the parts that need no model: the coarse search
that finds each sentence's span in a window of audio (`coarse_search`), and where the
recording is cut between sentences (`cut_between`).

The coarse search runs over the frames of one window of audio and a state graph built from
the window's sentences (`SentenceGraph`): the tokens of each sentence in order, and before
each sentence a *filler* state that takes audio the text does not hold. A token's score at
a frame is the model's log-probability of that token there; the filler's is the best
token's minus ``filler_margin`` (an online garbage model: speech the text holds is
cheaper on its own tokens, speech it does not hold is cheaper as filler than on any wrong
token); where no token is much likelier than the others (within a nat of the uniform
log-probability: music, noise, a language the model does not know) the filler takes the
frame. A path moves forward through a sentence as the monotonic search does (optional
tokens may be passed over), from a sentence's end to the next filler or the next
sentence, and from a filler past the next sentence to the filler after it at
``skip_penalty``: a sentence the audio does not hold. Inside a sentence, a *word filler*
between two words takes audio there that the text does not hold (inserted speech) or,
at ``word_penalty``, stands for the next word (a wrong word in the text: its sounds are
passed over), so that one wrong word does not push its sentence's span off its audio (the
coarse path gave a sentence's first words to the filler and squeezed them into the audio
after the wrong word). It starts in the first filler or sentence and may end anywhere (the
window's audio and text end at different places).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from aligner.alignment.tiers import word_runs

NEG = -1e30


@dataclass
class SentenceGraph:
    """The states of one window: for sentence ``k`` (of the window) its filler state
    ``filler[k]`` followed by its tokens ``first[k] .. first[k] + length[k] - 1``; one last
    filler after the last sentence; then the word fillers (``words[k]``: each word's
    first and last token state, ``word_filler[k]``: the filler before each word, none in
    a sentence of one word; their frames belong to the sentence's span). ``sentence[s]``:
    the sentence of state ``s`` (the filler before it counts as it); ``is_filler[s]``
    (both kinds of filler); ``optional[s]``: a token the path may pass over."""

    first: np.ndarray
    length: np.ndarray
    filler: np.ndarray
    sentence: np.ndarray
    is_filler: np.ndarray
    optional: np.ndarray
    words: list[list[tuple[int, int]]]
    word_filler: list[list[int]]

    @classmethod
    def build(cls, optional_per_sentence: list[np.ndarray]) -> SentenceGraph:
        """The graph of sentences whose tokens' optional flags are given, in order (a word:
        a run of tokens that are not optional)."""
        first, filler, sentence, is_filler, optional = [], [], [], [], []
        for k, opt in enumerate(optional_per_sentence):
            filler.append(len(sentence))
            sentence.append(k), is_filler.append(True), optional.append(False)
            first.append(len(sentence))
            sentence += [k] * len(opt)
            is_filler += [False] * len(opt)
            optional += [bool(o) for o in opt]
        filler.append(len(sentence))
        sentence.append(len(optional_per_sentence)), is_filler.append(True), optional.append(False)
        words, word_filler = [], []
        for k, opt in enumerate(optional_per_sentence):
            words.append([(a + first[k], b + first[k]) for a, b in word_runs(opt)])
            n = len(words[k]) if len(words[k]) > 1 else 0  # one word: no filler
            word_filler.append(list(range(len(sentence), len(sentence) + n)))
            sentence += [k] * len(word_filler[k])
            is_filler += [True] * len(word_filler[k])
            optional += [False] * len(word_filler[k])
        lengths = [len(o) for o in optional_per_sentence]
        arrays = (first, lengths, filler, sentence, is_filler, optional)
        return cls(*(np.asarray(a) for a in arrays), words, word_filler)

    @property
    def between(self) -> np.ndarray:
        """``(states,)`` bool: the fillers between sentences (not those between words)."""
        out = np.zeros(self.n_states, bool)
        out[self.filler] = True
        return out

    @property
    def n_states(self) -> int:
        return len(self.sentence)

    def edges(
        self, skip_penalty: float, word_penalty: float = 0.0
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, penalty)`` of every move between two states (staying is implied);
        ``word_penalty``: a word filler standing for the next word."""
        src, dst, pen = self._word_edges(word_penalty)
        for k, (a, n) in enumerate(zip(self.first, self.length)):
            opt = self.optional[a : a + n]
            starts = _run_ends(opt, from_start=True)  # where a path may enter the sentence
            ends = _run_ends(opt, from_start=False)  # where it may leave it
            for j in starts:
                src.append(self.filler[k]), dst.append(a + j), pen.append(0.0)
            for j in range(n):  # forward moves inside, over optional tokens
                for g in range(j + 1, n):
                    src.append(a + j), dst.append(a + g), pen.append(0.0)
                    if not opt[g]:
                        break
            nxt = self.filler[k + 1]
            next_starts = (
                [
                    self.first[k + 1] + j
                    for j in _run_ends(
                        self.optional[self.first[k + 1] :][: self.length[k + 1]], True
                    )
                ]
                if k + 1 < len(self.first)
                else []
            )
            for j in ends:
                src.append(a + j), dst.append(nxt), pen.append(0.0)
                for s in next_starts:
                    src.append(a + j), dst.append(s), pen.append(0.0)
            src.append(self.filler[k]), dst.append(nxt), pen.append(skip_penalty)
        return np.asarray(src), np.asarray(dst), np.asarray(pen, np.float64)

    def _word_edges(self, word_penalty: float) -> tuple[list[int], list[int], list[float]]:
        """The moves through the word fillers of a sentence of two words or more: the
        filler before word ``j`` > 0 is entered from the end of word ``j - 1`` (or the
        optional tokens after it) and left to word ``j`` (inserted audio) or, at
        `word_penalty`, to word ``j + 1`` (the next filler after the sentence's last word):
        word ``j`` passed over; the filler before word 0 is entered from the sentence's
        filler and left, at `word_penalty`, to word 1. No two words in a row are passed
        over, so a sentence is never passed over word by word."""
        src, dst, pen = [], [], []
        for k, (words, fillers) in enumerate(zip(self.words, self.word_filler)):
            if not fillers:
                continue
            src += [self.filler[k], fillers[0]]
            dst += [fillers[0], words[1][0]]
            pen += [0.0, word_penalty]
            for j in range(1, len(words)):
                w = fillers[j]
                for s in range(words[j - 1][1], words[j][0]):
                    src.append(s), dst.append(w), pen.append(0.0)
                after = words[j + 1][0] if j + 1 < len(words) else self.filler[k + 1]
                src += [w, w]
                dst += [words[j][0], after]
                pen += [0.0, word_penalty]
        return src, dst, pen


def _run_ends(optional: np.ndarray, from_start: bool) -> list[int]:
    """Indices a path may enter a sentence at (`from_start`: every optional token before the
    first required one and that one) or leave it from (the last required one and after)."""
    n = len(optional)
    order = range(n) if from_start else range(n - 1, -1, -1)
    out = []
    for j in order:
        out.append(j)
        if not optional[j]:
            break
    return out


def coarse_search(
    log_probs: np.ndarray,
    graph: SentenceGraph,
    filler_margin: float = 2.0,
    skip_penalty: float = -40.0,
    silent: np.ndarray | None = None,
    word_penalty: float = -10.0,
    free_start: bool = False,
) -> np.ndarray:
    """The state of every frame (``(T,)``) on the best path through ``log_probs (T, N)``
    (the model's log-probabilities of the window's tokens, sentence after sentence, in the
    order of the graph's token states) and `graph` (see the module docstring). ``silent
    (T,)``: the frames in a pause, which the filler between sentences takes at no margin (a
    pause between sentences belongs to none; a word filler pays its margin there too, so
    that the pause before a sentence stays between sentences). The path may end in any
    state; with `free_start` it may also begin at any token of the first sentence (a
    recording that begins inside it: `words_missed`), else at its start or the filler
    before it."""
    lp = np.asarray(log_probs, np.float64)
    t_max = lp.shape[0]
    emit = np.empty((t_max, graph.n_states))
    tokens = ~graph.is_filler
    emit[:, tokens] = lp
    emit[:, graph.is_filler] = filler_log_probs(lp, filler_margin)[:, None]  # a word filler's
    emit[:, graph.between] = filler_log_probs(lp, filler_margin, silent)[:, None]
    src, dst, pen = graph.edges(skip_penalty, word_penalty)
    inner = (
        (graph.sentence[src] == graph.sentence[dst]) & ~graph.is_filler[src] & ~graph.is_filler[dst]
    )
    shifts = []  # the moves inside a sentence, by how far they go: one shift each
    for gap in np.unique(dst[inner] - src[inner]):
        allowed = np.zeros(graph.n_states, bool)
        allowed[dst[inner & (dst - src == gap)]] = True
        shifts.append((int(gap), allowed))
    src, dst, pen = src[~inner], dst[~inner], pen[~inner]  # into fillers and sentences
    into, from_table, pen_table = _in_edges(src, dst, pen, graph.n_states)
    score = np.full(graph.n_states, NEG)
    entry = [graph.filler[0]]
    if len(graph.first):
        head = graph.optional[graph.first[0] :][: graph.length[0]]
        starts = range(len(head)) if free_start else _run_ends(head, True)
        entry += [graph.first[0] + j for j in starts]
    score[entry] = emit[0, entry]
    back = np.zeros((t_max, graph.n_states), np.int32)
    idx = np.arange(graph.n_states)
    for t in range(1, t_max):
        best, arg = score.copy(), idx.copy()
        for gap, allowed in shifts:
            cand = np.full(graph.n_states, NEG)
            cand[gap:] = score[:-gap]
            move = allowed & (cand > best)
            best[move], arg[move] = cand[move], idx[move] - gap
        vals = np.append(score, NEG)[from_table] + pen_table  # (destinations, sources)
        pick = vals.shape[1] - 1 - vals[:, ::-1].argmax(1)  # the last of the best
        cand = vals[np.arange(len(into)), pick]
        move = cand > best[into]
        best[into[move]], arg[into[move]] = cand[move], from_table[move, pick[move]]
        back[t] = arg
        score = best + emit[t]
    path = np.empty(t_max, np.int64)
    cur = int(np.argmax(score))
    for t in range(t_max - 1, -1, -1):
        path[t] = cur
        cur = back[t, cur]
    return path


def filler_log_probs(
    log_probs: np.ndarray, filler_margin: float, silent: np.ndarray | None = None
) -> np.ndarray:
    """``(T,)``: the filler's score at each frame of ``log_probs (T, N)`` (see the module
    docstring): the best token's minus `filler_margin`, at no margin on the frames
    ``silent (T,)`` (a pause is free between sentences), and never below the score of a
    frame where no token is likelier than the rest."""
    lp = np.asarray(log_probs, np.float64)
    margin = np.full(lp.shape[0], float(filler_margin))
    if silent is not None:
        margin[np.asarray(silent, bool)] = 0.0
    flat = 1.0 - np.log(max(lp.shape[1], 1))
    return np.maximum(lp.max(1) - margin, flat)


def _in_edges(
    src: np.ndarray, dst: np.ndarray, pen: np.ndarray, n_states: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The moves ``src -> dst`` at ``pen`` by destination: ``(destinations (D,), their
    sources (D, W), penalties (D, W))``, each row in the moves' order, padded at the front
    with state `n_states` (a score of `NEG`) at no penalty; a frame's best move into each
    destination is then one maximum over a row (no sort of every move)."""
    into = np.unique(dst)
    rows = [np.flatnonzero(dst == d) for d in into]
    width = max((len(r) for r in rows), default=1)
    sources = np.full((len(into), width), n_states)
    penalties = np.zeros((len(into), width))
    for i, r in enumerate(rows):
        sources[i, width - len(r) :], penalties[i, width - len(r) :] = src[r], pen[r]
    return into, sources, penalties


@dataclass
class SentenceSpan:
    """A sentence of the window in the coarse path: ``start``/``end`` frames (end
    exclusive) of its tokens, or None when the path passed it over."""

    index: int
    start: int | None
    end: int | None


def sentence_spans(
    path: np.ndarray, graph: SentenceGraph, final: bool = False
) -> list[SentenceSpan]:
    """Each sentence's span (its required tokens) in a coarse `path` (`coarse_search`), in
    order; the sentences the path never reached are left out, so is the last one it
    reached when it ends in it (its end is not known), unless the window is `final` (the
    audio ends there: every sentence is listed, those not reached without a span)."""
    out = []
    inside = graph.is_filler & ~graph.between  # word fillers: the sentence's audio too
    on_token = (~graph.is_filler[path] & ~graph.optional[path]) | inside[path]
    which = graph.sentence[path]
    last = int(which[-1])
    ended_inside = not graph.between[path[-1]]
    for k in range(len(graph.first)):
        if not final and (k > last or (k == last and ended_inside)):
            break
        frames = np.flatnonzero(on_token & (which == k))
        if len(frames):
            out.append(SentenceSpan(k, int(frames[0]), int(frames[-1]) + 1))
        else:
            out.append(SentenceSpan(k, None, None))
    return out


def words_reached(path: np.ndarray, graph: SentenceGraph) -> tuple[int, int] | None:
    """``(sentence, words)`` where a `path` ends inside a sentence before its last word: the
    sentence and how many of its words the path reached, the last of them perhaps cut
    (a recording that stops in the middle of a sentence: the search may end anywhere, and
    ends where the audio does rather than squeeze the words it lacks into its last frames);
    None where it ends between sentences or in a sentence's last word."""
    if not len(path):
        return None
    state = int(path[-1])
    if graph.between[state]:
        return None
    k = int(graph.sentence[state])
    words = graph.words[k]
    if graph.is_filler[state]:  # the filler before word j: words 0 .. j - 1 reached
        reached = graph.word_filler[k].index(state)
    else:
        reached = sum(1 for first, _ in words if first <= state)
    return (k, reached) if reached < len(words) else None


def words_missed(path: np.ndarray, graph: SentenceGraph) -> int | None:
    """How many words of the first sentence a `path` (`coarse_search` with ``free_start``)
    passes by where it begins inside that sentence after its first word: the words before
    the one it begins in (which may be cut); None where it begins before the sentence or in
    its first word. The mirror of `words_reached`: a recording that begins in the middle of
    a sentence."""
    if not len(path) or not len(graph.first):
        return None
    state = int(path[0])
    if graph.is_filler[state] or graph.sentence[state] != 0:
        return None
    missed = sum(1 for _, last in graph.words[0] if last < state)
    return missed or None


def filler_runs(
    path: np.ndarray, graph: SentenceGraph, sound: np.ndarray, min_frames: int
) -> list[tuple[int, int]]:
    """``[(start, end)]`` frames of the runs of filler in `path` with at least `min_frames`
    frames of sound (``sound (T,)`` bool): audio the text does not hold (trimmed to its
    first and last frame of sound)."""
    filler = graph.between[path]
    runs, t, n = [], 0, len(path)
    while t < n:
        if not filler[t]:
            t += 1
            continue
        e = t
        while e < n and filler[e]:
            e += 1
        voiced = np.flatnonzero(sound[t:e])
        if len(voiced) >= min_frames:
            runs.append((t + int(voiced[0]), t + int(voiced[-1]) + 1))
        t = e
    return runs


def cut_between(end: int, start: int, pauses: np.ndarray | None) -> int:
    """Where to cut the audio between one part ending at frame `end` and the next starting
    at `start`: the middle of the longest pause between them, else half way."""
    if start <= end:
        return start
    if pauses is not None:
        gap = np.asarray(pauses[end:start], bool)
        best, best_len, t = None, 0, 0
        while t < len(gap):
            if gap[t]:
                e = t
                while e < len(gap) and gap[e]:
                    e += 1
                if e - t > best_len:
                    best, best_len = (t + e) // 2, e - t
                t = e
            else:
                t += 1
        if best is not None:
            return end + best
    return (end + start) // 2


def attach_extra(
    spans: dict[int, tuple[int, int]],
    extra: list[tuple[int, int]],
    pauses: np.ndarray | None,
    min_frames: int,
) -> tuple[dict[int, tuple[int, int]], list[tuple[int, int]]]:
    """``(spans, extra)`` with the speech that runs on from a sentence's span into a run of
    audio the text does not hold (``extra``: ``(start, end)`` frames), with no pause frame
    (``pauses (T,)``) between, made the sentence's, up to the run's first pause (its last,
    for a run that runs into the sentence's start): a wrong first or last word, which the
    fine pass aligns and `word_scores` reports. The coarse path gives such a word's audio to
    the filler between sentences as readily as to the sentence's word filler (both score
    alike) and squeezes the word's tokens against its neighbour. What is left of a run
    stays extra where it holds `min_frames` frames or more. Without `pauses` nothing
    changes."""
    if pauses is None:
        return spans, extra
    quiet = np.asarray(pauses, bool)
    spans, kept = dict(spans), []
    for start, end in extra:
        for k, (a, b) in spans.items():
            if b <= start and not quiet[b:start].any():
                silent = np.flatnonzero(quiet[start:end])
                cut = start + int(silent[0]) if silent.size else end
                spans[k], start = (a, cut), cut
            elif end <= a and not quiet[end:a].any():
                silent = np.flatnonzero(quiet[start:end])
                cut = start + int(silent[-1]) + 1 if silent.size else start
                spans[k], end = (cut, b), cut
        sound = np.flatnonzero(~quiet[start:end])
        if sound.size >= min_frames:
            kept.append((start + int(sound[0]), start + int(sound[-1]) + 1))
    return spans, kept


SQUEEZED = 2  # frames a token: a word the path went on to after a word filler, squeezed


def passed_words(path: np.ndarray, graph: SentenceGraph) -> list[tuple[int, int, int, int]]:
    """``[(sentence, word, start, end)]``: the words of the window's sentences that the
    coarse `path` reached through a word filler, with the frames ``[start, end)`` that
    stand for them: the filler's where it passed the word over, the filler's and the
    word's own where it went on to the word (the audio before a word that the text does
    not hold is that word's as likely as inserted speech: the path gave a wrong word's
    audio to the filler and its tokens one frame after it as readily as it passed it
    over), unless the word then holds more than `SQUEEZED` frames a token (a word said
    after inserted audio). A filler the window ends in is left out (where it leads is not
    known), so is a sentence's last word passed over: the path leaves the word filler for
    the filler after the sentence, which takes the same audio at the same score, anywhere
    in the word's audio, and the word's frames are not known."""
    change = np.flatnonzero(np.diff(path)) + 1
    starts, ends = np.concatenate([[0], change]), np.concatenate([change, [len(path)]])
    inside = graph.is_filler & ~graph.between
    out = []
    for a, b in zip(starts, ends):
        state = int(path[a])
        if not inside[state] or b >= len(path):
            continue
        k = int(graph.sentence[state])
        j = graph.word_filler[k].index(state)
        if j == len(graph.words[k]) - 1 and path[b] != graph.words[k][j][0]:
            continue  # the last word passed over: the filler after the sentence scores alike
        first, last = graph.words[k][j]
        if j > 0 and path[b] == first:  # on to its own word: the word's frames too
            e = b
            while e < len(path) and first <= path[e] <= last:
                e += 1
            if e - b > SQUEEZED * (last - first + 1):  # the word said after inserted audio
                continue
            b = e
        out.append((k, j, int(a), int(b)))
    return out


def hold_edge_words(
    spans: dict[int, tuple[int, int]],
    extra: list[tuple[int, int]],
    wrong: dict[int, list[tuple[int, int, bool]]],
    max_pause: int,
    max_run: int,
    skipped: Collection[int] = (),
) -> tuple[
    dict[int, tuple[int, int]], list[tuple[int, int]], dict[int, list[tuple[int, int, int, int]]]
]:
    """``(spans, extra, held)``: a sentence's first or last word found unlike its audio
    (``wrong``: ``{sentence: [(first token, last token, last word?)]}``) given the run of
    audio the text does not hold (``extra``, ``(start, end)`` frames) that lies at most
    `max_pause` frames before its first word or after its last, with no other sentence
    between, when the run is at most `max_run` frames long: the sentence's span is made to
    take it in, the run is no longer extra, and ``held`` (``{sentence: [(first token, last
    token, start, end)]}``, as `passed_words` gives) holds the word to it. A wrong word
    said after a pause (or before one) is as likely to the coarse search as no word plus
    audio that the text lacks, and the fine pass squeezes the word's tokens into its
    neighbour's sound; `attach_extra` takes in the runs with no pause between. Not where
    the sentence on that side is one the audio was found not to hold (`skipped`): the run
    may be that sentence, said too unlike its text to be found. A sentence of one word
    may list it twice (both edges): the first run found holds it."""
    spans, extra = dict(spans), list(extra)
    held: dict[int, list[tuple[int, int, int, int]]] = {}
    for k, words in sorted(wrong.items()):
        for first, last, at_end in words:
            if any(f == first for f, *_ in held.get(k, [])):
                continue  # a sentence of one word: held on one side
            if (k + 1 if at_end else k - 1) in skipped:
                continue
            a, b = spans[k]
            near = [
                (s, e)
                for s, e in extra
                if e - s <= max_run
                and (0 <= s - b <= max_pause if at_end else 0 <= a - e <= max_pause)
                and not any(
                    j != k and (b <= s0 < s if at_end else e < e0 <= a)
                    for j, (s0, e0) in spans.items()
                )
            ]
            if not near:
                continue
            s, e = min(near) if at_end else max(near)
            extra.remove((s, e))
            spans[k] = (a, e) if at_end else (s, b)
            held.setdefault(k, []).append((first, last, s, e))
    return spans, extra, held
