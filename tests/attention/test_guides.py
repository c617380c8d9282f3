"""Attention guides from durations (`aligner.attention.guides`): hand-computed guides for
r = 1 and r = 4, a padded batch, a token of zero frames, soft edges against a direct
formula, the VC path against a hand-made pair, and the divergence's minimum."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention.guides import (
    duration_positions,
    guide_divergence,
    pair_positions,
    path_guide,
)


def guide_of(durations: list[int], r: int = 1, width: float = 0.0) -> torch.Tensor:
    path = duration_positions(torch.tensor(durations))
    steps = -(-len(path) // r)
    return path_guide([path], torch.tensor([len(durations)]), steps, len(durations), r, width)[0]


def test_r1_hard_guide_is_one_hot_and_skips_a_token_of_zero_frames():
    guide = guide_of([2, 0, 3])
    expected = [[1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1], [0, 0, 1]]
    assert guide.tolist() == expected


def test_r4_steps_share_their_frames_between_tokens():
    # frames: 0 0 0 1 | 1 2  (T = 6, two steps, the last one half full)
    guide = guide_of([3, 2, 1], r=4)
    assert torch.allclose(guide, torch.tensor([[0.75, 0.25, 0.0], [0.0, 0.5, 0.5]]))


def test_a_padded_batch_equals_its_items_alone_and_pads_with_zeros():
    durations = [torch.tensor([3, 2, 1, 4]), torch.tensor([1, 0, 2])]
    paths = [duration_positions(d) for d in durations]
    batch = path_guide(paths, torch.tensor([4, 3]), n_steps=5, n_cols=6, r=3, width=1.5)
    assert batch.shape == (2, 5, 6)
    for b, d in enumerate(durations):
        steps = -(-int(d.sum()) // 3)
        alone = guide_of(d.tolist(), r=3, width=1.5)
        assert torch.allclose(batch[b, :steps, : len(d)], alone, atol=1e-6)
        assert batch[b, steps:].abs().sum() == 0 and batch[b, :, len(d) :].abs().sum() == 0
        assert torch.allclose(batch[b, :steps].sum(1), torch.ones(steps), atol=1e-6)


def test_soft_edges_equal_the_gaussian_weighted_share_of_nearby_frames():
    durations, width = [3, 1, 4], 1.2
    tokens = np.repeat(np.arange(3), durations)
    t = np.arange(len(tokens))
    kernel = np.exp(-0.5 * ((t[:, None] - t[None, :]) / width) ** 2)
    kernel[np.abs(t[:, None] - t[None, :]) > np.ceil(3 * width)] = 0  # truncated at 3 widths
    onehot = np.eye(3)[tokens]
    expected = kernel @ onehot / kernel.sum(1, keepdims=True)
    assert np.allclose(guide_of(durations, width=width).numpy(), expected, atol=1e-6)


def test_the_vc_path_of_a_hand_made_pair():
    # token 0: 2 source frames, 4 target frames; token 1: 4 source, 2 target
    positions = pair_positions(torch.tensor([2, 4]), torch.tensor([4, 2]))
    assert torch.allclose(positions, torch.tensor([0.0, 0.25, 0.75, 1.25, 2.5, 4.5]))
    halved = pair_positions(torch.tensor([2, 4]), torch.tensor([4, 2]), reduction=2)
    assert torch.allclose(halved, torch.tensor([0.0, 0.0, 0.125, 0.375, 1.0, 2.0]))
    # a token with no source frames sits on the boundary between its neighbours
    gap = pair_positions(torch.tensor([2, 0, 2]), torch.tensor([1, 2, 1]))
    assert gap[1:3].tolist() == [1.5, 1.5]
    with pytest.raises(ValueError, match="one length"):
        pair_positions(torch.tensor([1, 2]), torch.tensor([1, 2, 3]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=8).filter(lambda d: sum(d) > 0))
def test_equal_durations_map_every_frame_to_itself(durations):
    d = torch.tensor(durations)
    assert torch.allclose(pair_positions(d, d), torch.arange(int(d.sum())).float(), atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=2, max_size=6),
    st.lists(st.integers(1, 5), min_size=2, max_size=6),
)
def test_vc_paths_are_monotonic_and_inside_the_source(src, tgt):
    n = min(len(src), len(tgt))
    positions = pair_positions(torch.tensor(src[:n]), torch.tensor(tgt[:n]), reduction=2)
    assert len(positions) == sum(tgt[:n])
    assert bool((positions.diff() >= -1e-6).all())
    assert 0 <= float(positions.min()) and float(positions.max()) <= -(-sum(src[:n]) // 2) - 1


def test_the_divergence_is_least_when_the_attention_equals_the_guide():
    torch.manual_seed(0)
    guide = guide_of([3, 1, 4, 2], r=2, width=1.0)[None]
    steps = torch.tensor([guide.size(1)])
    at_guide = guide_divergence(guide, guide, steps, eps=0.0)
    assert float(at_guide) == pytest.approx(0.0, abs=1e-6)
    for _ in range(20):
        other = torch.softmax(torch.log(guide + 1e-3) + torch.randn_like(guide), dim=2)
        assert float(guide_divergence(other, guide, steps, eps=0.0)) > 1e-3
        assert guide_divergence(other, guide, steps) > guide_divergence(guide, guide, steps)
    # padded steps do not count
    padded = torch.cat([guide, torch.zeros(1, 3, 4)], dim=1)
    noise = torch.cat([guide, torch.rand(1, 3, 4)], dim=1)
    assert torch.allclose(
        guide_divergence(noise, padded, steps), guide_divergence(guide, guide, steps)
    )
