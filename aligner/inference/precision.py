"""Inference precision of the Tacotron families (TTS, VC): ``fp32`` or ``int8``.

A decoder step at batch 1 on a CPU is bound by memory, not arithmetic: it reads every
weight of its LSTM cells and projections once to do two multiply-adds per weight. ``int8``
stores the large ones (the decoder's ``nn.LSTMCell`` layers and its ``nn.Linear`` layers
of at least 65,536 weights, the attention's query layer included) as 8-bit integers, a
quarter of the bytes, and quantizes each step's activations on the fly (dynamic
quantization, ``torch.ao.quantization.quantize_dynamic``). The encoder and postnet run once
per sentence and stay in fp32, as do the convolutions and the small layers.

    model = quantize_decoder(model)        # in place; the model must be in eval mode

The output differs from fp32 by the rounding of the weights (`scripts/bench_tacotron.py
--int8` and ``tests/inference/test_precision.py`` measure how far).
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

from aligner.inference.common import InferenceError

PRECISIONS = ("fp32", "int8")
MIN_WEIGHTS = 2**16  # a linear layer smaller than this (256 KB in fp32) stays in fp32


def check_precision(precision: str, device: str | torch.device) -> None:
    """InferenceError (one line) for an unknown precision or int8 on a GPU."""
    if precision not in PRECISIONS:
        raise InferenceError(f"--precision {precision!r}: use one of {', '.join(PRECISIONS)}")
    if precision == "int8" and torch.device(device).type != "cpu":
        raise InferenceError(
            f"--precision int8 runs on the CPU only, not {device}; use --device cpu, or "
            "fp32 on the GPU"
        )


def quantize_decoder(model: nn.Module) -> nn.Module:
    """Dynamic int8 quantization of ``model.decoder``'s LSTM cells and linear layers, in
    place (the model must be in eval mode: quantized layers do not train); returns it."""
    if model.training:
        raise ValueError("quantize_decoder needs a model in eval mode")
    engines = torch.backends.quantized.supported_engines
    if not any(e in engines for e in ("x86", "fbgemm", "qnnpack")):
        raise InferenceError(
            f"--precision int8: this torch build has no quantized CPU engine ({engines}); use fp32"
        )
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao; torch 2.11 has it
        warnings.simplefilter("ignore", DeprecationWarning)
        from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic

        spec = {name: default_dynamic_qconfig for name in large_layers(model.decoder)}
        model.decoder = quantize_dynamic(model.decoder, spec, dtype=torch.qint8)
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


def weight_bytes(module: nn.Module) -> int:
    """Bytes of the weights of `module` as stored: its parameters (fp32: 4 a weight) plus
    the int8 weights and fp32 biases of dynamically quantized layers (1 byte a weight)."""
    total = sum(p.numel() * p.element_size() for p in module.parameters())
    for sub in module.modules():
        packed = []
        if hasattr(sub, "_packed_params") and hasattr(sub._packed_params, "_weight_bias"):
            packed.append(sub._packed_params._weight_bias())  # quantized Linear
        for name in ("_packed_weight_ih", "_packed_weight_hh"):  # quantized LSTMCell
            if hasattr(sub, name):
                packed.append(torch.ops.quantized.linear_unpack(getattr(sub, name)))  # w, b
        for w, b in packed:
            for t in (w, b):
                total += t.numel() * t.element_size() if t is not None else 0
    return total
