"""The Tacotron family's encoders: text (TTS) and mel spectrogram (VC).

The Tacotron encoders return ``(memory (B, T, D), mask (B, T) bool, True = valid)``; padded positions are
zeroed before every convolution and the BiLSTM runs over packed sequences, so a padded
batch gives, in eval mode, the same memory on valid positions as each item alone.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from aligner.attention.base import lengths_to_mask


class ConvBlock(nn.Module):
    """Conv1d -> BatchNorm -> activation -> dropout, channels first: (B, C_in, T) -> (B, C_out, T').

    ``norm=False`` leaves the BatchNorm out (the alignment model: its statistics would mix
    the padding of a batch into every item).

    Padded positions of the input are zeroed first, so they act as the convolution's own zero
    padding. ``stride`` > 1 reduces time to ``ceil(T / stride)`` (odd kernel sizes). Stacks
    keep the channels-first layout between blocks: a time-major (transposed) input would
    make every convolution copy it first (4x slower at batch 1 on CPU).
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        kernel_size: int = 5,
        dropout: float = 0.5,
        stride: int = 1,
        activation: str = "relu",
        norm: bool = True,
    ) -> None:
        super().__init__()
        if kernel_size % 2 != 1:
            raise ValueError(f"kernel_size must be odd, got {kernel_size}")
        self.conv = nn.Conv1d(in_dim, out_dim, kernel_size, stride=stride, padding=kernel_size // 2)
        self.norm = nn.BatchNorm1d(out_dim) if norm else nn.Identity()
        self.act = {"relu": nn.ReLU(), "tanh": nn.Tanh(), "none": nn.Identity()}[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """x (B, C_in, T), mask (B, T) -> (B, C_out, T') (T' = ceil(T / stride))."""
        x = x.masked_fill(~mask[:, None, :], 0.0)
        return self.dropout(self.act(self.norm(self.conv(x))))


class BiLSTM(nn.Module):
    """Bidirectional LSTM over packed sequences: (B, T, D_in) -> (B, T, 2 * hidden), zeros on padding."""

    def __init__(self, in_dim: int, hidden: int, num_layers: int = 1) -> None:
        super().__init__()
        self.lstm = nn.LSTM(in_dim, hidden, num_layers, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if int(lengths.min()) == x.size(1):  # no padding (one item): the fused kernel
            return self.lstm(x)[0]  # packing would step the cells one op at a time (8x)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=x.size(1))
        return out


class TextEncoder(nn.Module):
    """Tacotron 2 text encoder: embedding -> ``n_convs`` x (conv, BN, ReLU, dropout) -> BiLSTM.

    Args:
        n_symbols: vocabulary size (index ``pad_id`` is the padding symbol).
        embed_dim: embedding and convolution channels.
        out_dim: memory dimension D (the BiLSTM has ``out_dim // 2`` units per direction).
    """

    def __init__(
        self,
        n_symbols: int,
        embed_dim: int = 512,
        out_dim: int = 512,
        n_convs: int = 3,
        kernel_size: int = 5,
        dropout: float = 0.5,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        if out_dim % 2:
            raise ValueError(f"out_dim must be even (two LSTM directions), got {out_dim}")
        self.embedding = nn.Embedding(n_symbols, embed_dim, padding_idx=pad_id)
        self.convs = nn.ModuleList(
            ConvBlock(embed_dim, embed_dim, kernel_size, dropout) for _ in range(n_convs)
        )
        self.lstm = BiLSTM(embed_dim, out_dim // 2)
        self.out_dim = out_dim

    def forward(
        self, tokens: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """tokens (B, N) long, lengths (B,) -> memory (B, N, out_dim), mask (B, N)."""
        mask = lengths_to_mask(lengths, tokens.size(1))
        x = self.embedding(tokens).transpose(1, 2).contiguous()
        for conv in self.convs:
            x = conv(x, mask)
        return self.lstm(x.transpose(1, 2), lengths), mask


class MelEncoder(nn.Module):
    """Encoder of source mel spectrograms for seq2seq voice conversion.

    prenet (Linear-ReLU-dropout x len(prenet_dims)) -> conv stack -> BiLSTM. Time can be
    reduced by ``reduction`` (memory length ``ceil(T / reduction)``), either with the stride of
    the first convolution (``reduce_mode="stride"``) or by a masked average pooling after it
    (``"pool"``: padding never enters an average).
    """

    def __init__(
        self,
        n_mels: int,
        prenet_dims: tuple[int, ...] = (256, 256),
        conv_dim: int = 512,
        out_dim: int = 512,
        n_convs: int = 3,
        kernel_size: int = 5,
        dropout: float = 0.5,
        prenet_dropout: float = 0.5,
        reduction: int = 1,
        reduce_mode: str = "stride",
    ) -> None:
        super().__init__()
        if reduce_mode not in ("stride", "pool"):
            raise ValueError(f"reduce_mode must be 'stride' or 'pool', got {reduce_mode!r}")
        if reduction < 1 or out_dim % 2:
            raise ValueError(f"need reduction >= 1 and an even out_dim, got {reduction}, {out_dim}")
        dims = (n_mels, *prenet_dims)
        self.prenet = nn.Sequential(
            *(
                layer
                for d_in, d_out in zip(dims[:-1], dims[1:])
                for layer in (nn.Linear(d_in, d_out), nn.ReLU(), nn.Dropout(prenet_dropout))
            )
        )
        self.reduction, self.reduce_mode = reduction, reduce_mode
        first_stride = reduction if reduce_mode == "stride" else 1
        in_dims = [dims[-1]] + [conv_dim] * (n_convs - 1)
        self.convs = nn.ModuleList(
            ConvBlock(d, conv_dim, kernel_size, dropout, stride=first_stride if i == 0 else 1)
            for i, d in enumerate(in_dims)
        )
        self.lstm = BiLSTM(conv_dim, out_dim // 2)
        self.out_dim = out_dim

    def reduced_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        """Memory lengths for input lengths (B,): ``ceil(lengths / reduction)``."""
        return torch.div(lengths + self.reduction - 1, self.reduction, rounding_mode="floor")

    def _pool(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked average over non-overlapping windows of ``reduction`` frames."""
        r = self.reduction
        pad = (-x.size(1)) % r
        m = nn.functional.pad(mask, (0, pad)).to(x.dtype)
        x = nn.functional.pad(x, (0, 0, 0, pad)) * m[..., None]
        b, t, c = x.shape
        total = x.reshape(b, t // r, r, c).sum(2)
        count = m.reshape(b, t // r, r).sum(2).clamp_min(1.0)
        return total / count[..., None]

    def forward(
        self, mel: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """mel (B, T, n_mels), lengths (B,) -> memory (B, T', out_dim), mask (B, T'),
        T' = ceil(T / reduction)."""
        mask = lengths_to_mask(lengths, mel.size(1))
        x = self.prenet(mel).transpose(1, 2).contiguous()
        out_lengths = self.reduced_lengths(lengths)
        out_len = -(-mel.size(1) // self.reduction)
        for i, conv in enumerate(self.convs):
            x = conv(x, mask)
            if i == 0:
                if self.reduce_mode == "pool" and self.reduction > 1:
                    x = self._pool(x.transpose(1, 2), mask).transpose(1, 2).contiguous()
                mask = lengths_to_mask(out_lengths, out_len)
        return self.lstm(x.transpose(1, 2), out_lengths), mask
