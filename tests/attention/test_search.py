"""Monotonic alignment search: equal to a brute force over every path on tiny inputs,
durations summing to the frames with every required token present."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention.search import (
    expected_edges,
    frame_durations,
    monotonic_search,
    path_durations,
    spread_to_frames,
)


def brute_force(lp: np.ndarray, optional: np.ndarray) -> float:
    """The best score over every token sequence of the frames that is non-decreasing,
    covers every required token, and skips only optional ones."""
    t_max, n = lp.shape
    required = {j for j in range(n) if not optional[j]}
    best = -np.inf
    for path in itertools.product(range(n), repeat=t_max):
        if any(b < a for a, b in zip(path, path[1:])):
            continue
        if not required <= set(path):
            continue
        best = max(best, float(sum(lp[t, j] for t, j in enumerate(path))))
    return best


def score(lp: np.ndarray, path: np.ndarray) -> float:
    return float(lp[np.arange(len(path)), path].sum())


@settings(max_examples=150, deadline=None)
@given(
    t_max=st.integers(1, 6),
    n=st.integers(1, 4),
    seed=st.integers(0, 10_000),
    opt_bits=st.integers(0, 15),
)
def test_search_equals_brute_force(t_max, n, seed, opt_bits):
    optional = np.array([(opt_bits >> j) & 1 == 1 for j in range(n)])
    if t_max < (~optional).sum():
        with pytest.raises(ValueError, match="cannot hold"):
            monotonic_search(np.zeros((t_max, n)), optional)
        return
    lp = np.log(np.random.default_rng(seed).dirichlet(np.ones(n), size=t_max))
    path = monotonic_search(lp, optional)
    assert all(b >= a for a, b in zip(path, path[1:]))
    assert set(np.flatnonzero(~optional)) <= set(path.tolist())
    assert score(lp, path) == pytest.approx(brute_force(lp, optional))


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 15), steps=st.integers(1, 40), r=st.integers(1, 4), seed=st.integers(0, 999)
)
def test_durations_sum_to_the_frames_with_every_required_token(n, steps, r, seed):
    rng = np.random.default_rng(seed)
    n_frames = steps * r - int(rng.integers(0, r))
    weights = rng.dirichlet(np.ones(n), size=steps)
    optional = rng.random(n) < 0.3
    if n_frames < (~optional).sum():
        return
    d = frame_durations(weights, r, n_frames, optional)
    assert d.sum() == n_frames and d.shape == (n,)
    assert (d[~optional] >= 1).all()


def test_spread_places_steps_at_their_frame_centres():
    w = np.array([[1.0, 0.0], [0.0, 1.0]])  # r = 4: centres at frames 1.5 and 5.5
    f = spread_to_frames(w, 4, 8)
    assert f[:, 1].tolist() == pytest.approx([0, 0, 0.125, 0.375, 0.625, 0.875, 1, 1])
    assert np.allclose(f.sum(1), 1)
    with pytest.raises(ValueError, match="cannot cover"):
        spread_to_frames(w, 4, 9)


def test_a_sharp_diagonal_gives_frame_accurate_durations():
    """Token j attended for frames [3j, 3j+3) at r = 1; with r = 2 the spread weights still
    put every boundary within a frame of the truth."""
    frames = np.repeat(np.eye(4), 3, axis=0)  # 12 frames
    assert frame_durations(frames, 1, 12).tolist() == [3, 3, 3, 3]
    steps = frames[::2]  # what a decoder of r = 2 would see
    d = frame_durations(steps * 0.9 + 0.025, 2, 12)
    assert d.sum() == 12 and np.abs(np.cumsum(d) - [3, 6, 9, 12]).max() <= 1


def expected_split(lp: np.ndarray, i: int, j: int, s: int, e: int) -> float:
    """The expected start of token j over every split of frames [s, e) between tokens i
    and j (each at least one frame), weighted by the product of their probabilities."""
    cuts = list(range(s + 1, e))
    weights = [np.exp(lp[s:b, i].sum() + lp[b:e, j].sum()) for b in cuts]
    return float(np.dot(weights, cuts) / np.sum(weights))


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), extra=st.integers(0, 6))
def test_expected_edges_equal_the_posterior_mean_of_each_split(seed, n, extra):
    rng = np.random.default_rng(seed)
    optional = np.zeros(n, bool)
    optional[1:-1] = rng.random(n - 2) < 0.3  # tokens a search may skip
    lp = np.log(rng.dirichlet(np.ones(n), size=n + extra))
    frames = path_durations(monotonic_search(lp, optional)[None], n)[0]
    edges = expected_edges(lp, frames, ~optional)
    bounds = np.concatenate([[0], np.cumsum(frames)])
    assert edges[0] == 0 and edges[-1] == len(lp)
    timed = [k for k in range(n) if frames[k] > 0]
    pairs = {j: i for i, j in zip(timed, timed[1:]) if not (optional[i] or optional[j])}
    for j, i in pairs.items():  # the edges from i's end to j's start move together
        want = expected_split(lp, i, j, bounds[i], bounds[j + 1])
        assert edges[i + 1 : j + 1] == pytest.approx([want] * (j - i))
        assert bounds[i] < edges[j] < bounds[j + 1]
    moved = {k for j, i in pairs.items() for k in range(i + 1, j + 1)}
    assert all(edges[k] == bounds[k] for k in range(n + 1) if k not in moved)


def test_expected_edges_of_a_sure_alignment_stay_on_the_grid_and_a_tie_lies_between():
    sure = np.log(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]) + 1e-12)
    assert expected_edges(sure, [2, 1]) == pytest.approx([0, 2, 3])
    tie = np.log(np.array([[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]]))
    assert expected_edges(tie, [2, 1]) == pytest.approx([0, 1.5, 3])  # either split alike
    assert expected_edges(tie, [2, 1], np.array([True, False])) == pytest.approx([0, 2, 3])
