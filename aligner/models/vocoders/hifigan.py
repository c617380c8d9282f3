"""The HiFi-GAN generator (Kong et al. 2020): log-mel ``(B, n_mels, T)`` -> waveform
``(B, 1, T * prod(upsample_rates))``, and the public release's file format.

The release (github.com/jik876/hifi-gan, and the checkpoints published with it) keeps a
``config.json`` beside a generator file holding ``{"generator": state_dict}`` whose
convolutions carry weight normalization as ``weight_g`` and ``weight_v``. This module
builds the same network from the same config (V1, V2, V3: ``resblock`` "1" or "2") with
plain convolutions, and folds ``weight = g * v / ||v||`` (the norm over every dimension
but the first, PyTorch's ``weight_norm(dim=0)``) when it loads such a file, so inference
needs no weight-norm hooks.

Input mels are natural-log magnitudes with a 1e-5 floor over a Slaney filterbank: the
convention of `aligner.audio.features.LogMel`, except that HiFi-GAN frames the signal
with ``(n_fft - hop) / 2`` samples of reflect padding and no centring, so its frame ``t``
covers the audio around ``t * hop + hop / 2``: half a hop later than ours (see
`tests/models/test_hifigan.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from aligner.files import write_atomic

LRELU_SLOPE = 0.1


@dataclass(frozen=True)
class HiFiGANConfig:
    """The generator's part of a release ``config.json`` (other keys are kept aside),
    with the V1 defaults, and the features it was trained on."""

    resblock: str = "1"
    upsample_rates: tuple[int, ...] = (8, 8, 2, 2)
    upsample_kernel_sizes: tuple[int, ...] = (16, 16, 4, 4)
    upsample_initial_channel: int = 512
    resblock_kernel_sizes: tuple[int, ...] = (3, 7, 11)
    resblock_dilation_sizes: tuple[tuple[int, ...], ...] = ((1, 3, 5), (1, 3, 5), (1, 3, 5))
    num_mels: int = 80
    sampling_rate: int = 22050
    hop_size: int = 256
    n_fft: int = 1024
    win_size: int = 1024
    fmin: float = 0.0
    fmax: float | None = 8000.0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HiFiGANConfig:
        known = {f.name for f in fields(cls)} - {"extra"}
        values: dict[str, Any] = {}
        for key in known & set(data):
            value = data[key]
            if isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            values[key] = value
        if str(values.get("resblock", "1")) not in ("1", "2"):
            raise ValueError(f"resblock must be '1' or '2', got {values['resblock']!r}")
        values["resblock"] = str(values.get("resblock", "1"))
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    @classmethod
    def read(cls, path: str | Path) -> HiFiGANConfig:
        """A release ``config.json``; ValueError naming the file when it is not one."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise TypeError("not a JSON object")
            return cls.from_dict(data)
        except (OSError, ValueError, TypeError) as err:
            raise ValueError(f"{path} is not a HiFi-GAN config.json ({err})") from None

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out = json.loads(json.dumps(out))  # tuples -> lists
        return {**self.extra, **out}


def _padding(kernel: int, dilation: int = 1) -> int:
    return (kernel * dilation - dilation) // 2


class ResBlock(nn.Module):
    """HiFi-GAN's residual block: type "1" pairs each dilated convolution with an
    undilated one; type "2" has the dilated convolutions alone."""

    def __init__(self, kind: str, channels: int, kernel: int, dilations: tuple[int, ...]) -> None:
        super().__init__()

        def conv(d: int) -> nn.Conv1d:
            return nn.Conv1d(channels, channels, kernel, 1, dilation=d, padding=_padding(kernel, d))

        self.kind = kind
        if kind == "1":
            self.convs1 = nn.ModuleList(conv(d) for d in dilations)
            self.convs2 = nn.ModuleList(conv(1) for _ in dilations)
        else:
            self.convs = nn.ModuleList(conv(d) for d in dilations)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "1":
            for c1, c2 in zip(self.convs1, self.convs2):
                x = x + c2(F.leaky_relu(c1(F.leaky_relu(x, LRELU_SLOPE)), LRELU_SLOPE))
            return x
        for c in self.convs:
            x = x + c(F.leaky_relu(x, LRELU_SLOPE))
        return x


