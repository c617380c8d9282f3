"""Words that a sentence's text holds and its audio does not (a reader who left out a
clause, or a recording edited inside a sentence): the monotonic search over one sentence's
log-probabilities, once as it is and once with one jump over a run of words, compared
(`dropped_words`). Aligned as it is, such a sentence squeezes the words its audio lacks
into the audio of the words beside them, and no word stands out as unlike its audio
(the left-out `How goes the search for Mr.` before `What a misfortune to be a woman!`:
94, 89, 68, 20, 21 and 70 nats against its six words, none past the 100 of a wrong word,
while `What` was pushed 0.9 s late).
"""

from __future__ import annotations

import numpy as np

from aligner.alignment.tiers import word_runs

NEG = -1e30


def _shifts(optional: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """The forward moves of the monotonic search by how far they go: ``[(gap, allowed
    (N,) bool)]``, ``allowed[d]`` where every token between ``d - gap`` and ``d`` is
    optional (a path may pass over optional tokens, never a required one)."""
    n = len(optional)
    out = []
    for gap in range(1, n):
        allowed = np.zeros(n, bool)
        for d in range(gap, n):
            allowed[d] = bool(optional[d - gap + 1 : d].all())
        if not allowed.any():
            break
        out.append((gap, allowed))
    return out


def _step(score: np.ndarray, shifts: list[tuple[int, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The best previous score of each state (staying, or moving forward by one of
    `shifts`) and where it came from; ``(N,)`` each."""
    idx = np.arange(len(score))
    best, arg = score.copy(), idx.copy()
    for gap, allowed in shifts:
        cand = np.full(len(score), NEG)
        cand[gap:] = score[:-gap]
        move = allowed & (cand > best)
        best[move], arg[move] = cand[move], idx[move] - gap
    return best, arg


def dropped_words(
    log_probs: np.ndarray, optional: np.ndarray, margin: float, min_words: int = 2
) -> tuple[int, int] | None:
    """``(first, end)``: the words ``[first, end)`` (runs of required tokens, `word_runs`
    of ``optional (N,)``) whose leaving out raises the best monotonic path through
    ``log_probs (T, N)`` by more than `margin` nats (`best_jump`), widened over the words
    beside them squeezed to a frame a token (`_squeezed`); at least `min_words` of them
    and at least one word left. None where no run does."""
    found = best_jump(log_probs, optional, min_words)
    if found is None or found[0] <= margin:
        return None
    _, first, end, path = found
    return _squeezed(word_runs(np.asarray(optional, bool)), path, first, end)


def best_jump(
    log_probs: np.ndarray, optional: np.ndarray, min_words: int = 2
) -> tuple[float, int, int, np.ndarray] | None:
    """``(gain, first, end, path)``: the run of words ``[first, end)`` (at least
    `min_words`, at least one word left) whose leaving out raises the best monotonic path
    through ``log_probs (T, N)`` most, by ``gain`` nats (negative where every run costs),
    and that path (``(T,)``: the token of each frame); None for a sentence of too few words.

    The path gives every required token (``optional (N,)`` False) a frame at least, in
    order, and may pass over optional ones; it starts at the first required token or an
    optional one before it and ends at the last required token or after it. With the run
    left out it may also start at a later word (the first words left out), or jump from a
    word's end or the optional tokens after it to a later word's start, or to the optional
    tokens after the last word (the last words left out). A word said but swallowed gains
    its neighbours a few frames; words the audio lacks give back all the audio they took."""
    lp = np.asarray(log_probs, np.float64)
    optional = np.asarray(optional, bool)
    t_max, n = lp.shape
    runs = word_runs(optional)
    w = len(runs)
    if t_max == 0 or w < min_words + 1:
        return None
    firsts = [a for a, _ in runs]
    tail = runs[-1][1] + 1 if runs[-1][1] + 1 < n else None  # optional tokens after the last
    # the jumps into a word: to word j's first token from any source before word j - min_words
    into = np.array(firsts[min_words:], np.int64)
    last_source = np.array(firsts[: w - min_words], np.int64) - 1
    ok = last_source >= 0
    into, last_source = into[ok], last_source[ok]
    source_ok = optional.copy()
    source_ok[[b for _, b in runs]] = True  # a word's end, or a token outside every word
    shifts = _shifts(optional)
    kept, jumped = np.full(n, NEG), np.full(n, NEG)
    kept[: firsts[0] + 1] = lp[0, : firsts[0] + 1]
    starts = firsts[min_words:]  # the path with the jump may start at a later word
    jumped[starts] = lp[0, starts]
    # into the tokens after the last word (any of them): from the end of the first word on
    tails = np.arange(tail, n) if tail is not None else np.zeros(0, np.int64)
    tail_from, tail_to = runs[0][1], firsts[w - min_words] - 1
    back_kept = np.zeros((t_max, n), np.int32)
    back_jumped = np.zeros((t_max, n), np.int32)  # -1 - s: jumped from state s of `kept`
    idx = np.arange(n)
    for t in range(1, t_max):
        best_k, arg_k = _step(kept, shifts)
        best_j, arg_j = _step(jumped, shifts)
        vals = np.where(source_ok, kept, NEG)
        prefix = np.maximum.accumulate(vals)
        where = np.maximum.accumulate(np.where((vals >= prefix) & (vals > NEG / 2), idx, 0))
        better = prefix[last_source] > best_j[into]
        best_j[into[better]] = prefix[last_source[better]]
        arg_j[into[better]] = -1 - where[last_source[better]]
        if len(tails):
            pick = tail_from + int(np.argmax(vals[tail_from : tail_to + 1]))
            better = vals[pick] > best_j[tails]
            best_j[tails[better]], arg_j[tails[better]] = vals[pick], -1 - pick
        back_kept[t], back_jumped[t] = arg_k, arg_j
        kept, jumped = best_k + lp[t], best_j + lp[t]
    ends = slice(runs[-1][1], n)
    if kept[ends].max() <= NEG / 2 or jumped[ends].max() <= NEG / 2:  # too few frames
        return None
    last = runs[-1][1] + int(np.argmax(jumped[ends]))
    path, (source, target) = _backtrack(back_kept, back_jumped, last)
    end = w if tail is not None and target >= tail else firsts.index(target)
    first = next(k for k, a in enumerate(firsts) if a > source)
    return float(jumped[ends].max() - kept[ends].max()), first, end, path


def _backtrack(
    back_kept: np.ndarray, back_jumped: np.ndarray, last: int
) -> tuple[np.ndarray, tuple[int, int]]:
    """The path with the jump (``(T,)``: the token of every frame) ending at token `last`,
    from the two layers' back-pointers ``(T, N)`` each (`back_jumped`'s ``-1 - s``: the
    jump from token ``s`` of the path without one), and the jump ``(source, target)``
    (source -1: the path started at the target)."""
    t_max = len(back_kept)
    path = np.empty(t_max, np.int64)
    path[-1], layer, jump = last, back_jumped, None
    for t in range(t_max - 1, 0, -1):
        came = int(layer[t, path[t]])
        if came < 0:  # the jump: from `kept`'s state -1 - came to path[t]
            jump, came, layer = (-1 - came, int(path[t])), -1 - came, back_kept
        path[t - 1] = came
    return path, jump if jump is not None else (-1, int(path[0]))


def _squeezed(
    runs: list[tuple[int, int]], path: np.ndarray, first: int, end: int
) -> tuple[int, int]:
    """The words ``[first, end)`` left out, widened over each word beside them that the
    ``path (T,)`` (the token of every frame) gave no more frames than it has tokens: a
    word the audio lacks too, squeezed in beside the run (a breath before the audio
    resumes held a two-token `How` as readily as the pause), never the last word left."""
    frames = np.bincount(path, minlength=runs[-1][1] + 1)

    def squeezed(j: int) -> bool:
        a, b = runs[j]
        return int(frames[a : b + 1].sum()) <= b - a + 1

    while first > 0 and (end < len(runs) or first > 1) and squeezed(first - 1):
        first -= 1
    while end < len(runs) and (first > 0 or end < len(runs) - 1) and squeezed(end):
        end += 1
    return first, end
