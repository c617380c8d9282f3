"""The FastPitch network: the length regulator against a plain repeat, padding that changes
nothing, the speaking rate, the fit of predicted durations to a recording, rebuilding from
a checkpoint's symbols."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.models.fastpitch.layers import (
    FFTBlock,
    fit_durations,
    kernel_pair,
    regulate_length,
    round_along,
    token_path,
)
from aligner.models.fastpitch.model import FastPitch, FastPitchConfig

durations_lists = st.lists(
    st.lists(st.integers(0, 5), min_size=1, max_size=6), min_size=1, max_size=4
)


@settings(max_examples=60, deadline=None)
@given(durations_lists)
def test_length_regulator_repeats_each_token_for_its_frames(lists) -> None:
    n = max(len(d) for d in lists)
    durations = torch.tensor([d + [0] * (n - len(d)) for d in lists])
    x = torch.randn(len(lists), n, 3)
    frames, lengths = regulate_length(x, durations)
    for b, d in enumerate(lists):
        expected = torch.repeat_interleave(x[b, : len(d)], torch.tensor(d), dim=0)
        assert int(lengths[b]) == sum(d)
        torch.testing.assert_close(frames[b, : sum(d)], expected)
        assert frames[b, sum(d) :].abs().sum() == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=8))
def test_token_path_is_the_one_hot_token_of_every_frame(d) -> None:
    path = token_path(torch.tensor(d))
    assert path.shape == (sum(d), len(d))
    assert (path.sum(1) == 1).all()
    assert path.sum(0).long().tolist() == d
    assert (path.argmax(1).diff() >= 0).all()  # monotonic


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.floats(0.0, 20.0, width=32), min_size=1, max_size=10
    ),  # as the float32 tensor holds them
    st.integers(0, 120),
    st.data(),
)
def test_fitted_durations_fill_the_recording_in_proportion(frames, n_frames, data) -> None:
    required = torch.tensor(
        data.draw(st.lists(st.booleans(), min_size=len(frames), max_size=len(frames)))
    )
    out = fit_durations(torch.tensor(frames), n_frames, required)
    assert int(out.sum()) == n_frames and (out >= 0).all()
    if int(required.sum()) <= n_frames:
        assert (out[required] >= 1).all()
    if not required.any() and sum(frames) > 0:  # every boundary within half a frame
        scaled = torch.tensor(frames, dtype=torch.float64) * n_frames / sum(frames)
        drift = torch.cumsum(out.double(), 0) - torch.cumsum(scaled, 0)
        assert drift.abs().max() <= 0.5 + 1e-9


CFG = {"n_symbols": 12, "n_mels": 8, "dim": 16, "heads": 2, "ff_hidden": 24}
CFG |= {"predictor_hidden": 16, "postnet": {"channels": 8, "n_convs": 2, "kernel_size": 3}}


def _model() -> FastPitch:
    torch.manual_seed(0)
    model = FastPitch(FastPitchConfig.from_dict(CFG)).eval()
    with torch.no_grad():  # durations of a few frames a token
        model.duration.out.bias.fill_(1.5)
    return model


def _batch():
    seqs = [torch.randint(1, 12, (n,)) for n in (7, 3, 5)]
    tokens = torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    return seqs, tokens, torch.tensor([len(s) for s in seqs])


def test_a_padded_batch_gives_each_item_what_it_gives_alone() -> None:
    model = _model()
    seqs, tokens, lengths = _batch()
    durations = torch.randint(0, 4, tokens.shape) * (tokens > 0)
    durations[:, 0] = 2  # some frames for every item
    pitch, energy = torch.randn(tokens.shape), torch.randn(tokens.shape)
    batch = model(tokens, lengths, durations, pitch, energy)
    free = model.infer(tokens, lengths)
    for i, s in enumerate(seqs):
        n = len(s)
        one = model(s[None], lengths[i : i + 1], durations[i : i + 1, :n], pitch[i : i + 1, :n],
                    energy[i : i + 1, :n])  # fmt: skip
        t = int(durations[i].sum())
        torch.testing.assert_close(batch.mel_post[i, :t], one.mel_post[0], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(batch.log_durations[i, :n], one.log_durations[0])
        alone = model.infer(s[None], lengths[i : i + 1])
        assert free.durations[i, :n].tolist() == alone.durations[0].tolist()
        t = int(alone.durations.sum())
        torch.testing.assert_close(free.mel_post[i, :t], alone.mel_post[0], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("pace", [0.5, 1.0, 2.0])
def test_pace_divides_the_predicted_durations(pace: float) -> None:
    model = _model()
    _, tokens, lengths = _batch()
    out = model.infer(tokens, lengths, pace)
    frames = torch.expm1(out.log_durations).clamp(min=0) / pace
    expected = round_along(frames, out.enc_mask)
    ends = torch.cumsum(out.durations.double(), 1) - torch.cumsum(frames.double() * out.enc_mask, 1)
    assert ends.abs().max() <= 0.5 + 1e-6  # every boundary within half a frame
    assert out.durations.tolist() == expected.tolist()
    assert out.mel_mask.sum(1).tolist() == expected.sum(1).tolist()
    slow, fast = model.infer(tokens, lengths, 0.5), model.infer(tokens, lengths, 2.0)
    assert (slow.mel_mask.sum(1) > fast.mel_mask.sum(1)).all()


def test_a_required_token_is_never_dropped() -> None:
    model = _model()
    with torch.no_grad():  # a fraction of a frame a token: most round to none
        model.duration.out.bias.fill_(-1.5)
    _, tokens, lengths = _batch()
    free = model.infer(tokens, lengths)
    required = torch.zeros_like(tokens, dtype=torch.bool)
    required[:, ::2] = True  # every other token a phone
    kept = model.infer(tokens, lengths, required=required)
    mask = kept.enc_mask
    assert ((free.durations == 0) & required & mask).any()  # dropped without the rule
    assert (kept.durations[required & mask] >= 1).all()
    assert (kept.durations[~mask] == 0).all()
    # the rule adds frames only where a required token had none
    added = kept.durations - free.durations
    assert ((added == 0) | ((added == 1) & (free.durations == 0) & required)).all()


def test_symbols_rebuild_the_same_network() -> None:
    model = _model()
    again = FastPitch.from_symbols({"model": model.config.to_dict()}, model.state_dict()).eval()
    _, tokens, lengths = _batch()
    torch.testing.assert_close(again.infer(tokens, lengths).mel, model.infer(tokens, lengths).mel)
    with pytest.raises(ValueError, match="n_symbols"):
        FastPitch(FastPitchConfig())


@pytest.mark.parametrize("name", ["fastpitch_small", "fastpitch"])
def test_recipes_build_at_the_size_they_claim(name: str) -> None:
    from pathlib import Path

    from aligner.config import load_config

    cfg = load_config(Path(__file__).parents[2] / "recipes" / "tts" / f"{name}.yaml")
    assert (cfg.task, cfg.family) == ("tts", "fastpitch")
    model = {k: v for k, v in cfg.model.items() if k != "loss"}
    net = FastPitch(FastPitchConfig.from_dict({**model, "n_symbols": 60, "n_mels": 80}))
    params = sum(p.numel() for p in net.parameters())
    assert (params < 5e6) == name.endswith("_small"), params


def test_a_required_token_keeps_its_frame_when_another_needs_one() -> None:
    required = torch.tensor([False, False, True, True, False])
    out = fit_durations(torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0]), 2, required)
    assert out.tolist() == [0, 0, 1, 1, 0]


@pytest.mark.parametrize("kernels", [3, [3, 1], [5, 3]])
def test_fft_attention_is_torchs_multihead_attention(kernels) -> None:
    torch.manual_seed(0)
    block = FFTBlock(16, 2, 24, kernels, 0.0).eval()
    x = torch.randn(3, 9, 16)
    mask = torch.ones(3, 9, dtype=torch.bool)
    mask[1, 6:], mask[2, 2:] = False, False
    reference, _ = block.attn(x, x, x, key_padding_mask=~mask, need_weights=False)
    torch.testing.assert_close(block.attention(x, mask), reference, atol=1e-5, rtol=1e-4)
    whole, _ = block.attn(x, x, x, need_weights=False)
    torch.testing.assert_close(block.attention(x, None), whole, atol=1e-5, rtol=1e-4)
    # no mask where every position is valid: the same output as the all-true mask
    torch.testing.assert_close(block(x, None), block(x, torch.ones(3, 9, dtype=torch.bool)))
    k1, k2 = kernel_pair(kernels)
    assert (block.ff.conv1.kernel_size, block.ff.conv2.kernel_size) == ((k1,), (k2,))


@pytest.mark.parametrize("bad", [2, [3], [3, 2], [3, 1, 1], 0])
def test_a_feed_forward_kernel_must_be_odd_sizes(bad) -> None:
    with pytest.raises(ValueError, match="ff_kernel"):
        kernel_pair(bad)


LSTM = {**CFG, "duration_encoder": "lstm", "duration_encoder_layers": 2}


@pytest.mark.parametrize(
    ("cfg", "shared"), [({**CFG, "duration_encoder_layers": 1}, True), (LSTM, False)]
)
def test_a_duration_encoder_of_its_own_learns_from_the_durations_alone(cfg, shared) -> None:
    """FFT blocks share the tokens' embedding with the mel's encoder; the BiLSTM has its own."""
    torch.manual_seed(0)
    model = FastPitch(FastPitchConfig.from_dict(cfg))
    _, tokens, lengths = _batch()
    durations = torch.randint(1, 4, tokens.shape) * (tokens > 0)
    out = model(tokens, lengths, durations)
    out.mel.sum().backward(retain_graph=True)
    assert all(p.grad is None for p in model.duration_encoder.parameters())
    assert all(p.grad is None for p in model.duration.parameters())
    model.zero_grad(set_to_none=True)
    out.log_durations.sum().backward()
    assert all(p.grad is None for p in model.encoder.parameters())
    assert any(p.grad is not None for p in model.duration_encoder.parameters())
    assert (model.embedding.weight.grad is not None) == shared
    again = FastPitch.from_symbols({"model": model.config.to_dict()}, model.state_dict())
    assert type(again.duration_encoder) is type(model.duration_encoder)


def test_a_recurrent_duration_encoder_gives_a_padded_item_what_it_gives_alone() -> None:
    torch.manual_seed(0)
    model = FastPitch(FastPitchConfig.from_dict(LSTM)).eval()
    seqs, tokens, lengths = _batch()
    batch = model.infer(tokens, lengths)
    for i, s in enumerate(seqs):
        alone = model.infer(s[None], lengths[i : i + 1])
        n = len(s)
        torch.testing.assert_close(batch.log_durations[i, :n], alone.log_durations[0])
        assert batch.durations[i, :n].tolist() == alone.durations[0].tolist()
    # the reversed direction reads the end: changing the last token changes the first's duration
    changed = tokens[:1].clone()
    changed[0, lengths[0] - 1] = changed[0, lengths[0] - 1] % 11 + 1
    first = model.infer(changed, lengths[:1]).log_durations[0, 0]
    assert not torch.isclose(first, batch.log_durations[0, 0])


def test_the_duration_encoder_kind_is_checked_and_old_checkpoints_read_as_fft() -> None:
    from aligner.config import ConfigError

    with pytest.raises(ConfigError, match="duration_encoder"):
        FastPitchConfig.from_dict({**CFG, "duration_encoder": "gru"})
    old = {k: v for k, v in FastPitchConfig.from_dict({**CFG, "duration_encoder_layers": 1})
           .to_dict().items() if k != "duration_encoder"}  # fmt: skip
    model = FastPitch(FastPitchConfig.from_dict({**CFG, "duration_encoder_layers": 1}))
    again = FastPitch.from_symbols({"model": old}, model.state_dict())
    assert type(again.duration_encoder) is type(model.duration_encoder)
