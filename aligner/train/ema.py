"""An exponential moving average of a model's weights (Polyak averaging, as NVIDIA's
FastPitch and many GAN vocoders keep one): ``train.ema`` is its decay. Validation,
``best.pt`` and every checkpoint's ``model`` are the averaged weights, what inference
loads; the trained weights travel beside them as ``raw_model`` for ``--resume``.

The decay warms up with the step (TensorFlow's ``ExponentialMovingAverage`` with
``num_updates``): ``min(decay, (1 + step) / (10 + step))``, so the average does not drag
the random initial weights along for the first thousand steps.
"""

from __future__ import annotations

import copy

import torch
from torch import nn


def warmed_decay(decay: float, step: int) -> float:
    """The decay at optimizer update `step` (0-based): ``min(decay, (1+step)/(10+step))``."""
    return min(decay, (1.0 + step) / (10.0 + step))


class WeightAverage:
    """The averaged copy of a model (``module``, never trained itself): `update` after
    each optimizer update moves every floating-point weight and buffer of it toward the
    model's, ``avg = d * avg + (1 - d) * weight``; other buffers are copied."""

    def __init__(self, model: nn.Module, decay: float) -> None:
        if not 0.0 < decay < 1.0:
            raise ValueError(f"train.ema must be between 0 and 1 (e.g. 0.999), got {decay}")
        self.decay = decay
        self.module = copy.deepcopy(model).eval()
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module, step: int) -> None:
        """Move the average toward `model`'s weights at update `step` (0-based)."""
        d = warmed_decay(self.decay, step)
        theirs = model.state_dict()
        averaged, current = [], []
        for name, mine in self.module.state_dict().items():
            value = theirs[name]
            if mine.is_floating_point():
                averaged.append(mine)
                current.append(value.to(mine.dtype))
            else:
                mine.copy_(value)
        if averaged:
            torch._foreach_lerp_(averaged, current, 1.0 - d)

    def state_dict(self) -> dict[str, torch.Tensor]:
        return self.module.state_dict()

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.module.load_state_dict(state)
