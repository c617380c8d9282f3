"""The int8 decoder (`aligner.inference.precision`): which layers it quantizes, how many
bytes they take, how far its output is from fp32, and the one-line refusals."""

from __future__ import annotations

import pytest
import torch

from aligner.attention import available
from aligner.inference.common import InferenceError
from aligner.inference.precision import (
    check_precision,
    large_layers,
    quantize_decoder,
    weight_bytes,
)
from aligner.models.tacotron import (
    DecoderConfig,
    PostnetConfig,
    Tacotron,
    TacotronConfig,
    TextEncoderConfig,
)


def tacotron(attention: str = "location", dim: int = 256) -> Tacotron:
    """A Tacotron big enough that its decoder has linear layers above the int8 threshold."""
    cfg = TacotronConfig(
        n_mels=80,
        r=2,
        n_symbols=20,
        attention=attention,
        attn_dim=64,
        encoder=TextEncoderConfig(embed_dim=64, out_dim=dim, n_convs=1, kernel_size=3),
        decoder=DecoderConfig(prenet_dims=[256, 256], attn_rnn_dim=dim, dec_dim=dim),
        postnet=PostnetConfig(channels=16, n_convs=2, kernel_size=3),
    )
    return Tacotron.from_config(cfg).eval()


def generate(model: Tacotron, steps: int = 30):
    """Deterministic decode (prenet dropout off, the stop disabled) of two sentences."""
    torch.manual_seed(3)
    tokens = torch.randint(4, 20, (2, 9))
    lengths = torch.tensor([9, 6])
    model.decoder.prenet.always_dropout = False
    return model.generate(tokens, lengths, stop_threshold=2.0, max_steps=steps)


def test_only_the_lstm_cells_and_large_linear_layers_are_quantized():
    model = tacotron()
    names = large_layers(model.decoder)
    # prenet 256 x 256 = 65,536, the projection 2 x 80 x (256 + 256) = 81,920; the query
    # layer 256 x 64 = 16,384 stays fp32
    assert names == ["prenet.layers.1", "attn_rnn", "dec_rnns.0", "proj"]
    assert large_layers(model.decoder, min_weights=10**6) == ["attn_rnn", "dec_rnns.0"]
    quantize_decoder(model)
    kinds = {n: type(m).__module__ for n, m in model.decoder.named_modules() if n in names}
    assert all("quantized" in k for k in kinds.values()), kinds
    assert "quantized" not in type(model.decoder.stop).__module__
    assert "quantized" not in type(model.decoder.attention.v).__module__


def test_weight_bytes_count_one_byte_per_quantized_weight():
    model = tacotron()
    fp32 = weight_bytes(model.decoder)
    assert fp32 == 4 * sum(p.numel() for p in model.decoder.parameters())
    dec = model.decoder
    quantized = [dec.prenet.layers[1], dec.attn_rnn, dec.dec_rnns[0], dec.proj]
    weights = sum(p.numel() for m in quantized for n, p in m.named_parameters() if "weight" in n)
    quantize_decoder(model)
    assert weight_bytes(model.decoder) == fp32 - 3 * weights  # 4 bytes -> 1, biases kept


@pytest.mark.parametrize("attention", available())
def test_int8_output_is_within_rounding_of_fp32(attention):
    model = tacotron(attention)
    mel, out = generate(model)
    fast = tacotron(attention)
    fast.load_state_dict(model.state_dict())  # the same weights, then quantized
    mel8, out8 = generate(quantize_decoder(fast))
    assert torch.equal(out.lengths, out8.lengths)
    diff = (mel - mel8).abs()
    assert float(diff.mean()) < 0.05 * float(mel.std()) + 1e-4, attention
    assert float((out.alignments - out8.alignments).abs().max()) < 0.05


def test_quantizing_needs_eval_mode():
    with pytest.raises(ValueError, match="eval mode"):
        quantize_decoder(tacotron().train())


def test_unknown_precision_and_int8_on_a_gpu_are_one_line_errors():
    with pytest.raises(InferenceError, match="use one of fp32, int8"):
        check_precision("int4", "cpu")
    with pytest.raises(InferenceError, match="CPU only"):
        check_precision("int8", "cuda")
    check_precision("int8", "cpu")
    check_precision("fp32", "cuda")
