"""The alignment model's pieces in the core: the beta-binomial prior against scipy, the
forward-sum loss against an explicit sum over every path, the batched monotonic search
against a brute force and against items one by one, the binarization loss and the
distance attention against their formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import betabinom

from aligner.attention import build_attention
from aligner.attention.losses import binarization_loss, forward_sum_loss
from aligner.attention.prior import beta_binomial_log_prior
from aligner.attention.search import batched_search, monotonic_search, path_durations


@pytest.mark.parametrize("scaling", [1.0, 0.5, 2.0])
def test_prior_is_the_beta_binomial_of_its_formula(scaling):
    frames, tokens = torch.tensor([7, 4]), torch.tensor([5, 3])
    prior = beta_binomial_log_prior(frames, tokens, scaling)
    assert prior.shape == (2, 7, 5)
    for b in range(2):
        t_len, n = int(frames[b]), int(tokens[b])
        for t in range(1, t_len + 1):
            expected = betabinom.logpmf(np.arange(n), n - 1, scaling * t, scaling * (t_len - t + 1))
            assert prior[b, t - 1, :n].numpy() == pytest.approx(expected, abs=1e-5)
        assert (prior[b, t_len:] == 0).all() and (prior[b, :, n:] == 0).all()
    # the band moves from the first token to the last
    assert prior[0, 0].argmax() == 0 and prior[0, 6].argmax() == 4


def ctc_paths(t_len: int, n: int):
    """Every frame labelling over {blank=0, 1..n} that collapses to 1..n."""
    for labels in itertools.product(range(n + 1), repeat=t_len):
        collapsed = [a for k, a in enumerate(labels) if a != 0 and (k == 0 or labels[k - 1] != a)]
        if collapsed == list(range(1, n + 1)):
            yield labels


def explicit_forward_sum(scores: torch.Tensor, blank: float) -> float:
    """-log(sum over paths of prod of frame probabilities) / n, by enumeration."""
    t_len, n = scores.shape
    logp = torch.log_softmax(torch.cat([torch.full((t_len, 1), blank), scores], 1), 1).double()
    total = sum(
        math.exp(sum(float(logp[t, a]) for t, a in enumerate(p))) for p in ctc_paths(t_len, n)
    )
    return -math.log(total) / n


@settings(max_examples=40, deadline=None)
@given(
    t_len=st.integers(1, 6),
    n=st.integers(1, 4),
    seed=st.integers(0, 999),
    blank=st.sampled_from([-1.0, 0.0, -3.0]),
)
def test_forward_sum_equals_the_sum_over_every_path(t_len, n, seed, blank):
    scores = torch.randn(t_len, n, generator=torch.Generator().manual_seed(seed))
    loss = forward_sum_loss(scores[None], torch.tensor([t_len]), torch.tensor([n]), blank)
    if t_len < n:  # no path: an impossible item contributes nothing
        assert float(loss) == 0.0
        return
    # float32 loss: a likelihood near 1 leaves a loss near 0, so an absolute floor too
    assert float(loss) == pytest.approx(explicit_forward_sum(scores, blank), rel=1e-4, abs=1e-6)


def test_forward_sum_without_blanks_is_the_sum_over_monotonic_paths():
    """A blank that is never taken leaves the paths of a monotonic alignment: each token
    holds one run of at least one frame, in order."""
    scores = torch.randn(5, 3, generator=torch.Generator().manual_seed(3))
    logp = torch.log_softmax(scores.double(), 1)
    total = 0.0
    for cuts in itertools.combinations(range(1, 5), 2):  # where tokens 2 and 3 start
        tokens = np.searchsorted(np.array(cuts), np.arange(5), side="right")
        total += math.exp(float(sum(logp[t, j] for t, j in enumerate(tokens))))
    loss = forward_sum_loss(scores[None], torch.tensor([5]), torch.tensor([3]), blank_logprob=-60)
    assert float(loss) == pytest.approx(-math.log(total) / 3, rel=1e-5)


def test_forward_sum_of_a_padded_batch_is_the_mean_of_its_items():
    g = torch.Generator().manual_seed(0)
    frames, tokens = torch.tensor([9, 6, 4]), torch.tensor([4, 5, 2])
    scores = torch.randn(3, 9, 5, generator=g)
    batch = forward_sum_loss(scores, frames, tokens)
    one = [
        forward_sum_loss(
            scores[b : b + 1, : frames[b], : tokens[b]], frames[b : b + 1], tokens[b : b + 1]
        )
        for b in range(3)
    ]
    assert float(batch) == pytest.approx(float(torch.stack(one).mean()), rel=1e-5)
    garbage = scores.clone()
    garbage[0, 9:], garbage[1, :, 5:], garbage[2, 4:] = 50.0, 50.0, 50.0
    garbage[1, 6:] = 50.0
    assert float(forward_sum_loss(garbage, frames, tokens)) == pytest.approx(float(batch), rel=1e-5)


def brute_force(lp: np.ndarray) -> float:
    """Best score of a monotonic path in which every token holds at least one frame."""
    t_len, n = lp.shape
    best = -np.inf
    for cuts in itertools.combinations(range(1, t_len), n - 1):
        tokens = np.searchsorted(np.array(cuts, dtype=int), np.arange(t_len), side="right")
        best = max(best, float(lp[np.arange(t_len), tokens].sum()))
    return best


@settings(max_examples=60, deadline=None)
@given(t_len=st.integers(1, 7), n=st.integers(1, 5), seed=st.integers(0, 9999))
def test_search_with_every_token_required_equals_brute_force(t_len, n, seed):
    if t_len < n:
        return
    lp = np.log(np.random.default_rng(seed).dirichlet(np.ones(n), size=t_len))
    path = batched_search(lp[None], np.array([t_len]), np.array([n]))[0]
    assert lp[np.arange(t_len), path].sum() == pytest.approx(brute_force(lp))
    assert np.array_equal(np.unique(path), np.arange(n)) and (np.diff(path) >= 0).all()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 9999), batch=st.integers(1, 5))
def test_batched_search_equals_items_one_by_one(seed, batch):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(1, 8, batch)
    frames = tokens + rng.integers(0, 12, batch)
    optional = rng.random((batch, 8)) < 0.3
    lp = np.log(rng.dirichlet(np.ones(8), size=(batch, int(frames.max()))))
    lp[rng.random(lp.shape) < 0.1] = -1e9  # garbage must not matter in padding either
    paths = batched_search(lp, frames, tokens, optional)
    durations = path_durations(paths, 8)
    for b in range(batch):
        t, n = int(frames[b]), int(tokens[b])
        alone = monotonic_search(lp[b, :t, :n], optional[b, :n])
        assert np.array_equal(paths[b, :t], alone) and (paths[b, t:] == -1).all()
        assert durations[b].sum() == t and (durations[b, n:] == 0).all()
        assert (durations[b, :n][~optional[b, :n]] >= 1).all()


def test_batched_search_names_the_items_that_cannot_fit():
    with pytest.raises(ValueError, match=r"items \[1\]"):
        batched_search(np.zeros((2, 5, 4)), np.array([5, 3]), np.array([4, 4]))


def test_binarization_loss_is_the_mean_log_probability_of_the_hard_cells():
    log_soft = torch.log_softmax(torch.randn(2, 4, 3), -1)
    hard = torch.zeros(2, 4, 3)
    cells = [(0, 0, 0), (0, 1, 1), (0, 2, 2), (1, 0, 0), (1, 1, 2)]
    for c in cells:
        hard[c] = 1
    expected = -sum(float(log_soft[c]) for c in cells) / len(cells)
    assert float(binarization_loss(hard, log_soft)) == pytest.approx(expected, rel=1e-6)


def test_distance_attention_scores_minus_the_scaled_squared_distance():
    attn = build_attention("distance", query_dim=4, memory_dim=5, attn_dim=3, temperature=0.5)
    q, memory = torch.randn(2, 6, 4), torch.randn(2, 7, 5)
    keys = attn.project_keys(memory)
    direct = -0.5 * ((attn.query_layer(q)[:, :, None] - keys[:, None]) ** 2).sum(-1)
    assert torch.allclose(attn.score(q, keys), direct, atol=1e-5)
    with pytest.raises(ValueError, match="temperature"):
        build_attention("distance", query_dim=4, memory_dim=5, temperature=0)
