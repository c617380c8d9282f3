"""The FastVC network (family ``fastvc``): target frames per encoder step from both voices'
durations, rounding along the utterance, teacher forcing against conversion, batches
against items one by one, the speaking rate."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.models.fastpitch.layers import round_along
from aligner.models.fastvc import (
    FastVC,
    FastVCConfig,
    source_frame_index,
    step_durations,
    step_frames,
)

TINY = FastVCConfig(n_mels=8, reduction=2, dim=16, encoder_layers=1, decoder_layers=1,
                    heads=2, ff_hidden=32, predictor_hidden=16)  # fmt: skip

durations = st.lists(st.integers(0, 6), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(durations, st.data(), st.integers(1, 4))
def test_step_frames_share_each_tokens_target_frames_over_its_source_frames(src, data, r):
    src = [*src[:-1], src[-1] + 1]  # at least one source frame
    tgt = data.draw(st.lists(st.integers(0, 6), min_size=len(src), max_size=len(src)))
    frames = step_frames(torch.tensor(src), torch.tensor(tgt), r)
    assert len(frames) == math.ceil(sum(src) / r)
    assert float(frames.sum()) == pytest.approx(sum(tgt))
    # brute force: source frame by source frame
    per_frame, k = [0.0] * sum(src), 0
    for s, t in zip(src, tgt):
        if s == 0:  # passed over: its frames go where the next token starts
            per_frame[min(k, len(per_frame) - 1)] += t
        for j in range(s):
            per_frame[k + j] += t / s
        k += s
    expected = [sum(per_frame[i : i + r]) for i in range(0, len(per_frame), r)]
    assert frames.tolist() == pytest.approx(expected)
    whole = step_durations(torch.tensor(src), torch.tensor(tgt), r)
    assert int(whole.sum()) == sum(tgt) and (whole >= 0).all()
    assert (torch.cumsum(whole.double(), 0) - torch.cumsum(frames, 0)).abs().max() <= 0.5 + 1e-9


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(0, 5), min_size=1, max_size=30))
def test_rounding_along_the_utterance_keeps_every_prefix_within_half_a_frame(frames):
    x = torch.tensor([frames], dtype=torch.float64)
    whole = round_along(x, torch.ones_like(x, dtype=torch.bool))
    assert (whole >= 0).all()
    prefix = torch.cumsum(whole.double(), 1) - torch.cumsum(x, 1)
    assert prefix.abs().max() <= 0.5 + 1e-9
    # step by step rounding would drift: 0.6 frames a step, ten steps -> 10, not 6
    assert round_along(torch.full((1, 10), 0.6), torch.ones(1, 10, dtype=torch.bool)).sum() == 6


def test_padded_steps_get_no_frames():
    x = torch.tensor([[1.4, 1.4, 1.4, 9.0]])
    mask = torch.tensor([[True, True, True, False]])
    assert round_along(x, mask).tolist() == [[1, 2, 1, 0]]


@settings(max_examples=60, deadline=None)
@given(st.lists(durations, min_size=1, max_size=3), st.integers(1, 3))
def test_each_target_frame_maps_into_its_steps_source_frames(items, r):
    n = max(len(d) for d in items)
    batch = torch.tensor([d + [0] * (n - len(d)) for d in items])
    total = int(batch.sum(1).max())
    index = source_frame_index(batch, r, total)
    assert index.shape == (len(items), total)
    for i, d in enumerate(items):  # brute force: frame by frame, step by step
        expected = []
        for k, frames in enumerate(d):
            expected += [k * r + min(r - 1, int((j + 0.5) * r / frames)) for j in range(frames)]
        assert index[i, : len(expected)].tolist() == expected
        # a step's frames run forward through its source frames and reach the last one
        if any(f >= r for f in d):
            k = next(k for k, f in enumerate(d) if f >= r)
            start = sum(d[:k])
            assert set(index[i, start : start + d[k]].tolist()) == set(range(k * r, k * r + r))


def _model(frame_context: int | None = None) -> FastVC:
    torch.manual_seed(0)
    return FastVC(FastVCConfig(**{**TINY.to_dict(), "frame_context": frame_context})).eval()


def test_config_refuses_a_negative_frame_context():
    with pytest.raises(ValueError, match="frame_context must be >= 0"):
        FastVCConfig.from_dict({"frame_context": -1})


def test_the_source_frames_reach_only_the_target_frames_mapped_near_them():
    """With the steps' vectors held fixed, changing one source frame changes the decoder's
    input only at target frames mapped within ``frame_context`` of it."""
    model = _model(frame_context=1)
    src, lengths = torch.randn(1, 8, 8), torch.tensor([8])
    d = torch.tensor([[2, 2, 2, 2]])
    index = source_frame_index(d, 2, 8)
    before = model.source_frames(src, lengths, index)
    src2 = src.clone()
    src2[0, 6] += 5.0
    after = model.source_frames(src2, lengths, index)
    changed = (after - before).abs().amax(-1)[0] > 1e-6
    assert changed.tolist() == [abs(int(i) - 6) <= 1 for i in index[0]]


@pytest.mark.parametrize("frame_context", [None, 2])
def test_teacher_forcing_spreads_each_step_over_its_frames(frame_context):
    model = _model(frame_context)
    src = torch.randn(1, 7, 8)
    d = torch.tensor([[2, 0, 1, 3]])  # ceil(7 / 2) steps
    out = model(src, torch.tensor([7]), d)
    assert out.mel.shape == (1, 6, 8) and out.mel_mask.all()
    assert out.enc_mask.shape == (1, 4) and out.durations.tolist() == d.tolist()
    # conversion with the durations it predicts is teacher forcing on them
    free = model.infer(src, torch.tensor([7]))
    forced = model(src, torch.tensor([7]), free.durations)
    assert torch.allclose(free.mel_post, forced.mel_post, atol=1e-5)


@pytest.mark.parametrize("frame_context", [None, 2])
def test_a_batch_converts_as_its_items_one_by_one(frame_context):
    model = _model(frame_context)
    lengths = [9, 4, 6]
    srcs = [torch.randn(n, 8) for n in lengths]
    batch = torch.zeros(3, 9, 8)
    for i, s in enumerate(srcs):
        batch[i, : len(s)] = s
    out = model.infer(batch, torch.tensor(lengths))
    for i, s in enumerate(srcs):
        alone = model.infer(s[None], torch.tensor([len(s)]))
        n = int(alone.enc_mask.sum())
        assert out.durations[i, :n].tolist() == alone.durations[0].tolist()
        t = int(alone.mel_mask.sum())
        assert torch.allclose(out.mel_post[i, :t], alone.mel_post[0], atol=1e-4)
        assert not out.mel_mask[i, t:].any()


def test_phone_heads_name_steps_and_frames_and_leave_the_mel_as_it_is():
    plain = _model(2)
    named = FastVC(dataclasses.replace(plain.config, phone_classes=5)).eval()
    missing, unexpected = named.load_state_dict(plain.state_dict(), strict=False)
    assert all(k.startswith("phone_heads.") for k in missing) and not unexpected
    src, lengths, d = torch.randn(2, 7, 8), torch.tensor([7, 5]), torch.tensor([[2, 0, 1, 3]] * 2)
    forced, alone = named(src, lengths, d), plain(src, lengths, d)
    assert torch.equal(forced.mel_post, alone.mel_post) and alone.phone_logits is None
    steps, frames = forced.phone_logits
    assert steps.shape == (2, 4, 5) and frames.shape == (2, 6, 5)
    assert named.infer(src, lengths).phone_logits is None  # conversion names no phones
    with pytest.raises(ValueError, match="phone_classes must be >= 0"):
        FastVCConfig.from_dict({"phone_classes": -1})


def test_pace_divides_the_predicted_frames():
    model = _model()
    with torch.no_grad():
        model.duration.out.bias.fill_(math.log1p(3.0))  # about three frames a step
        model.duration.out.weight.zero_()
    src = torch.randn(1, 20, 8)
    slow = model.infer(src, torch.tensor([20]))
    fast = model.infer(src, torch.tensor([20]), pace=2.0)
    assert int(slow.durations.sum()) == 30 and int(fast.durations.sum()) == 15
    with pytest.raises(ValueError, match="pace must be positive"):
        model.infer(src, torch.tensor([20]), pace=0)


def test_config_refuses_a_reduction_below_one():
    with pytest.raises(ValueError, match="reduction must be >= 1"):
        FastVCConfig.from_dict({"reduction": 0})


@pytest.mark.parametrize("name", ["fastvc_small", "fastvc"])
def test_recipes_build_at_the_size_they_claim(name: str) -> None:
    from pathlib import Path

    from aligner.config import load_config

    cfg = load_config(Path(__file__).parents[2] / "recipes" / "vc" / f"{name}.yaml")
    assert (cfg.task, cfg.family) == ("vc", "fastvc")
    model = {k: v for k, v in cfg.model.items() if k != "loss"}
    net = FastVC(FastVCConfig.from_dict({**model, "n_mels": 80}))
    params = sum(p.numel() for p in net.parameters())
    assert (params < 5e6) == name.endswith("_small"), params
