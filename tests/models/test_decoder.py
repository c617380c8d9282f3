"""Tacotron decoder: teacher forcing vs the step function, batching, reduction factor,
per-item stop, length limit and the monotonic window."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.models.tacotron.decoder import TacotronDecoder
from aligner.models.tacotron.prenet import Prenet

from .helpers import MEM, N_MELS, padded, small_decoder


def _memory(lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    return padded(lengths, MEM), lengths_to_mask(torch.tensor(lengths))


@pytest.mark.parametrize("r", [1, 3])
def test_previous_frames_are_last_frame_of_each_group(r: int) -> None:
    dec = small_decoder(r)
    mel = torch.arange(7, dtype=torch.float)[None, :, None].expand(1, 7, N_MELS)
    prev = dec.previous_frames(mel)[0, :, 0].tolist()
    steps = -(-7 // r)
    assert prev == [0.0] + [float(s * r - 1) for s in range(1, steps)]


@pytest.mark.parametrize("r", [1, 2, 3])
def test_teacher_forcing_equals_step_loop(r: int) -> None:
    dec = small_decoder(r)
    memory, mask = _memory([6, 4])
    mel = torch.randn(2, 8, N_MELS)
    out = dec(memory, mask, mel)
    steps = -(-8 // r)
    assert out.mel.shape == (2, 8, N_MELS)
    assert out.stop_logits.shape == (2, steps) and out.alignments.shape == (2, steps, 6)
    state = dec.init_state(memory, mask)
    prev = dec.previous_frames(mel)
    frames, stops, weights = [], [], []
    for s in range(steps):
        f, stop, w, state = dec.step(prev[:, s], state)
        frames.append(f)
        stops.append(stop)
        weights.append(w)
    torch.testing.assert_close(out.mel, torch.cat(frames, 1)[:, :8])
    torch.testing.assert_close(out.stop_logits, torch.stack(stops, 1))
    torch.testing.assert_close(out.alignments, torch.stack(weights, 1))


def test_alignments_zero_on_padding_and_sum_to_one() -> None:
    dec = small_decoder(2)
    memory, mask = _memory([6, 3])
    out = dec(memory, mask, torch.randn(2, 9, N_MELS))
    assert out.alignments[1, :, 3:].abs().max() == 0
    torch.testing.assert_close(out.alignments.sum(-1), torch.ones(2, 5))


def test_batch_equals_one_by_one() -> None:
    dec = small_decoder(2)
    enc_lengths, mel_lengths = [6, 3, 5], [9, 4, 7]
    memory, mask = _memory(enc_lengths)
    mel = padded(mel_lengths, N_MELS)
    out = dec(memory, mask, mel)
    for i, (n, t) in enumerate(zip(enc_lengths, mel_lengths)):
        alone = dec(memory[i : i + 1, :n], mask[i : i + 1, :n], mel[i : i + 1, :t])
        torch.testing.assert_close(out.mel[i, :t], alone.mel[0], atol=1e-5, rtol=1e-5)
        steps = alone.alignments.size(1)
        torch.testing.assert_close(
            out.alignments[i, :steps, :n], alone.alignments[0], atol=1e-5, rtol=1e-5
        )


def test_prenet_dropout_kept_at_inference_unless_disabled() -> None:
    prenet = Prenet(4, (64, 64), dropout=0.5).eval()
    x = torch.randn(3, 4)
    assert not torch.equal(prenet(x), prenet(x))  # always-on dropout, as Tacotron 2
    prenet.always_dropout = False
    assert torch.equal(prenet(x), prenet(x))


class StopAt(nn.Module):
    """Stop layer stub: item b's logit is +20 at step ``at[b]`` (1-based), else -20. Items
    leave the decoder's batch when they stop or reach their step limit ``limits[b]``, so the
    stub drops them too."""

    def __init__(self, at: list[int], limits: list[int] | None = None) -> None:
        super().__init__()
        self.at, self.calls = torch.tensor(at), 0
        self.limits = (
            torch.tensor(limits) if limits is not None else torch.full_like(self.at, 10**6)
        )

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        assert feats.size(0) == len(self.at), "the stub and the decoder disagree on the batch"
        hit = (self.at == self.calls).float() * 40 - 20
        out = hit[:, None, None].expand(feats.size(0), feats.size(1), 1)
        alive = (self.at != self.calls) & (self.limits > self.calls)
        self.at, self.limits = self.at[alive], self.limits[alive]
        return out


def test_generate_stops_per_item_and_reports_limit() -> None:
    r = 2
    dec = small_decoder(r)
    memory, mask = _memory([5, 3, 4])
    dec.stop = StopAt([2, 4, 99], [5, 3, 4])
    out = dec.generate(memory, mask, max_length_ratio=2.0)  # limits: ceil(2n/r) = 5, 3, 4 steps
    assert out.lengths.tolist() == [2 * r, 3 * r, 4 * r]
    assert out.hit_max.tolist() == [False, True, True]
    assert dec.stop.calls == 4 and out.mel.shape == (3, 4 * r, N_MELS)
    assert out.mel[0, 2 * r :].abs().max() == 0 and out.mel[0, : 2 * r].abs().min() > 0
    assert len(dec.stop.at) == 0  # every item left the batch
    # each item alone produces the same frames (eval mode, no prenet dropout)
    for i, n in enumerate([5, 3, 4]):
        dec.stop = StopAt([[2, 4, 99][i]], [[5, 3, 4][i]])
        alone = dec.generate(memory[i : i + 1, :n], mask[i : i + 1, :n], max_length_ratio=2.0)
        t = int(alone.lengths[0])
        assert t == out.lengths[i]
        torch.testing.assert_close(alone.mel[0], out.mel[i, :t], atol=1e-5, rtol=1e-5)
        steps = t // r
        torch.testing.assert_close(alone.alignments[0, :steps], out.alignments[i, :steps, :n])


def test_finished_items_leave_the_batch() -> None:
    """After an item stops, the decoder steps only the others (the stub sees the smaller
    batch), and the stop logits past an item's end are -inf."""
    dec = small_decoder(1)
    memory, mask = _memory([6, 6, 6])
    dec.stop = StopAt([1, 3, 5])
    out = dec.generate(memory, mask, max_length_ratio=10.0)
    assert out.lengths.tolist() == [1, 3, 5] and not out.hit_max.any()
    assert torch.isinf(out.stop_logits[0, 1:]).all() and torch.isinf(out.stop_logits[1, 3:]).all()
    assert torch.isfinite(out.stop_logits[2]).all()
    assert out.alignments[0, 1:].abs().max() == 0


