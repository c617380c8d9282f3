"""Inference precision of the Tacotron families (TTS, VC) on a CPU: ``fp32``, ``fp16``
or ``int8`` weights in the decoder.

A decoder step at batch 1 on a CPU is bound by memory, not arithmetic: it reads every
weight of its LSTM cells and projections once to do two multiply-adds per weight. The
fast precisions store the large layers (the decoder's ``nn.LSTMCell`` layers and its
``nn.Linear`` layers of at least 65,536 weights) in fewer bytes, prepacked for fbgemm's
matrix products (dynamic quantization, ``torch.ao.quantization.quantize_dynamic``):

- ``fp16``: half-precision weights, fp32 arithmetic; half the bytes, output within about
  1e-3 of fp32.
- ``int8``: 8-bit weights with one scale per layer and each step's activations quantized
  on the fly; a quarter of the bytes, output within the rounding of the weights.

The encoder and postnet run once per sentence and stay in fp32, as do the convolutions
and the small layers (where quantizing each step's input costs more than the bytes save).
Prepacked weights also keep small batches cheap: fp32 matrix products at batch 2-16 repack
the weights every step, the fbgemm ones do not.

    model = quantize_decoder(model, "int8")     # in place; the model must be in eval mode
    model = prepare_decoder(model, "fp32")      # fp32: each LSTM cell one oneDNN product

`prepare_decoder` is what ``aligner synthesize`` and ``aligner convert`` run on a CPU: in
fp32 it fuses each LSTM cell's two matrix products into one (`aligner.models.tacotron.fused`),
the same arithmetic at 1.6x the speed of torch's own cell on this project's machine.

`scripts/bench_tacotron.py --fast` and ``tests/models/test_precision.py`` measure how far
the output moves.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from aligner.models.tacotron.fused import FusedLSTMCell, fuse_cells

PRECISIONS = ("fp32", "fp16", "int8")
WEIGHT_BYTES = {"fp32": 4, "fp16": 2, "int8": 1}
MIN_WEIGHTS = 2**16  # a linear layer smaller than this (256 KB in fp32) stays in fp32


class PrecisionError(ValueError):
    """A precision that does not exist or does not run here; one line."""


def check_precision(precision: str, device: str | torch.device) -> None:
    """PrecisionError (one line) for an unknown precision or fp16/int8 off the CPU."""
    if precision not in PRECISIONS:
        raise PrecisionError(f"--precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if precision != "fp32" and torch.device(device).type != "cpu":
        raise PrecisionError(
            f"--precision {precision} runs on the CPU only, not {device}; use --device cpu, "
            "or fp32 on the GPU"
        )


def prepare_decoder(model: nn.Module, precision: str = "fp32") -> nn.Module:
    """A TTS or VC model (eval mode, on the CPU) ready for inference in `precision`, in
    place: ``fp32`` fuses its decoder's LSTM cells (`aligner.models.tacotron.fused.fuse_cells`),
    ``fp16`` and ``int8`` quantize them (`quantize_decoder`); returns the model."""
    if precision != "fp32":
        return quantize_decoder(model, precision)
    fuse_cells(model.decoder)
    return model


def quantize_decoder(model: nn.Module, precision: str = "int8") -> nn.Module:
    """``model.decoder``'s LSTM cells and large linear layers (`large_layers`) in
    `precision` (``fp16`` or ``int8``; ``fp32`` leaves it), in place (the model must be in
    eval mode: these layers do not train); returns the model."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; use one of {PRECISIONS}")
    if model.training:
        raise ValueError("quantize_decoder needs a model in eval mode")
    if precision == "fp32":
        return model
    if any(isinstance(m, FusedLSTMCell) for m in model.decoder.modules()):
        raise ValueError(
            f"quantize_decoder needs the plain decoder, not fused cells: load the model with "
            f"precision={precision!r} (load_speech_model) instead of quantizing it afterwards"
        )
    engines = torch.backends.quantized.supported_engines
    if not any(e in engines for e in ("x86", "fbgemm")):
        raise PrecisionError(
            f"--precision {precision}: this torch build has no fbgemm engine ({engines}); use fp32"
        )
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao; torch 2.11 has it
        warnings.simplefilter("ignore", DeprecationWarning)
        from torch.ao.quantization import (
            default_dynamic_qconfig,
            float16_dynamic_qconfig,
            quantize_dynamic,
        )

        qconfig = float16_dynamic_qconfig if precision == "fp16" else default_dynamic_qconfig
        dtype = torch.float16 if precision == "fp16" else torch.qint8
        spec = {name: qconfig for name in large_layers(model.decoder)}
        model.decoder = quantize_dynamic(model.decoder, spec, dtype=dtype)
    return model


def large_layers(module: nn.Module, min_weights: int = MIN_WEIGHTS) -> list[str]:
    """Names of the LSTM cells and the linear layers of at least `min_weights` weights in
    `module`: those whose weight reads bound a step. Smaller layers (the attention's
    energy vector, the stop logit, the location filters' projection) cost more to quantize
    on the fly than their bytes save, and stay in fp32."""
    return [
        name
        for name, sub in module.named_modules()
        if isinstance(sub, nn.LSTMCell)
        or (isinstance(sub, nn.Linear) and sub.weight.numel() >= min_weights)
    ]


def weight_bytes(module: nn.Module, precision: str = "fp32") -> int:
    """Bytes of the weights of an fp32 `module` (a decoder) once stored in `precision`:
    the weight matrices of `large_layers` at ``WEIGHT_BYTES[precision]`` bytes each, every
    other parameter (biases included) at 4."""
    large = {
        f"{layer}.{name}"
        for layer in large_layers(module)
        for name, _ in module.get_submodule(layer).named_parameters()
        if "weight" in name
    }
    return sum(
        p.numel() * (WEIGHT_BYTES[precision] if name in large else p.element_size())
        for name, p in module.named_parameters()
    )
