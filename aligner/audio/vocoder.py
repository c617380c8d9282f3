"""Griffin-Lim vocoder: log-mel -> linear magnitude (least squares) -> waveform."""

from __future__ import annotations

import torch
import torchaudio.functional as AF
from torch import nn

from aligner.audio.features import MelConfig, mel_filterbank


def mel_to_linear(mel: torch.Tensor, fb_pinv: torch.Tensor) -> torch.Tensor:
    """Minimum-norm least-squares inverse of the mel projection, clamped to >= 0.

    Args:
        mel: mel magnitudes ``(..., T, n_mels)`` (not log).
        fb_pinv: pseudo-inverse of the filterbank, ``(n_mels, n_freqs)``.

    Returns:
        linear magnitudes ``(..., T, n_freqs)``.
    """
    return torch.clamp(mel @ fb_pinv, min=0.0)


class GriffinLim(nn.Module):
    """Log-mel ``(B, T, n_mels)`` or ``(T, n_mels)`` -> waveform ``(B, L)`` or ``(L,)``.

    ``L = (T - 1) * hop_length`` (centred frames, the inverse of :class:`LogMel`).
    Runs on the device of its input. Mels must be natural-log and *not* normalized:
    call ``MelStats.denormalize`` first.

    Args:
        cfg: the feature settings the mels were made with.
        n_iter: Griffin-Lim iterations.
        momentum: fast Griffin-Lim momentum (Perraudin 2013); 0 gives the classic update.
        rand_init: random initial phases (``False``: zero phases, deterministic).
    """

    def __init__(
        self, cfg: MelConfig, n_iter: int = 60, momentum: float = 0.99, rand_init: bool = True
    ) -> None:
        super().__init__()
        if n_iter < 1:
            raise ValueError(f"n_iter must be >= 1, got {n_iter}")
        self.cfg = cfg
        self.n_iter = n_iter
        self.momentum = momentum
        self.rand_init = rand_init
        fb = mel_filterbank(cfg).double()  # (F, M)
        self.register_buffer("fb_pinv", torch.linalg.pinv(fb).float(), persistent=False)
        self.register_buffer("window", torch.hann_window(cfg.win_length), persistent=False)

    def linear(self, log_mel: torch.Tensor) -> torch.Tensor:
        """Log-mel ``(..., T, n_mels)`` -> linear magnitude ``(..., n_freqs, T)``."""
        if log_mel.shape[-1] != self.cfg.n_mels:
            raise ValueError(
                f"expected mels with {self.cfg.n_mels} bins (..., T, {self.cfg.n_mels}), "
                f"got shape {tuple(log_mel.shape)}"
            )
        mel = torch.exp(log_mel.float())
        lin = mel_to_linear(mel, self.fb_pinv.to(mel.device))
        return lin.transpose(-1, -2)

    @torch.no_grad()
    def forward(self, log_mel: torch.Tensor) -> torch.Tensor:
        if log_mel.dim() not in (2, 3):
            raise ValueError(f"expected (T, n_mels) or (B, T, n_mels), got {tuple(log_mel.shape)}")
        spec = self.linear(log_mel)
        cfg = self.cfg
        return AF.griffinlim(
            spec,
            window=self.window.to(spec.device),
            n_fft=cfg.n_fft,
            hop_length=cfg.hop_length,
            win_length=cfg.win_length,
            power=cfg.power,
            n_iter=self.n_iter,
            momentum=self.momentum,
            length=(spec.shape[-1] - 1) * cfg.hop_length,
            rand_init=self.rand_init,
        )
