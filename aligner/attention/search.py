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
    opt = None if optional is None else np.asarray(optional, bool)[None]
    return batched_search(lp[None], np.array([t_max]), np.array([n]), opt)[0]


def batched_search(
    log_probs: np.ndarray,
    frame_lengths: np.ndarray,
    token_lengths: np.ndarray,
    optional: np.ndarray | None = None,
) -> np.ndarray:
    """`monotonic_search` over a padded batch at once: ``log_probs (B, T, N)`` with
    ``frame_lengths (B,)``, ``token_lengths (B,)`` and ``optional (B, N)`` bool (None: every
    token required) -> paths ``(B, T)`` (the token of each frame; -1 on padded frames).
    Each item's path is the one the item alone gives. ValueError naming the items whose
    frames cannot hold their required tokens."""
    lp = np.asarray(log_probs, dtype=np.float64)
    batch, t_max, n_max = lp.shape
    frames, tokens = np.asarray(frame_lengths, int), np.asarray(token_lengths, int)
    inside = np.arange(n_max)[None, :] < tokens[:, None]
    opt = np.zeros((batch, n_max), bool) if optional is None else np.asarray(optional, bool)
    opt = opt & inside
    short = np.flatnonzero((frames < (inside & ~opt).sum(1)) | (tokens < 1) | (frames < 1))
    if len(short):
        raise ValueError(f"items {short.tolist()}: their frames cannot hold their required tokens")
    lp = np.where(inside[:, None, :], lp, NEG)
    moves = _moves(opt)
    score = np.where(_skippable_prefix(opt) & inside, lp[:, 0], NEG)
    back = np.zeros((batch, t_max, n_max), dtype=np.int64)
    idx = np.arange(n_max)
    for t in range(1, t_max):
        best, arg = score.copy(), np.broadcast_to(idx, (batch, n_max)).copy()
        for gap, allowed in moves:  # from i = j - gap
            cand = np.full((batch, n_max), NEG)
            cand[:, gap:] = score[:, :-gap]
            better = allowed & (cand > best)
            best[better], arg[better] = cand[better], np.broadcast_to(idx - gap, arg.shape)[better]
        live = (t < frames)[:, None]
        score = np.where(live, best + lp[:, t], score)
        back[:, t] = arg
    return _backtrack(back, np.where(_skippable_suffix(opt, inside), score, NEG), frames)


