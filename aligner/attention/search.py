"""Hard monotonic alignment from soft attention: frame-level durations.

A decoder with reduction factor ``r`` attends once per step of ``r`` frames, so the argmax
of its weights gives durations in multiples of ``r``. Here the weights ``(S, N)`` are
spread to frames first (`spread_to_frames`: linear interpolation between the centres of
the steps), then a Viterbi search (monotonic alignment search, as in Glow-TTS/RAD-TTS)
finds the monotonic path through the frames that maximizes the summed log-weights: every
frame belongs to one token, tokens come in order, each *required* token gets at least one
frame, and an *optional* token (a word separator, a punctuation mark, ``</s>``) may get
none. The durations sum exactly to the number of frames.
"""

from __future__ import annotations

import numpy as np

NEG = -1e30  # an impossible path (finite, so sums never become NaN)


def spread_to_frames(weights: np.ndarray, r: int, n_frames: int) -> np.ndarray:
    """``(S, N)`` step weights -> ``(n_frames, N)`` frame weights: step ``s`` holds frames
    ``[s*r, s*r + r)`` and is placed at their centre; frames between two centres get the
    linear interpolation of the two steps' weights (frames beyond the first or last
    centre take that step's weights)."""
    weights = np.asarray(weights, dtype=np.float64)
    steps = weights.shape[0]
    if steps * r < n_frames or n_frames < 1:
        raise ValueError(f"{steps} steps of r={r} cannot cover {n_frames} frames")
    if r == 1:
        return weights[:n_frames].copy()
    centres = np.arange(steps) * r + (r - 1) / 2
    frames = np.arange(n_frames)
    return np.stack(
        [np.interp(frames, centres, weights[:, j]) for j in range(weights.shape[1])], axis=1
    )


def monotonic_search(log_probs: np.ndarray, optional: np.ndarray | None = None) -> np.ndarray:
    """The token (``0..N-1``) of every frame on the best monotonic path through
    ``log_probs (T, N)``: the path starts in the first required token (or an optional one
    before it), moves only forward, may skip optional tokens, and ends in the last
    required token (or an optional one after it). Raises ValueError when ``T`` frames
    cannot hold the required tokens."""
    lp = np.asarray(log_probs, dtype=np.float64)
    t_max, n = lp.shape
    opt = np.zeros(n, bool) if optional is None else np.asarray(optional, bool)
    if t_max < int((~opt).sum()) or n == 0:
        raise ValueError(f"{t_max} frames cannot hold {int((~opt).sum())} required tokens")
    moves = _moves(opt)  # the same every frame: computed once
    score = np.where(_skippable_prefix(opt), lp[0], NEG)
    back = np.zeros((t_max, n), dtype=np.int64)
    back[0] = np.arange(n)
    for t in range(1, t_max):
        best, arg = score.copy(), np.arange(n)
        for gap, allowed in moves:  # from i = j - gap
            cand = np.full(n, NEG)
            cand[gap:] = score[:-gap]
            better = allowed & (cand > best)
            best[better], arg[better] = cand[better], (np.arange(n) - gap)[better]
        score, back[t] = best + lp[t], arg
    ends = np.where(_skippable_prefix(opt[::-1])[::-1], score, NEG)
    path = np.empty(t_max, dtype=np.int64)
    path[-1] = int(np.argmax(ends))
    for t in range(t_max - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def _moves(opt: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(gap, allowed (N,))``: a path may move from token ``j - gap`` to token ``j`` in one
    frame where `allowed` is True (every token strictly between them optional); gaps past
    the longest run of optional tokens allow nothing and are left out."""
    n, moves = len(opt), []
    for gap in range(1, n):
        allowed = np.zeros(n, bool)
        allowed[gap:] = _all_optional_between(opt, gap)
        if not allowed.any():
            break
        moves.append((gap, allowed))
    return moves


def _skippable_prefix(opt: np.ndarray) -> np.ndarray:
    """True at ``j`` when every token before ``j`` is optional (a path may start at j)."""
    before = np.concatenate([[True], np.cumprod(opt[:-1]).astype(bool)])
    return before


def _all_optional_between(opt: np.ndarray, gap: int) -> np.ndarray:
    """For ``j >= gap``: whether tokens ``j-gap+1 .. j-1`` are all optional."""
    n = len(opt)
    if gap == 1:
        return np.ones(n - 1, bool)
    run = np.ones(n - gap, bool)
    for k in range(1, gap):
        run &= opt[k : n - gap + k]
    return run


def frame_durations(
    weights: np.ndarray, r: int, n_frames: int, optional: np.ndarray | None = None
) -> np.ndarray:
    """Frames per token ``(N,)`` summing to ``n_frames`` from step weights ``(S, N)``:
    `spread_to_frames`, then `monotonic_search` on the log-weights."""
    frames = spread_to_frames(weights, r, n_frames)
    path = monotonic_search(np.log(np.clip(frames, 1e-8, None)), optional)
    return np.bincount(path, minlength=frames.shape[1])
