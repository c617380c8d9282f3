"""Fused LSTM cells (`aligner.models.tacotron.fused`): the same arithmetic as ``nn.LSTMCell``
with one matrix product, in every decoder of the registry, and what loading a checkpoint
on the CPU does with them."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from aligner.attention import available
from aligner.models.tacotron.fused import FusedLSTMCell, OneDnnLinear, fuse_cells, onednn_available
from aligner.models.tacotron.precision import prepare_decoder, quantize_decoder
from tests.models.test_precision import generate, tacotron


@settings(max_examples=20, deadline=None)
@given(
    batch=st.integers(1, 5),
    n_in=st.integers(1, 40),
    hidden=st.integers(1, 24),
    bias=st.booleans(),
    onednn=st.booleans(),
)
def test_a_fused_cell_equals_torchs_cell(batch, n_in, hidden, bias, onednn):
    torch.manual_seed(batch * 1000 + n_in * 10 + hidden)
    cell = nn.LSTMCell(n_in, hidden, bias=bias)
    fused = FusedLSTMCell(cell, onednn=onednn)
    x, h, c = torch.randn(batch, n_in), torch.randn(batch, hidden), torch.randn(batch, hidden)
    with torch.no_grad():
        want, got = cell(x, (h, c)), fused(x, (h, c))
    for a, b in zip(want, got):
        torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-5)


def test_the_fused_product_runs_in_onednn_only_without_gradients():
    layer = OneDnnLinear(6, 4)
    x = torch.randn(2, 6)
    with torch.no_grad():
        torch.testing.assert_close(layer(x), nn.functional.linear(x, layer.weight, layer.bias))
    assert layer(x).requires_grad  # with gradients on: the autograd-aware F.linear
    if onednn_available():
        assert isinstance(FusedLSTMCell(nn.LSTMCell(3, 2)).gates, OneDnnLinear)
    assert type(FusedLSTMCell(nn.LSTMCell(3, 2), onednn=False).gates) is nn.Linear


@pytest.mark.parametrize("attention", available())
def test_a_fused_decoder_generates_what_the_plain_one_does(attention):
    """Every mechanism, two sentences of different lengths: the mel and the attention
    within 1e-5, the same lengths (the bound for fp32 fast paths)."""
    model = tacotron(attention)
    mel, out = generate(model)
    fused = tacotron(attention)
    fused.load_state_dict(model.state_dict())
    names = fuse_cells(fused.decoder)
    assert names == ["attn_rnn", "dec_rnns.0"]
    assert not any(isinstance(m, nn.LSTMCell) for m in fused.modules())
    mel_f, out_f = generate(fused)
    assert torch.equal(out.lengths, out_f.lengths)
    torch.testing.assert_close(mel_f, mel, atol=1e-5, rtol=0)
    torch.testing.assert_close(out_f.alignments, out.alignments, atol=1e-5, rtol=0)


def test_fusing_needs_eval_mode_and_fp32_prepares_by_fusing():
    with pytest.raises(ValueError, match="eval mode"):
        fuse_cells(tacotron().train().decoder)
    model = prepare_decoder(tacotron(), "fp32")
    assert isinstance(model.decoder.attn_rnn, FusedLSTMCell)
    assert isinstance(model.decoder.dec_rnns[0], FusedLSTMCell)


def test_a_fused_cell_keeps_the_cells_dtype():
    cell = nn.LSTMCell(4, 3).double()
    x, h, c = torch.randn(2, 4).double(), torch.randn(2, 3).double(), torch.randn(2, 3).double()
    with torch.no_grad():
        want, got = cell(x, (h, c)), FusedLSTMCell(cell)(x, (h, c))
    assert got[0].dtype == torch.float64
    torch.testing.assert_close(got, want)


def test_quantizing_fused_cells_is_refused_in_one_line():
    """fp16/int8 quantize the plain cells; a fused decoder (what loading in fp32 gives)
    would silently stay fp32, so it is refused."""
    model = prepare_decoder(tacotron(), "fp32")
    with pytest.raises(ValueError, match="needs the plain decoder, not fused cells"):
        quantize_decoder(model, "int8")
