"""The text seq2seq models' encoder (G2P, NMT): an embedding and a bidirectional GRU over
packed sequences."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from aligner.attention.base import lengths_to_mask


@dataclass
class Encoded:
    """Encoder output: `memory (B, T, 2H)`, `mask (B, T)` bool True = valid,
    `final (B, 2H)` the last layer's forward and backward final states."""

    memory: Tensor
    mask: Tensor
    final: Tensor


class BiGRUEncoder(nn.Module):
    """Embedding + bidirectional GRU over packed sequences (any order of lengths)."""

    def __init__(
        self,
        vocab_size: int,
        emb_dim: int = 128,
        hidden_dim: int = 256,
        num_layers: int = 1,
        dropout: float = 0.0,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.rnn = nn.GRU(
            emb_dim,
            hidden_dim,
            num_layers=num_layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.out_dim = 2 * hidden_dim

    def forward(self, tokens: Tensor, lengths: Tensor) -> Encoded:
        """tokens `(B, T)` long, lengths `(B,)` (each >= 1) -> `Encoded`."""
        if tokens.dim() != 2 or lengths.shape != tokens.shape[:1]:
            raise ValueError(
                f"expected tokens (B, T) and lengths (B,), got {tuple(tokens.shape)} "
                f"and {tuple(lengths.shape)}"
            )
        if bool((lengths < 1).any()):
            raise ValueError("every source sequence needs at least one token")
        total = tokens.size(1)
        emb = self.dropout(self.embedding(tokens))
        packed = pack_padded_sequence(emb, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)
        memory, _ = pad_packed_sequence(out, batch_first=True, total_length=total)
        mask = lengths_to_mask(lengths.to(tokens.device), total)
        final = torch.cat([h_n[-2], h_n[-1]], dim=-1)  # (B, 2H): last layer, both directions
        return Encoded(self.dropout(memory), mask, final)
