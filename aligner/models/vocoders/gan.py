"""A vocoder generator and its discriminators as one module (``model.adversarial`` of a
``task: vocoder`` recipe), so that one optimizer, one checkpoint, AMP and DDP hold both.

Both players learn in the same update (simultaneous gradient steps): `GANVocoder.forward`
returns the generator's waveform and three losses whose gradients are routed by
construction. The discriminators' loss sees the generated audio detached, so it reaches
only their weights; the generator's adversarial and feature-matching losses run the
discriminators with their weights detached (`torch.func.functional_call`), so they reach
only the generator. Adding the losses and back-propagating once is then a generator step
and a discriminator step. Every computation happens inside ``forward``, as DDP needs.

Generators: `aligner.models.vocoders.vocos.Vocos` (``(B, n_mels, T) -> (B, (T - 1) hop)``) and
`aligner.models.vocoders.hifigan.HiFiGANGenerator` (``-> (B, 1, T hop)``); `waveform` makes both
``(B, L)``.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call

from aligner.models.vocoders.discriminators import (
    DiscriminatorConfig,
    Discriminators,
    discriminator_loss,
    feature_loss,
    generator_loss,
)


def waveform(generator: nn.Module, mel: torch.Tensor) -> torch.Tensor:
    """The generator's audio ``(B, L)`` for log-mels ``(B, n_mels, T)``."""
    out = generator(mel)
    return out[:, 0] if out.dim() == 3 else out


class GANVocoder(nn.Module):
    """``generator`` and `Discriminators` of `cfg`; the state dict keys are
    ``generator.*`` and ``discriminators.*``."""

    def __init__(self, generator: nn.Module, cfg: DiscriminatorConfig) -> None:
        super().__init__()
        self.generator, self.cfg = generator, cfg
        self.discriminators = Discriminators(cfg)

    def forward(
        self, mel: torch.Tensor, target: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Audio ``(B, L)``; with the true audio ``target (B, L')`` also the losses
        ``disc`` (the discriminators'), ``adv`` and ``feature`` (the generator's), on the
        first ``min(L, L')`` samples of both, and the audio cut to that length."""
        pred = waveform(self.generator, mel)
        if target is None:
            return pred
        n = min(pred.size(1), target.size(1))
        pred, target = pred[:, :n], target[:, :n]
        real = self.discriminators(target)
        disc = discriminator_loss(real, self.discriminators(pred.detach()))
        frozen = {k: v.detach() for k, v in self.discriminators.named_parameters()}
        frozen |= dict(self.discriminators.named_buffers())
        fake = functional_call(self.discriminators, frozen, (pred,))
        real_maps = [(s.detach(), [m.detach() for m in maps]) for s, maps in real]
        losses = {
            "disc": disc,
            "adv": generator_loss(fake),
            "feature": feature_loss(real_maps, fake),
        }
        return pred, losses
