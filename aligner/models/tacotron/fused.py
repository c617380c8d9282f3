"""A Tacotron decoder's LSTM cells as one matrix product each, for inference on a CPU.

``nn.LSTMCell`` multiplies its input and its hidden state by two weight matrices, one
matrix product each. A decoder step at batch 1 is bound by reading those weights, and on a
CPU the library that does the product decides how close to the memory's bandwidth a step
runs: on this project's AMD EPYC machine (2 threads), torch's fp32 matrix-vector product
(MKL) reads about 25 GB/s, oneDNN's (``torch.ops.mkldnn._linear_pointwise``, the kernel
that ``torch.compile`` uses on CPUs) about 41 GB/s, with the memory read at 36-39 GB/s
(it beats that because the caches hold part of the weights between steps).

`FusedLSTMCell` keeps the cell's arithmetic (gates i, f, g, o in torch's order) with its
two matrices side by side in one ``[4H, in + H]`` weight and one bias, so a step does one
product instead of two; `OneDnnLinear` does that product with oneDNN on a CPU (MKL's
``F.linear`` elsewhere, e.g. on a GPU or a build without oneDNN). Outputs equal the
plain cell's within fp32 rounding (about 1e-7). The fp16 and int8 decoders
(`aligner.models.tacotron.precision.quantize_decoder`) quantize the plain cells instead (fusing
did not make them faster) and refuse a decoder whose cells are already fused.

    fuse_cells(model.decoder)        # in place, eval mode; every nn.LSTMCell in it

`scripts/bench_tacotron.py --fast` times the fused decoder against the plain one and
torchaudio's; ``tests/models/test_fused.py`` checks its output.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def onednn_available() -> bool:
    """Whether this torch build has oneDNN's fused linear operator (x86 and arm64 builds)."""
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


class OneDnnLinear(nn.Linear):
    """``nn.Linear`` whose fp32 product on a CPU runs in oneDNN (not autograd-aware:
    inference only). Same weight and bias, same output within rounding."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (..., in) -> (..., out)."""
        if x.device.type == "cpu" and x.dtype == torch.float32 and not torch.is_grad_enabled():
            return torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")
        return F.linear(x, self.weight, self.bias)


class FusedLSTMCell(nn.Module):
    """An ``nn.LSTMCell`` computed with one linear layer over ``[x; h]``.

    Args:
        cell: the trained cell (its weights are copied).
        onednn: the product in oneDNN (`OneDnnLinear`) rather than ``nn.Linear``.
    """

    def __init__(self, cell: nn.LSTMCell, onednn: bool = True) -> None:
        super().__init__()
        self.input_size, self.hidden_size = cell.input_size, cell.hidden_size
        linear = OneDnnLinear if onednn and onednn_available() else nn.Linear
        like = {"device": cell.weight_ih.device, "dtype": cell.weight_ih.dtype}
        self.gates = linear(cell.input_size + cell.hidden_size, 4 * cell.hidden_size, **like)
        with torch.no_grad():
            self.gates.weight.copy_(torch.cat([cell.weight_ih, cell.weight_hh], 1))
            self.gates.bias.zero_()
            for b in (cell.bias_ih, cell.bias_hh):
                if b is not None:
                    self.gates.bias += b

    def forward(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, in), state (h (B, H), c (B, H)) -> (h', c'), as ``nn.LSTMCell``."""
        h, c = state
        i, f, g, o = self.gates(torch.cat([x, h], -1)).chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        return torch.sigmoid(o) * torch.tanh(c), c


def fuse_cells(module: nn.Module, onednn: bool = True) -> list[str]:
    """Replace every ``nn.LSTMCell`` inside `module` (eval mode) by a `FusedLSTMCell`, in
    place; returns their names."""
    if module.training:
        raise ValueError("fuse_cells needs a module in eval mode: fused cells do not train")
    names = [n for n, m in module.named_modules() if isinstance(m, nn.LSTMCell)]
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = module.get_submodule(parent_name) if parent_name else module
        setattr(parent, child, FusedLSTMCell(module.get_submodule(name), onednn).eval())
    return names
