"""The fp16 and int8 decoders (`aligner.models.tacotron.precision`): which layers they store in
fewer bytes, how many bytes, how far their output is from fp32, the one-line refusals."""

from __future__ import annotations

import pytest
import torch

from aligner.attention import available
from aligner.models.tacotron.model import (
    DecoderConfig,
    PostnetConfig,
    Tacotron,
    TacotronConfig,
    TextEncoderConfig,
)
from aligner.models.tacotron.precision import (
    PrecisionError,
    check_precision,
    large_layers,
    quantize_decoder,
    weight_bytes,
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


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_only_the_lstm_cells_and_large_linear_layers_are_quantized(precision):
    model = tacotron()
    names = large_layers(model.decoder)
    # prenet 256 x 256 = 65,536, the projection 2 x 80 x (256 + 256) = 81,920; the query
    # layer 256 x 64 = 16,384 stays fp32
    assert names == ["prenet.layers.1", "attn_rnn", "dec_rnns.0", "proj"]
    assert large_layers(model.decoder, min_weights=10**6) == ["attn_rnn", "dec_rnns.0"]
    quantize_decoder(model, precision)
    kinds = {n: type(m).__module__ for n, m in model.decoder.named_modules() if n in names}
    assert all("quantized" in k for k in kinds.values()), kinds
    assert "quantized" not in type(model.decoder.stop).__module__
    assert "quantized" not in type(model.decoder.attention.v).__module__


def test_weight_bytes_count_the_stored_bytes_of_the_large_weights():
    dec = tacotron().decoder
    fp32 = weight_bytes(dec)
    assert fp32 == 4 * sum(p.numel() for p in dec.parameters())
    large = [dec.prenet.layers[1], dec.attn_rnn, dec.dec_rnns[0], dec.proj]
    weights = sum(p.numel() for m in large for n, p in m.named_parameters() if "weight" in n)
    assert weight_bytes(dec, "fp16") == fp32 - 2 * weights  # 4 bytes -> 2, biases kept
    assert weight_bytes(dec, "int8") == fp32 - 3 * weights  # 4 bytes -> 1


@pytest.mark.parametrize(("precision", "tolerance"), [("fp16", 0.002), ("int8", 0.05)])
@pytest.mark.parametrize("attention", available())
def test_fast_output_is_within_rounding_of_fp32(attention, precision, tolerance):
    """Every mechanism: the same lengths, the mel within `tolerance` of its spread (the
    documented bound: fp16 rounds weights to 11 bits, int8 to 8), the attention close."""
    model = tacotron(attention)
    mel, out = generate(model)
    fast = tacotron(attention)
    fast.load_state_dict(model.state_dict())  # the same weights, then quantized
    mel_q, out_q = generate(quantize_decoder(fast, precision))
    assert torch.equal(out.lengths, out_q.lengths)
    diff = (mel - mel_q).abs()
    assert float(diff.mean()) < tolerance * float(mel.std()) + 1e-5, attention
    assert float((out.alignments - out_q.alignments).abs().max()) < 20 * tolerance


def test_quantizing_needs_eval_mode():
    with pytest.raises(ValueError, match="eval mode"):
        quantize_decoder(tacotron().train())


def test_unknown_precision_and_int8_on_a_gpu_are_one_line_errors():
    with pytest.raises(PrecisionError, match="use one of fp32, fp16, int8"):
        check_precision("int4", "cpu")
    for precision in ("fp16", "int8"):
        with pytest.raises(PrecisionError, match="CPU only"):
            check_precision(precision, "cuda")
        check_precision(precision, "cpu")
    check_precision("fp32", "cuda")
