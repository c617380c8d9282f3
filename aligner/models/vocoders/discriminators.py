"""The discriminators of a GAN vocoder and their losses: the multi-period discriminator of
HiFi-GAN (Kong et al. 2020: the waveform folded into 2-D by periods 2, 3, 5, 7, 11) and
the multi-resolution spectrogram discriminator of UniVNet (Jang et al. 2021; as Vocos uses
it), least-squares adversarial losses and feature matching (HiFi-GAN's).

A discriminator maps a waveform ``(B, L)`` to a list of (score, feature maps) pairs, one per
sub-discriminator: ``score (B, ...)`` and its intermediate activations.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm

LRELU_SLOPE = 0.1
Scores = list[tuple[torch.Tensor, list[torch.Tensor]]]


@dataclass(frozen=True)
class DiscriminatorConfig:
    """``model.adversarial``: which discriminators (``mpd``, ``mrd``), their sizes, and the
    weights of the generator's adversarial and feature-matching losses."""

    kinds: tuple[str, ...] = ("mpd", "mrd")
    periods: tuple[int, ...] = (2, 3, 5, 7, 11)
    resolutions: tuple[tuple[int, int], ...] = ((1024, 256), (2048, 512), (512, 128))
    channels: int = 32
    weight: float = 1.0
    feature_weight: float = 2.0

    @classmethod
    def from_dict(cls, data: dict) -> DiscriminatorConfig:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(
                f"unknown model.adversarial option(s) {unknown}; known: {sorted(known)}"
            )
        values = dict(data)
        for key in ("kinds", "periods"):
            if key in values:
                values[key] = tuple(values[key])
        if "resolutions" in values:
            values["resolutions"] = tuple(tuple(r) for r in values["resolutions"])
        bad = sorted(set(values.get("kinds", ())) - {"mpd", "mrd"})
        if bad or not values.get("kinds", cls.kinds):
            raise ValueError(f"model.adversarial.kinds must be some of mpd, mrd, got {bad or '[]'}")
        return cls(**values)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _stack(
    convs: nn.ModuleList, post: nn.Module, x: torch.Tensor
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The score ``(B, ...)`` flattened and every activation: leaky ReLU after each conv."""
    features = []
    for conv in convs:
        x = F.leaky_relu(conv(x), LRELU_SLOPE)
        features.append(x)
    x = post(x)
    features.append(x)
    return x.flatten(1), features


class PeriodDiscriminator(nn.Module):
    """The waveform folded into ``(L / p, p)`` and 2-D convolutions along the first axis."""

    def __init__(self, period: int, channels: int = 32) -> None:
        super().__init__()
        self.period = period
        sizes = [1, channels, channels * 4, channels * 16, channels * 32]
        self.convs = nn.ModuleList(
            weight_norm(nn.Conv2d(a, b, (5, 1), (3, 1), padding=(2, 0)))
            for a, b in zip(sizes[:-1], sizes[1:])
        )
        self.convs.append(weight_norm(nn.Conv2d(sizes[-1], sizes[-1], (5, 1), 1, padding=(2, 0))))
        self.post = weight_norm(nn.Conv2d(sizes[-1], 1, (3, 1), 1, padding=(1, 0)))

    def forward(self, wav: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        batch, length = wav.shape
        pad = (-length) % self.period
        x = F.pad(wav, (0, pad), mode="reflect" if pad < length else "constant")
        return _stack(self.convs, self.post, x.view(batch, 1, -1, self.period))


class ResolutionDiscriminator(nn.Module):
    """2-D convolutions over one STFT magnitude ``(frames, bins)``."""

    def __init__(self, n_fft: int, hop: int, channels: int = 32) -> None:
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft), persistent=False)
        self.convs = nn.ModuleList(
            [
                weight_norm(nn.Conv2d(1, channels, (7, 5), (2, 2), padding=(3, 2))),
                weight_norm(nn.Conv2d(channels, channels, (5, 3), (2, 1), padding=(2, 1))),
                weight_norm(nn.Conv2d(channels, channels, (5, 3), (2, 2), padding=(2, 1))),
                weight_norm(nn.Conv2d(channels, channels, 3, (2, 1), padding=1)),
                weight_norm(nn.Conv2d(channels, channels, 3, (2, 2), padding=1)),
            ]
        )
        self.post = weight_norm(nn.Conv2d(channels, 1, 3, padding=1))

    def forward(self, wav: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        spec = torch.stft(
            wav.float(), self.n_fft, self.hop, self.n_fft, self.window, return_complex=True
        )
        magnitude = spec.abs().clamp(min=1e-7).pow(0.5).transpose(1, 2)[:, None]  # (B, 1, T, F)
        return _stack(self.convs, self.post, magnitude)


class Discriminators(nn.Module):
    """Every sub-discriminator of a `DiscriminatorConfig`: waveform ``(B, L)`` -> `Scores`."""

    def __init__(self, cfg: DiscriminatorConfig | None = None) -> None:
        super().__init__()
        cfg = cfg or DiscriminatorConfig()
        subs: list[nn.Module] = []
        if "mpd" in cfg.kinds:
            subs += [PeriodDiscriminator(p, cfg.channels) for p in cfg.periods]
        if "mrd" in cfg.kinds:
            subs += [ResolutionDiscriminator(n, h, cfg.channels) for n, h in cfg.resolutions]
        self.subs = nn.ModuleList(subs)

    def forward(self, wav: torch.Tensor) -> Scores:
        return [sub(wav) for sub in self.subs]


def discriminator_loss(real: Scores, fake: Scores) -> torch.Tensor:
    """Least squares: ``mean((1 - D(real))^2) + mean(D(fake)^2)``, summed over the
    sub-discriminators."""
    return sum(((1 - r) ** 2).mean() + (f**2).mean() for (r, _), (f, _) in zip(real, fake))


def generator_loss(fake: Scores) -> torch.Tensor:
    """Least squares: ``mean((1 - D(fake))^2)``, summed over the sub-discriminators."""
    return sum(((1 - f) ** 2).mean() for f, _ in fake)


def feature_loss(real: Scores, fake: Scores) -> torch.Tensor:
    """The mean L1 distance of every feature map of fake and real audio (real detached)."""
    total = [
        F.l1_loss(f, r.detach())
        for (_, real_maps), (_, fake_maps) in zip(real, fake)
        for r, f in zip(real_maps, fake_maps)
    ]
    return torch.stack(total).sum()