def _backtrack(back: np.ndarray, ends: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """Paths ``(B, T)`` from back-pointers ``(B, T, N)`` and final scores ``(B, N)``."""
    batch, t_max, _ = back.shape
    path = np.full((batch, t_max), -1, dtype=np.int64)
    rows = np.arange(batch)
    cur = np.argmax(ends, axis=1)
    for t in range(t_max - 1, -1, -1):
        live = t < frames
        path[live, t] = cur[live]
        if t > 0:
            cur = np.where(live, back[rows, t, cur], cur)
    return path


def path_durations(paths: np.ndarray, n_tokens: int) -> np.ndarray:
    """Frames per token ``(B, n_tokens)`` from paths ``(B, T)`` (-1 = padding)."""
    out = np.zeros((len(paths), n_tokens), dtype=np.int64)
    for b, path in enumerate(paths):
        out[b] = np.bincount(path[path >= 0], minlength=n_tokens)[:n_tokens]
    return out


def _moves(opt: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """``(gap, allowed (B, N))``: a path may move from token ``j - gap`` to token ``j`` in
    one frame where `allowed` is True (every token strictly between them optional); gaps
    past the longest run of optional tokens allow nothing and are left out."""
    batch, n = opt.shape
    moves = []
    for gap in range(1, n):
        allowed = np.zeros((batch, n), bool)
        allowed[:, gap:] = _all_optional_between(opt, gap)
        if not allowed.any():
            break
        moves.append((gap, allowed))
    return moves


def _skippable_prefix(opt: np.ndarray) -> np.ndarray:
    """``(B, N)``: True at ``j`` when every token before ``j`` is optional (a path may
    start at j)."""
    first = np.ones((opt.shape[0], 1), bool)
    return np.concatenate([first, np.cumprod(opt[:, :-1], axis=1).astype(bool)], axis=1)


def _skippable_suffix(opt: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """``(B, N)``: True at ``j`` (a real token) when every real token after ``j`` is
    optional (a path may end at j)."""
    after = (opt | ~inside)[:, ::-1]
    flipped = _skippable_prefix(after)[:, ::-1]
    return flipped & inside


def _all_optional_between(opt: np.ndarray, gap: int) -> np.ndarray:
    """``(B, N - gap)``, for ``j >= gap``: whether tokens ``j-gap+1 .. j-1`` are all
    optional."""
    n = opt.shape[1]
    run = np.ones((opt.shape[0], n - gap), bool)
    for k in range(1, gap):
        run &= opt[:, k : n - gap + k]
    return run


def with_overrides(log_probs: np.ndarray, overrides: np.ndarray | None) -> np.ndarray:
    """`log_probs` with the cells of `overrides` (same shape) that are not NaN put in."""
    if overrides is None:
        return log_probs
    return np.where(np.isnan(overrides), log_probs, overrides)


def frame_durations(
    weights: np.ndarray,
    r: int,
    n_frames: int,
    optional: np.ndarray | None = None,
    overrides: np.ndarray | None = None,
) -> np.ndarray:
    """Frames per token ``(N,)`` summing to ``n_frames`` from step weights ``(S, N)``:
    `spread_to_frames`, then `monotonic_search` on the log-weights, with ``overrides
    (n_frames, N)`` (NaN: keep) in place of them where given."""
    frames = spread_to_frames(weights, r, n_frames)
    log_probs = with_overrides(np.log(np.clip(frames, 1e-8, None)), overrides)
    path = monotonic_search(log_probs, optional)
    return path_durations(path[None], frames.shape[1])[0]


def expected_edges(
    log_probs: np.ndarray, frames: np.ndarray, refine: np.ndarray | None = None
) -> np.ndarray:
    """``(N + 1,)`` frame edges (the edge before frame ``a`` is ``a``) of the tokens that
    hold `frames` frames each (a search's durations over ``log_probs (T, N)``), refined
    below one frame where two tokens meet.

    Where token ``j`` follows token ``i`` with no frame between them (the tokens between,
    if any, hold none) and `refine` is True for both, ``j``'s start edge is the expected
    edge ``b`` under the posterior of every way of splitting their joint span ``[s, e)``
    between them (``s < b < e``: each keeps a frame), the rest of the path held fixed:
    ``p(b) ∝ exp(sum_{s<=t<b} log_probs[t, i] + sum_{b<=t<e} log_probs[t, j])``. The most
    likely split is the search's; the expectation places the boundary between frames
    where the alignment is torn between the two tokens (the frames quantize time to one
    hop). Every other edge stays where the frames put it."""
    lp = np.asarray(log_probs, dtype=np.float64)
    frames = np.asarray(frames, int)
    n = len(frames)
    refine = np.ones(n, bool) if refine is None else np.asarray(refine, bool)
    edges = np.concatenate([[0], np.cumsum(frames)])
    out = edges.astype(np.float64)
    timed = [k for k in range(n) if frames[k] > 0]
    for i, j in zip(timed, timed[1:]):
        if not (refine[i] and refine[j]):
            continue
        s, e = edges[i], edges[j + 1]
        if e - s < 3:  # one frame each: no other split
            continue
        ci = np.concatenate([[0.0], np.cumsum(lp[s:e, i])])
        cj = np.concatenate([[0.0], np.cumsum(lp[s:e, j])])
        cuts = np.arange(1, e - s)  # frames of i
        score = ci[cuts] + (cj[-1] - cj[cuts])
        p = np.exp(score - score.max())
        out[i + 1 : j + 1] = s + float((p * cuts).sum() / p.sum())
    return out