def test_generate_max_steps_caps_everything() -> None:
    dec = small_decoder(1)
    memory, mask = _memory([5, 3])
    dec.stop = StopAt([100, 100], [6, 6])
    out = dec.generate(memory, mask, max_length_ratio=10.0, max_steps=6)
    assert out.lengths.tolist() == [6, 6] and out.hit_max.all()


def test_generate_window_keeps_attention_local() -> None:
    dec = small_decoder(1)
    memory, mask = _memory([9, 6])
    dec.stop = StopAt([100, 100])
    out = dec.generate(memory, mask, max_steps=12, window=(0, 1))
    assert dec.attention.window is None  # restored after generation
    w = out.alignments  # (B, S, T)
    position = torch.zeros(2, dtype=torch.long)
    for s in range(w.size(1)):
        support = w[:, s] > 0
        j = torch.arange(9)[None]
        assert not (support & ((j < position[:, None]) | (j > position[:, None] + 1))).any()
        position = w[:, s].argmax(1)


def _feedback_decoder(feedback: float, r: int) -> TacotronDecoder:
    """A small decoder in training mode with every dropout off, fed back `feedback`."""
    dec = small_decoder(r)
    dec.rnn_dropout, dec.prenet.dropout, dec.feedback = 0.0, 0.0, feedback
    return dec.train()


@pytest.mark.parametrize("r", [1, 3])
def test_feedback_one_feeds_every_step_its_own_frame_without_gradient(r: int) -> None:
    """feedback = 1: teacher forcing is the free-running step loop (own last frame fed
    back, detached), in outputs and in every parameter's gradient."""
    torch.manual_seed(0)
    dec = _feedback_decoder(1.0, r)
    memory, mask = _memory([6, 4])
    mel = torch.randn(2, 9, N_MELS)
    out = dec(memory, mask, mel)
    (out.mel.square().sum() + out.stop_logits.sum()).backward()
    fed = {n: p.grad.clone() for n, p in dec.named_parameters() if p.grad is not None}
    dec.zero_grad()
    state, frame = dec.init_state(memory, mask), torch.zeros(2, N_MELS)
    frames, stops = [], []
    for _ in range(-(-9 // r)):
        f, stop, _, state = dec.step(frame, state)
        frames.append(f)
        stops.append(stop)
        frame = f[:, -1].detach()
    loop_mel = torch.cat(frames, 1)[:, :9]
    torch.testing.assert_close(out.mel, loop_mel)
    (loop_mel.square().sum() + torch.stack(stops, 1).sum()).backward()
    for name, p in dec.named_parameters():
        if p.grad is not None:
            torch.testing.assert_close(fed[name], p.grad, msg=name)


def test_feedback_zero_or_eval_mode_feeds_the_recorded_frames() -> None:
    torch.manual_seed(0)
    memory, mask = _memory([6, 4])
    mel = torch.randn(2, 8, N_MELS)
    plain = _feedback_decoder(0.0, 2)
    expected = plain(memory, mask, mel).mel
    fed = _feedback_decoder(1.0, 2)
    fed.load_state_dict(plain.state_dict())
    torch.testing.assert_close(fed.eval()(memory, mask, mel).mel, expected)
    assert not torch.allclose(fed.train()(memory, mask, mel).mel, expected)


def test_feedback_is_drawn_per_item_and_step() -> None:
    """Two copies of one item in a batch, feedback 0.5: over a few draws their outputs
    part at least once (each item draws its own steps)."""
    dec = _feedback_decoder(0.5, 1)
    memory, mask = _memory([5])
    memory, mask = memory.expand(2, -1, -1), mask.expand(2, -1)
    mel = torch.randn(1, 12, N_MELS).expand(2, -1, -1)
    parted = False
    for seed in range(5):
        torch.manual_seed(seed)
        out = dec(memory, mask, mel).mel
        parted |= not torch.allclose(out[0], out[1])
    assert parted


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_feedback_outside_zero_one_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="feedback"):
        TacotronDecoder(N_MELS, MEM, feedback=bad)
