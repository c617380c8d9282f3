"""Tacotron 2 postnet: a residual convolution stack that refines the decoder's mels."""

from __future__ import annotations

import torch
from torch import nn

from aligner.models.tacotron.encoders import ConvBlock


class Postnet(nn.Module):
    """``n_convs`` x (conv, BN, tanh, dropout), the last linear; output = mel + residual.

    Args:
        n_mels: mel bins M.
        channels: hidden channels (512 in Tacotron 2).
    """

    def __init__(
        self,
        n_mels: int,
        channels: int = 512,
        n_convs: int = 5,
        kernel_size: int = 5,
        dropout: float = 0.5,
    ) -> None:
        super().__init__()
        if n_convs < 2:
            raise ValueError(f"the postnet needs at least 2 convolutions, got {n_convs}")
        dims = [n_mels] + [channels] * (n_convs - 1) + [n_mels]
        self.convs = nn.ModuleList(
            ConvBlock(
                d_in, d_out, kernel_size, dropout, activation="tanh" if i < n_convs - 1 else "none"
            )
            for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:]))
        )

    def forward(self, mel: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """mel (B, T, M), mask (B, T) -> refined mel (B, T, M), zero on padded frames."""
        x = mel.transpose(1, 2).contiguous()
        for conv in self.convs:
            x = conv(x, mask)
        return (mel + x.transpose(1, 2)).masked_fill(~mask[..., None], 0.0)
