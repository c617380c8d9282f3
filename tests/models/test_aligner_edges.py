"""What lets the alignment model align real recordings: the prior laid over the frames
with sound (against the plain prior on a hand-made case), the spans of sound found in a
log-mel, per-utterance normalization, and ``<s>`` before the tokens."""

from __future__ import annotations

import math

import pytest
import torch

from aligner.attention.prior import beta_binomial_log_prior, spanned_log_prior
from aligner.audio.features import fill_edge_padding, speech_spans
from aligner.models.alignment import AlignerConfig, AlignmentModel, utterance_normalize


def test_a_span_of_all_frames_is_the_plain_prior():
    frames, tokens = torch.tensor([9, 6]), torch.tensor([4, 3])
    plain = beta_binomial_log_prior(frames, tokens, 1.0)
    spans = torch.stack([torch.zeros(2, dtype=torch.long), frames], 1)
    assert torch.allclose(spanned_log_prior(frames, tokens, spans, 1.0), plain)


def test_frames_outside_the_span_take_its_first_and_last_rows():
    frames, tokens, spans = torch.tensor([12]), torch.tensor([4]), torch.tensor([[3, 9]])
    inner = beta_binomial_log_prior(torch.tensor([6]), tokens, 1.0)[0]
    out = spanned_log_prior(frames, tokens, spans, 1.0)[0]
    assert torch.allclose(out[3:9], inner)
    for t in range(3):
        assert torch.allclose(out[t], inner[0])  # the leading silence prefers the first token
    for t in range(9, 12):
        assert torch.allclose(out[t], inner[-1])
    assert int(out[0].argmax()) == 0 and int(out[-1].argmax()) == 3


def test_padded_frames_of_a_spanned_prior_are_zero():
    out = spanned_log_prior(
        torch.tensor([5, 8]), torch.tensor([3, 3]), torch.tensor([[1, 4], [0, 8]])
    )
    assert out.shape == (2, 8, 3) and (out[0, 5:] == 0).all()


def _log_mel(levels_db: list[float], bins: int = 4) -> torch.Tensor:
    """``(T, bins)`` natural-log magnitude mels whose summed magnitude is at `levels_db`."""
    total = torch.tensor(levels_db) / 20.0 * math.log(10.0)
    return (total - math.log(bins))[:, None].expand(-1, bins).clone()


def test_speech_spans_cover_the_frames_within_top_db_of_the_loudest():
    quiet, loud = -80.0, 0.0
    a = _log_mel([quiet, quiet, -30.0, loud, quiet, -39.0, quiet, quiet])
    b = _log_mel([loud, -10.0, -5.0, quiet, quiet, quiet, quiet, quiet])
    mels = torch.stack([a, b])
    spans = speech_spans(mels, torch.tensor([8, 3]), top_db=40.0)
    assert spans.tolist() == [[2, 6], [0, 3]]  # b's padding is not looked at
    assert speech_spans(mels, torch.tensor([8, 3]), top_db=20.0).tolist() == [[3, 4], [0, 3]]
    # power 2: the same levels in a power mel are half as many dB in log units
    power = speech_spans(2 * mels, torch.tensor([8, 3]), top_db=40.0, power=2.0)
    assert power.tolist() == [[2, 6], [0, 3]]


def test_speech_spans_rise_above_a_noise_floor_less_than_top_db_down():
    """Steady noise 35 dB under the loudest frame at both edges: the fixed rule spans every
    frame; 6 dB above the floor the span is the sound (`aligner.audio.trim.noise_floor`)."""
    levels = [-35.0] * 12 + [0.0, -20.0, -3.0] + [-34.5] * 12
    mel = _log_mel(levels)[None]
    lengths = torch.tensor([len(levels)])
    assert speech_spans(mel, lengths, margin_db=0).tolist() == [[0, len(levels)]]
    assert speech_spans(mel, lengths).tolist() == [[12, 15]]


def test_a_noisy_recordings_digital_silence_padding_is_filled_with_its_background():
    """Zeros before and after a recording whose noise sits 35 dB down become its noise's
    median mel; the recording itself, a clean one (background 70 dB down: Festival's quiet
    edges), and a batch's padding are left as they are; an item gets in a batch what it
    gets alone."""
    noisy = [-100.0] * 5 + [-35.0] * 12 + [0.0, -10.0, 0.0] + [-34.0] * 12 + [-100.0] * 3
    clean = [-80.0] * 5 + [0.0] * 5 + [-70.0] * 12
    a, b = _log_mel(noisy), _log_mel(clean)
    alone = fill_edge_padding(a[None], a[None], torch.tensor([len(noisy)]))[0]
    background = _log_mel([-35.0] * 12 + [-34.0] * 12).median(dim=0).values
    assert torch.equal(alone[:5], background.expand(5, -1))
    assert torch.equal(alone[-3:], background.expand(3, -1))
    assert torch.equal(alone[5:-3], a[5:-3])
    kept = fill_edge_padding(b[None], b[None], torch.tensor([len(clean)]))
    assert torch.equal(kept[0], b)
    batch = torch.zeros(2, len(noisy), 4)
    batch[0], batch[1, : len(clean)] = a, b
    filled = fill_edge_padding(batch, batch, torch.tensor([len(noisy), len(clean)]))
    assert torch.equal(filled[0], alone) and torch.equal(filled[1], batch[1])


def test_a_silent_or_flat_utterance_spans_all_its_frames():
    flat = torch.zeros(1, 5, 3)
    assert speech_spans(flat, torch.tensor([5])).tolist() == [[0, 5]]


def test_utterance_normalization_ignores_padding_and_removes_an_offset():
    g = torch.Generator().manual_seed(0)
    mel = torch.randn(1, 7, 5, generator=g) * 3 + 2
    mask = torch.tensor([[True] * 5 + [False] * 2])
    out = utterance_normalize(mel, mask)
    assert torch.allclose(out[0, :5].mean(0), torch.zeros(5), atol=1e-5)
    assert torch.allclose(out[0, :5].std(0, unbiased=False), torch.ones(5), atol=1e-4)
    assert (out[0, 5:] == 0).all()
    shifted = utterance_normalize(mel + torch.linspace(-4, 4, 5), mask)  # another microphone
    assert torch.allclose(shifted, out, atol=1e-4)


@pytest.mark.parametrize("norm", ["global", "utterance"])
def test_a_padded_batch_with_spans_equals_its_items(norm):
    torch.manual_seed(0)
    cfg = AlignerConfig(
        n_symbols=10, n_mels=6, channels=16, attn_dim=8, mel_norm=norm, prior_silence_db=40.0
    )
    m = AlignmentModel(cfg).eval()
    tokens = torch.tensor([[2, 5, 6, 3], [2, 7, 3, 0]])
    n, t = torch.tensor([4, 3]), torch.tensor([10, 7])
    mel = torch.randn(2, 10, 6) * (torch.arange(10) < t[:, None])[..., None]
    spans = torch.tensor([[2, 8], [1, 7]])
    out = m(tokens, n, mel, t, spans=spans)
    for b in range(2):
        one = m(
            tokens[b : b + 1, : n[b]],
            n[b : b + 1],
            mel[b : b + 1, : t[b]],
            t[b : b + 1],
            spans=spans[b : b + 1],
        )
        assert torch.allclose(out.alignments[b, : t[b], : n[b]], one.alignments[0], atol=1e-5)


def test_an_unknown_mel_norm_is_refused():
    with pytest.raises(ValueError, match="mel_norm"):
        AlignmentModel(AlignerConfig(n_symbols=5, mel_norm="speaker"))
