"""Mechanism-specific behaviour: formulas, windows, monotonicity, masked softmax."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention import build_attention, masked_softmax, window_mask
from aligner.attention.dca import beta_binomial_prior
from aligner.attention.monotonic import apply_window

from .helpers import CONTENT, DIM, lengths_mask, make, run_steps


@pytest.mark.parametrize("name", CONTENT)
def test_attend_all_equals_step_loop(name: str) -> None:
    attn = make(name, {})
    memory, mask = torch.randn(3, 6, DIM), lengths_mask([6, 3, 1])
    queries = torch.randn(3, 5, DIM)
    contexts, weights, _ = run_steps(attn, memory, mask, queries)
    all_c, all_w = attn.attend_all(queries, attn.init_state(memory, mask))
    torch.testing.assert_close(all_w, weights)
    torch.testing.assert_close(all_c, contexts)


def test_additive_equals_formula() -> None:
    attn = build_attention("additive", query_dim=5, memory_dim=7, attn_dim=3)
    memory, query = torch.randn(2, 4, 7), torch.randn(2, 5)
    w, u, b, v = (
        attn.query_layer.weight,
        attn.key_layer.weight,
        attn.key_layer.bias,
        attn.v.weight[0],
    )
    energies = torch.zeros(2, 4)
    for i in range(2):
        for j in range(4):
            energies[i, j] = v @ torch.tanh(w @ query[i] + u @ memory[i, j] + b)
    expected = torch.softmax(energies, dim=1)
    context, weights, _ = attn(query, attn.init_state(memory))
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(context, torch.einsum("bt,btd->bd", expected, memory))


def test_keys_are_projected_once() -> None:
    attn = make("additive", {})
    calls = []
    attn.key_layer.register_forward_hook(lambda *_: calls.append(1))
    run_steps(attn, torch.randn(2, 5, DIM), None, torch.randn(2, 4, DIM))
    assert len(calls) == 1


def test_dot_needs_equal_dims() -> None:
    with pytest.raises(ValueError, match="general"):
        build_attention("dot", query_dim=3, memory_dim=4)


def test_local_m_windows_at_both_edges() -> None:
    attn = build_attention("local-m", query_dim=DIM, memory_dim=DIM, window=2, scorer="dot")
    mask = lengths_mask([10, 5])
    _, weights, _ = run_steps(attn, torch.randn(2, 10, DIM), mask, torch.randn(2, 13, DIM))
    support = weights > 0

    def expect(lo: int, hi: int) -> torch.Tensor:
        out = torch.zeros(10, dtype=torch.bool)
        out[lo : hi + 1] = True
        return out

    assert torch.equal(support[0, 0], expect(0, 2))  # left edge: truncated
    assert torch.equal(support[0, 1], expect(0, 3))
    assert torch.equal(support[0, 5], expect(3, 7))  # interior: 2D + 1 positions
    assert torch.equal(support[0, 9], expect(7, 9))  # right edge
    assert torch.equal(support[0, 12], expect(7, 9))  # past the end: centre clamped
    assert torch.equal(support[1, 9], expect(2, 4))  # shorter item: its own right edge


def test_local_p_gaussian_around_predicted_centre() -> None:
    attn = build_attention("local-p", query_dim=DIM, memory_dim=DIM, window=3, scorer="dot")
    memory = torch.zeros(2, 12, DIM)  # flat content energies: weights = Gaussian in window
    mask = lengths_mask([12, 7])
    context, weights, state = attn(torch.randn(2, DIM), attn.init_state(memory, mask))
    center = state.extras["center"]
    assert (center > 0).all() and (center < torch.tensor([12.0, 7.0])).all()
    j = torch.arange(12.0)
    for b, length in enumerate([12, 7]):
        inside = ((j - center[b]).abs() <= 3) & (j < length)
        gauss = torch.exp(-((j - center[b]) ** 2) / (2 * 1.5**2)) * inside
        torch.testing.assert_close(weights[b], gauss / gauss.sum())


def _random_walk(name: str, steps: int = 40, **opts) -> tuple[torch.Tensor, object]:
    attn = build_attention(name, query_dim=8, memory_dim=8, attn_dim=16, **opts).eval()
    mask = lengths_mask([30, 22, 15])
    _, weights, state = run_steps(attn, torch.randn(3, 30, 8), mask, torch.randn(3, steps, 8))
    return weights, state


def _support_ends(weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """First and last index with non-zero weight, ``(B, U)`` each."""
    j = torch.arange(weights.size(-1))
    nonzero = weights > 0
    first = torch.where(nonzero, j, weights.size(-1)).amin(-1)
    last = torch.where(nonzero, j, -1).amax(-1)
    return first, last


@pytest.mark.parametrize("seed", range(5))
def test_forward_focus_never_moves_backwards(seed: int) -> None:
    """The attended region of forward attention never moves back and its front advances
    at most one position a step (the argmax itself may dip back when content scores
    reweight a spread-out alpha, so the support is the exact property)."""
    torch.manual_seed(seed)
    for opts in ({}, {"transition_agent": True}):
        weights, _ = _random_walk("forward", **opts)
        first, last = _support_ends(weights)
        assert (first.diff(dim=1) >= 0).all()
        assert torch.equal(last[:, 0], torch.ones(3, dtype=torch.long))
        assert ((last.diff(dim=1) >= 0) & (last.diff(dim=1) <= 1)).all()
        assert (last[:, -1] == torch.tensor([29, 21, 14])).all()  # reached each item's end


@pytest.mark.parametrize("seed", range(5))
def test_gmm_means_and_focus_never_move_backwards(seed: int) -> None:
    torch.manual_seed(seed)
    attn = build_attention("gmm", query_dim=8, memory_dim=8, attn_dim=16).eval()
    state = attn.init_state(torch.randn(3, 30, 8), lengths_mask([30, 22, 15]))
    means = [state.extras["means"]]
    for _ in range(20):
        _, _, state = attn(torch.randn(3, 8) * 3, state)
        means.append(state.extras["means"])
    assert (torch.stack(means).diff(dim=0) > 0).all()


@pytest.mark.parametrize("seed", range(5))
def test_dca_focus_never_moves_backwards(seed: int) -> None:
    """From a sharp focus at any position, the causal prior keeps the next focus at or
    after it (log prior floor 1e-6 outweighs any content term, |e| <= sum |v|); and the
    weight left behind is negligible."""
    torch.manual_seed(seed)
    attn = build_attention("dca", query_dim=8, memory_dim=8, attn_dim=16).eval()
    assert 2 * attn.v.weight.abs().sum() < -torch.log(torch.tensor(1e-6 / 0.5))
    mask = lengths_mask([30, 22, 15])
    state = attn.init_state(torch.randn(3, 30, 8), mask)
    for scale in (1.0, 5.0):
        start = torch.stack([torch.randint(0, n, ()) for n in (30, 22, 15)])
        state.prev_weights = torch.nn.functional.one_hot(start, 30).float()
        state.step = torch.ones(3, dtype=torch.long)
        _, weights, _ = attn(torch.randn(3, 8) * scale, state)
        assert (weights.argmax(1) >= start).all()
        behind = torch.arange(30)[None, :] < start[:, None]
        assert (weights * behind).sum(1).max() < 1e-3


def _dca_by_convolutions(attn, query: torch.Tensor, prev: torch.Tensor, mask: torch.Tensor):
    """Battenberg et al. (2020) energies with three conv1d calls (the reference form)."""
    from torch.nn import functional as F

    b, t = prev.shape
    f = attn.static_proj(attn.static_conv(prev[:, None]).transpose(1, 2))
    filters = attn.dynamic_mlp(query).view(b * attn.dynamic_filters, 1, -1)
    g = F.conv1d(prev[None], filters, padding=attn.dynamic_kernel // 2, groups=b)
    g = attn.dynamic_proj(g.view(b, attn.dynamic_filters, t).transpose(1, 2))
    kernel = attn.prior_filter
    mass = F.conv1d(F.pad(prev[:, None], (kernel.size(-1) - 1, 0)), kernel)[:, 0]
    energies = attn.v(torch.tanh(f + g))[..., 0] + torch.log(mass.clamp_min(attn.prior_floor))
    return masked_softmax(energies, mask)


@pytest.mark.parametrize(
    "opts",
    [{}, {"static_kernel": 5, "dynamic_kernel": 9, "prior_length": 4}, {"prior_length": 15}],
)
def test_dca_unfolded_equals_convolutions(opts: dict) -> None:
    """The single-unfold implementation equals the three-convolution formula, for the
    default and for unequal kernel and prior lengths, weights and gradients alike."""
    torch.manual_seed(0)
    attn = build_attention("dca", query_dim=8, memory_dim=8, attn_dim=16, **opts).double()
    mask = lengths_mask([30, 22, 15])
    state = attn.init_state(torch.randn(3, 30, 8, dtype=torch.float64), mask)
    state.prev_weights = torch.softmax(torch.randn(3, 30, dtype=torch.float64) * 3, 1) * mask
    state.step = torch.ones(3, dtype=torch.long)
    query = torch.randn(3, 8, dtype=torch.float64)
    _, got, _ = attn(query, state)
    want = _dca_by_convolutions(attn, query, state.prev_weights, mask)
    torch.testing.assert_close(got, want)
    grads = [
        torch.autograd.grad((w * torch.arange(30.0)).sum(), list(attn.parameters()))
        for w in (got, want)
    ]
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b)


def test_beta_binomial_prior_matches_lgamma_formula() -> None:
    prior = beta_binomial_prior(11, 0.1, 0.9).double()
    k, n, a, b = torch.arange(11.0, dtype=torch.float64), 10.0, 0.1, 0.9

    def log_beta(x: torch.Tensor | float, y: torch.Tensor | float) -> torch.Tensor:
        x, y = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)
        return torch.lgamma(x) + torch.lgamma(y) - torch.lgamma(x + y)

    log_choose = torch.lgamma(torch.tensor(n + 1)) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1)
    expected = torch.exp(log_choose + log_beta(k + a, n - k + b) - log_beta(a, b))
    torch.testing.assert_close(prior, expected, rtol=1e-6, atol=1e-7)
    assert abs(float(prior.sum()) - 1) < 1e-6 and prior[0] > 0.5


def test_location_uses_cumulative_weights() -> None:
    attn = make("location", {})
    memory, query = torch.randn(2, 6, DIM), torch.randn(2, DIM)
    state = attn.init_state(memory)
    _, base, _ = attn(query, state)
    state.cum_weights = torch.rand(2, 6) * 3
    context, changed, _ = attn(query, state)
    assert not torch.allclose(base, changed, atol=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.floats(-1e4, 1e4), min_size=1, max_size=12),
    keep=st.lists(st.booleans(), min_size=12, max_size=12),
    dtype=st.sampled_from([torch.float32, torch.float16, torch.bfloat16]),
)
def test_masked_softmax_properties(scores: list[float], keep: list[bool], dtype) -> None:
    x = torch.tensor(scores).to(dtype)
    mask = torch.tensor(keep[: len(scores)])
    out = masked_softmax(x, mask)
    assert torch.isfinite(out).all()
    assert (out[~mask] == 0).all()
    expected = 1.0 if mask.any() else 0.0
    assert abs(float(out.float().sum()) - expected) < 1e-2


@settings(max_examples=40, deadline=None)
@given(
    positions=st.lists(st.integers(0, 19), min_size=1, max_size=5),
    back=st.integers(0, 4),
    front=st.integers(0, 4),
)
def test_window_mask_and_apply_window(positions: list[int], back: int, front: int) -> None:
    position = torch.tensor(positions)
    allowed = window_mask(position, 20, (back, front))
    j = torch.arange(20)
    for b, p in enumerate(positions):
        assert torch.equal(allowed[b], (j >= p - back) & (j <= p + front))
    weights = torch.softmax(torch.randn(len(positions), 20), dim=1)
    windowed = apply_window(weights, position, (back, front))
    assert (windowed[~allowed] == 0).all()
    torch.testing.assert_close(windowed.sum(1), torch.ones(len(positions)))
    ratio = windowed[allowed] / weights[allowed]  # renormalized, shape kept
    for b in range(len(positions)):
        row = windowed[b][allowed[b]] / weights[b][allowed[b]]
        torch.testing.assert_close(row, row[0].expand_as(row))
    assert ratio.numel() == int(allowed.sum())


def test_bad_window_and_unknown_names() -> None:
    with pytest.raises(ValueError, match="back, front"):
        build_attention("additive", query_dim=4, memory_dim=4, window=(-1, 2))
    with pytest.raises(ValueError, match="unknown attention"):
        build_attention("nope", query_dim=4, memory_dim=4)
    with pytest.raises(ValueError, match="unknown content scorer"):
        build_attention("local-m", query_dim=4, memory_dim=4, scorer="nope")
    with pytest.raises(ValueError, match="bad options"):
        build_attention("gmm", query_dim=4, memory_dim=4, nonsense=1)
    attn = make("additive", {}, torch.float32)
    attn.window = (1, 1)
    with pytest.raises(ValueError, match="window"):
        attn.attend_all(torch.randn(1, 2, DIM), attn.init_state(torch.randn(1, 3, DIM)))


def test_window_set_mid_utterance_follows_the_last_focus() -> None:
    """Without a window the position is not tracked step by step; a window switched on
    later still centres on the argmax of the latest weights (``last_position``)."""
    torch.manual_seed(0)
    attn = make("location", {}).eval()
    memory, mask = torch.randn(2, 12, DIM), lengths_mask([12, 9])
    state = attn.init_state(memory, mask)
    for _ in range(3):
        _, weights, state = attn(torch.randn(2, DIM), state)
    last = weights.argmax(1)
    assert torch.equal(state.last_position(), last)
    attn.window = (0, 1)
    _, weights, state = attn(torch.randn(2, DIM), state)
    allowed = (torch.arange(12)[None] >= last[:, None]) & (
        torch.arange(12)[None] <= last[:, None] + 1
    )
    assert (weights[~allowed] == 0).all()
    assert torch.equal(state.position, weights.argmax(1))  # tracked while the window is on
