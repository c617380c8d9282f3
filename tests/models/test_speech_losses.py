"""Tacotron losses against hand computation, with masks and a reduction factor."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention.base import lengths_to_mask
from aligner.attention.losses import guided_attention_loss
from aligner.models.tacotron.model import TacotronOutput
from aligner.tasks.speech_losses import (
    GuidedSchedule,
    TacotronLossConfig,
    masked_mel_loss,
    stop_loss,
    stop_targets,
    tacotron_loss,
)


def test_masked_mel_loss_by_hand() -> None:
    pred = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]])
    target = torch.tensor([[[0.0, 0.0], [3.0, 6.0], [0.0, 0.0]]])
    mask = torch.tensor([[True, True, False]])
    l1, mse = masked_mel_loss(pred, target, mask)
    # valid differences: 1, 2, 0, -2 over 4 elements; the padded frame is ignored
    assert l1.item() == pytest.approx((1 + 2 + 0 + 2) / 4)
    assert mse.item() == pytest.approx((1 + 4 + 0 + 4) / 4)


def test_stop_targets_with_reduction() -> None:
    target, mask = stop_targets(torch.tensor([7, 4, 6]), r=3, steps=3)
    # 7 frames -> steps [0,3) [3,6) [6,9): last valid step 2; 4 -> step 1; 6 -> step 1
    assert target.tolist() == [[0, 0, 1], [0, 1, 0], [0, 1, 0]]
    assert mask.tolist() == [[True, True, True], [True, True, False], [True, True, False]]


def test_stop_loss_by_hand() -> None:
    logits = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.3, 9.0]])
    lengths = torch.tensor([5, 3])  # r = 2: item 0 has 3 steps, item 1 has 2
    w = 4.0

    def bce(x: float, y: int) -> float:
        p = 1 / (1 + math.exp(-x))
        return -(w * y * math.log(p) + (1 - y) * math.log(1 - p))

    expected = (bce(0.5, 0) + bce(-1.0, 0) + bce(2.0, 1) + bce(1.5, 0) + bce(0.3, 1)) / 5
    assert stop_loss(logits, lengths, r=2, pos_weight=w).item() == pytest.approx(expected, rel=1e-6)


@given(st.floats(0.1, 5.0), st.integers(0, 20000))
@settings(max_examples=30, deadline=None)
def test_guided_schedules(weight: float, step: int) -> None:
    assert GuidedSchedule(weight, "exp", decay=0.999)(step) == pytest.approx(weight * 0.999**step)
    linear = GuidedSchedule(weight, "linear", until=10000)(step)
    assert linear == pytest.approx(weight * max(0.0, 1 - step / 10000))
    assert GuidedSchedule(weight, "constant")(step) == weight
    assert GuidedSchedule(weight, "none")(step) == 0.0


@given(st.floats(0.1, 5.0), st.floats(0.0, 1.0), st.integers(0, 20000))
@settings(max_examples=30, deadline=None)
def test_a_floor_holds_a_falling_guide(weight: float, share: float, step: int) -> None:
    floor = share * weight
    exp = GuidedSchedule(weight, "exp", decay=0.99, floor=floor)(step)
    assert exp == pytest.approx(max(floor, weight * 0.99**step))
    linear = GuidedSchedule(weight, "linear", until=300, floor=floor)(step)
    assert linear == pytest.approx(max(floor, weight * max(0.0, 1 - step / 300)))
    assert GuidedSchedule(weight, "constant", floor=floor)(step) == weight


def test_guided_schedule_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="guided.mode"):
        GuidedSchedule(1.0, "cosine")
    with pytest.raises(ValueError, match="guided.floor must be between 0 and the weight 1.0"):
        GuidedSchedule(1.0, "exp", floor=2.0)


def _output(mel_lengths: list[int], enc_lengths: list[int], r: int) -> TacotronOutput:
    b, t, n = len(mel_lengths), max(mel_lengths), max(enc_lengths)
    steps = -(-t // r)
    mel_mask = lengths_to_mask(torch.tensor(mel_lengths), t)
    enc_mask = lengths_to_mask(torch.tensor(enc_lengths), n)
    align = torch.softmax(torch.randn(b, steps, n), -1) * enc_mask[:, None]
    return TacotronOutput(
        torch.randn(b, t, 3), torch.randn(b, t, 3), torch.randn(b, steps), align, mel_mask, enc_mask
    )


def test_tacotron_loss_is_sum_of_parts() -> None:
    r, lengths = 2, torch.tensor([7, 4])
    out = _output([7, 4], [5, 3], r)
    target = torch.randn(2, 7, 3)
    cfg = TacotronLossConfig(
        mel_weight=2.0,
        stop_weight=0.5,
        stop_pos_weight=3.0,
        guided=GuidedSchedule(10.0, "exp", decay=0.5),
        guided_g=0.3,
    )
    total, parts = tacotron_loss(out, target, lengths, r, step=2, cfg=cfg)
    l1, mse = masked_mel_loss(out.mel, target, out.mel_mask)
    l1p, msep = masked_mel_loss(out.mel_post, target, out.mel_mask)
    stop = stop_loss(out.stop_logits, lengths, r, 3.0)
    guided = guided_attention_loss(out.alignments, lengths, torch.tensor([5, 3]), 0.3, r)
    expected = 2.0 * (l1 + mse + l1p + msep) + 0.5 * stop + 10.0 * 0.25 * guided
    assert total.item() == pytest.approx(expected.item(), rel=1e-6)
    assert parts["guided_weight"] == pytest.approx(2.5) and parts["stop"] == pytest.approx(
        stop.item()
    )
    no_guide, parts = tacotron_loss(out, target, lengths, r, step=2, cfg=TacotronLossConfig())
    assert "guided" not in parts and no_guide.item() < 1e6


def test_tacotron_loss_ignores_padding() -> None:
    out = _output([6, 3], [4, 2], 3)
    target = torch.randn(2, 6, 3)
    cfg = TacotronLossConfig(guided=GuidedSchedule(1.0, "constant"))
    before, _ = tacotron_loss(out, target, torch.tensor([6, 3]), 3, 0, cfg)
    out.mel[1, 3:] += 50.0
    out.mel_post[1, 3:] -= 50.0
    target[1, 3:] = 7.0
    out.stop_logits[1, 1:] = 30.0
    after, _ = tacotron_loss(out, target, torch.tensor([6, 3]), 3, 0, cfg)
    assert after.item() == pytest.approx(before.item(), rel=1e-6)
