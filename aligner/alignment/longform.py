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
``skip_penalty``: a sentence the audio does not hold. It starts in the first filler or
sentence and may end anywhere (the window's audio and text end at different places).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NEG = -1e30


@dataclass
class SentenceGraph:
    """The states of one window: for sentence ``k`` (of the window) its filler state
    ``filler[k]`` followed by its tokens ``first[k] .. first[k] + length[k] - 1``; one last
    filler after the last sentence. ``sentence[s]``: the sentence of state ``s`` (the
    filler before it counts as it); ``is_filler[s]``; ``optional[s]``: a token the path
    may pass over."""

    first: np.ndarray
    length: np.ndarray
    filler: np.ndarray
    sentence: np.ndarray
    is_filler: np.ndarray
    optional: np.ndarray

    @classmethod
    def build(cls, optional_per_sentence: list[np.ndarray]) -> SentenceGraph:
        """The graph of sentences whose tokens' optional flags are given, in order."""
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
        lengths = [len(o) for o in optional_per_sentence]
        return cls(
            *(np.asarray(a) for a in (first, lengths, filler, sentence, is_filler, optional))
        )

    @property
    def n_states(self) -> int:
        return len(self.sentence)

    def edges(self, skip_penalty: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(src, dst, penalty)`` of every move between two states (staying is implied)."""
        src, dst, pen = [], [], []
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
) -> np.ndarray:
    """The state of every frame (``(T,)``) on the best path through ``log_probs (T, N)``
    (the model's log-probabilities of the window's tokens, sentence after sentence, in the
    order of the graph's token states) and `graph` (see the module docstring). ``silent
    (T,)``: the frames in a pause, which the filler takes at no margin (a pause between
    sentences belongs to none)."""
    lp = np.asarray(log_probs, np.float64)
    t_max = lp.shape[0]
    emit = np.empty((t_max, graph.n_states))
    tokens = ~graph.is_filler
    emit[:, tokens] = lp
    margin = np.full((t_max, 1), filler_margin)
    if silent is not None:
        margin[np.asarray(silent, bool)] = 0.0
    flat = 1.0 - np.log(max(lp.shape[1], 1))  # no token likelier than the rest: the filler's
    emit[:, graph.is_filler] = np.maximum(lp.max(1, keepdims=True) - margin, flat)
    src, dst, pen = graph.edges(skip_penalty)
    inner = (
        (graph.sentence[src] == graph.sentence[dst]) & ~graph.is_filler[src] & ~graph.is_filler[dst]
    )
    shifts = []  # the moves inside a sentence, by how far they go: one shift each
    for gap in np.unique(dst[inner] - src[inner]):
        allowed = np.zeros(graph.n_states, bool)
        allowed[dst[inner & (dst - src == gap)]] = True
        shifts.append((int(gap), allowed))
    src, dst, pen = src[~inner], dst[~inner], pen[~inner]  # between sentences: a few
    score = np.full(graph.n_states, NEG)
    entry = [graph.filler[0]]
    if len(graph.first):
        head = graph.optional[graph.first[0] :][: graph.length[0]]
        entry += [graph.first[0] + j for j in _run_ends(head, True)]
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
        vals = score[src] + pen
        order = np.argsort(vals, kind="stable")
        cand, from_ = np.full(graph.n_states, NEG), idx.copy()
        cand[dst[order]] = vals[order]  # the last write, the largest, wins
        from_[dst[order]] = src[order]
        move = cand > best
        best[move], arg[move] = cand[move], from_[move]
        back[t] = arg
        score = best + emit[t]
    path = np.empty(t_max, np.int64)
    cur = int(np.argmax(score))
    for t in range(t_max - 1, -1, -1):
        path[t] = cur
        cur = back[t, cur]
    return path


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
    on_token = ~graph.is_filler[path] & ~graph.optional[path]  # the sentence's sounds
    which = graph.sentence[path]
    last = int(which[-1])
    ended_inside = bool(~graph.is_filler[path[-1]])
    for k in range(len(graph.first)):
        if not final and (k > last or (k == last and ended_inside)):
            break
        frames = np.flatnonzero(on_token & (which == k))
        if len(frames):
            out.append(SentenceSpan(k, int(frames[0]), int(frames[-1]) + 1))
        else:
            out.append(SentenceSpan(k, None, None))
    return out


def filler_runs(
    path: np.ndarray, graph: SentenceGraph, sound: np.ndarray, min_frames: int
) -> list[tuple[int, int]]:
    """``[(start, end)]`` frames of the runs of filler in `path` with at least `min_frames`
    frames of sound (``sound (T,)`` bool): audio the text does not hold (trimmed to its
    first and last frame of sound)."""
    filler = graph.is_filler[path]
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