class HiFiGANGenerator(nn.Module):
    """Log-mel ``(B, n_mels, T)`` -> waveform ``(B, 1, T * hop)`` in [-1, 1]."""

    def __init__(self, cfg: HiFiGANConfig) -> None:
        super().__init__()
        if len(cfg.upsample_rates) != len(cfg.upsample_kernel_sizes):
            raise ValueError("upsample_rates and upsample_kernel_sizes differ in length")
        self.cfg = cfg
        ch = cfg.upsample_initial_channel
        self.conv_pre = nn.Conv1d(cfg.num_mels, ch, 7, 1, padding=3)
        self.ups = nn.ModuleList(
            nn.ConvTranspose1d(ch // 2**i, ch // 2 ** (i + 1), k, u, padding=(k - u) // 2)
            for i, (u, k) in enumerate(zip(cfg.upsample_rates, cfg.upsample_kernel_sizes))
        )
        self.resblocks = nn.ModuleList(
            ResBlock(cfg.resblock, ch // 2 ** (i + 1), k, tuple(d))
            for i in range(len(self.ups))
            for k, d in zip(cfg.resblock_kernel_sizes, cfg.resblock_dilation_sizes)
        )
        self.conv_post = nn.Conv1d(ch // 2 ** len(self.ups), 1, 7, 1, padding=3)

    @property
    def hop(self) -> int:
        """Samples per mel frame: the product of the upsampling rates."""
        out = 1
        for u in self.cfg.upsample_rates:
            out *= u
        return out

    def forward(self, mel: torch.Tensor) -> torch.Tensor:
        x = self.conv_pre(mel)
        kernels = len(self.cfg.resblock_kernel_sizes)
        for i, up in enumerate(self.ups):
            x = up(F.leaky_relu(x, LRELU_SLOPE))
            blocks = self.resblocks[i * kernels : (i + 1) * kernels]
            x = sum(block(x) for block in blocks) / kernels
        return torch.tanh(self.conv_post(F.leaky_relu(x)))

    def load_release_state(self, state: dict[str, torch.Tensor]) -> None:
        """Load a release's generator ``state_dict`` (weight-normalized convolutions as
        ``NAME.weight_g`` / ``NAME.weight_v``, or plain ``NAME.weight``); RuntimeError
        naming the keys when it does not fit this config."""
        self.load_state_dict(fold_weight_norm(state))


def fold_weight_norm(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``NAME.weight_g`` and ``NAME.weight_v`` -> ``NAME.weight = g * v / ||v||``, the norm
    taken over every dimension of ``v`` but the first (``torch.nn.utils.weight_norm`` with
    ``dim=0``, what the release used for every convolution); other entries unchanged."""
    out: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if key.endswith(".weight_g"):
            continue
        if key.endswith(".weight_v"):
            name = key.removesuffix(".weight_v")
            g = state[f"{name}.weight_g"]
            dims = tuple(range(1, value.dim()))
            out[f"{name}.weight"] = g * value / value.norm(dim=dims, keepdim=True)
        else:
            out[key] = value
    return out


def unfold_weight_norm(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The inverse of `fold_weight_norm` for convolution weights: ``NAME.weight`` ->
    ``NAME.weight_v = weight`` and ``NAME.weight_g = ||weight||`` (the release's layout)."""
    out: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        if key.endswith(".weight") and value.dim() == 3:
            name = key.removesuffix(".weight")
            out[f"{name}.weight_g"] = value.norm(dim=(1, 2), keepdim=True)
            out[f"{name}.weight_v"] = value.clone()
        else:
            out[key] = value
    return out


def save_release(generator: HiFiGANGenerator, folder: str | Path, name: str = "generator") -> Path:
    """Write `generator` in the public release format (``config.json`` and
    ``{"generator": state_dict}`` with weight-normalized names), which the release's own
    inference scripts and other toolkits load; returns the generator file."""
    folder = Path(folder)
    text = json.dumps(generator.cfg.to_dict(), indent=2) + "\n"
    write_atomic(folder / "config.json", lambda fh: fh.write(text), "w", encoding="utf-8")
    state = {"generator": unfold_weight_norm(generator.state_dict())}
    return write_atomic(folder / name, lambda fh: torch.save(state, fh))
