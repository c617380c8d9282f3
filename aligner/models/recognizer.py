"""A small CTC phone recognizer over the toolkit's log-mels (`aligner.families`:
``ctc_recognizer``): what judges whether generated or converted speech can be understood
where no pretrained recognizer fits the voices.

    log-mel (B, T, M) -> [per-utterance normalization]
      -> strided conv block (kernel 5, stride ``subsample``: T' = ceil(T / subsample))
      -> ``conv_layers`` residual conv blocks (kernel 5) -> ``rnn_layers`` BiGRU layers (0: none)
      -> linear -> log-probabilities (B, T', V)

V is the size of the corpus's symbol table; the CTC blank is the padding id 0 (``<pad>``
never is a target). Every layer sees only its utterance's frames (padding zeroed after
each convolution, packed sequences in the GRU, per-utterance statistics over the valid
frames), so a batch decodes as its items one by one do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from aligner.attention.base import lengths_to_mask
from aligner.config import ConfigError, from_dict

BLANK = 0  # the CTC blank: the symbol table's <pad>


@dataclass
class RecognizerConfig:
    """``model:`` of a ``ctc_recognizer`` recipe. ``n_mels`` and ``n_symbols`` come from
    the data. ``mel_norm``: ``utterance`` (each utterance's bins to zero mean and unit
    variance: any voice, any recording level) or ``global`` (the corpus statistics
    only)."""

    n_mels: int = 80
    n_symbols: int = 0
    channels: int = 256
    subsample: int = 2
    conv_layers: int = 4
    rnn_dim: int = 160
    rnn_layers: int = 0
    dropout: float = 0.1
    mel_norm: Literal["utterance", "global"] = "utterance"

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, where: str = "model") -> RecognizerConfig:
        cfg = from_dict(cls, data, where)
        if cfg.subsample < 1 or min(cfg.conv_layers, cfg.rnn_layers) < 0 or cfg.n_symbols < 2:
            raise ConfigError(
                f"{where}: subsample >= 1, conv_layers and rnn_layers >= 0 and n_symbols >= 2 "
                "needed"
            )
        return cfg

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def utterance_norm(mel: Tensor, mask: Tensor, eps: float = 1e-5) -> Tensor:
    """``(B, T, M)`` each utterance's bins to zero mean and unit variance over its valid
    frames (`mask` ``(B, T)``); padding stays zero."""
    m = mask.unsqueeze(-1).to(mel.dtype)
    count = m.sum(1, keepdim=True).clamp_min(1.0)
    mean = (mel * m).sum(1, keepdim=True) / count
    var = (((mel - mean) * m) ** 2).sum(1, keepdim=True) / count
    return (mel - mean) / (var + eps).sqrt() * m


class ConvBlock(nn.Module):
    """Conv1d over time, LayerNorm over channels, ReLU, dropout; padding zeroed after.
    ``(B, T, C_in)`` -> ``(B, ceil(T / stride), C_out)``."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int, dropout: float):
        super().__init__()
        self.stride = stride
        self.conv = nn.Conv1d(c_in, c_out, kernel, stride=stride, padding=kernel // 2)
        self.norm = nn.LayerNorm(c_out)
        self.drop = nn.Dropout(dropout)

    def out_lengths(self, lengths: Tensor) -> Tensor:
        return torch.div(lengths + self.stride - 1, self.stride, rounding_mode="floor")

    def forward(self, x: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        y = self.conv(x.transpose(1, 2)).transpose(1, 2)
        lengths = self.out_lengths(lengths)
        mask = lengths_to_mask(lengths, y.size(1)).unsqueeze(-1)
        return self.drop(torch.relu(self.norm(y))) * mask, lengths


class CTCRecognizer(nn.Module):
    """Log-mel ``(B, T, M)`` and lengths ``(B,)`` -> CTC log-probabilities ``(B, T', V)``
    and output lengths ``(B,)``, ``T' = ceil(T / subsample)``."""

    def __init__(self, config: RecognizerConfig):
        super().__init__()
        self.config = c = config
        self.front = ConvBlock(c.n_mels, c.channels, 5, c.subsample, c.dropout)
        self.convs = nn.ModuleList(
            ConvBlock(c.channels, c.channels, 5, 1, c.dropout) for _ in range(c.conv_layers)
        )
        self.rnn = None
        if c.rnn_layers:
            self.rnn = nn.GRU(
                c.channels,
                c.rnn_dim,
                num_layers=c.rnn_layers,
                batch_first=True,
                bidirectional=True,
                dropout=c.dropout if c.rnn_layers > 1 else 0.0,
            )
        self.out = nn.Linear(2 * c.rnn_dim if c.rnn_layers else c.channels, c.n_symbols)

    @classmethod
    def from_symbols(
        cls, symbols: dict[str, Any], state_dict: dict[str, Tensor] | None = None
    ) -> CTCRecognizer:
        """Rebuild the model of a checkpoint from its ``symbols["model"]`` (and weights)."""
        model = cls(RecognizerConfig.from_dict(symbols["model"]))
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model

    def out_lengths(self, lengths: Tensor) -> Tensor:
        """Output frames ``(B,)`` of inputs of `lengths` frames."""
        return self.front.out_lengths(lengths)

    def forward(self, mel: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        lengths = lengths.to(mel.device)
        mask = lengths_to_mask(lengths, mel.size(1))
        x = utterance_norm(mel, mask) if self.config.mel_norm == "utterance" else mel
        x = x * mask.unsqueeze(-1)
        x, lengths = self.front(x, lengths)
        for conv in self.convs:
            x = x + conv(x, lengths)[0]
        if self.rnn is not None:
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            x = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=x.size(1))[
                0
            ]
        return self.out(x).log_softmax(-1), lengths


def greedy_decode(log_probs: Tensor, lengths: Tensor, blank: int = BLANK) -> list[list[int]]:
    """Best path of each item: the argmax per frame ``(B, T', V)`` over its first
    ``lengths[b]`` frames, repeats merged, then blanks dropped."""
    best = log_probs.argmax(-1).cpu()
    out = []
    for b, n in enumerate(lengths.tolist()):
        path = best[b, : int(n)]
        if path.numel() == 0:
            out.append([])
            continue
        keep = torch.ones_like(path, dtype=torch.bool)
        keep[1:] = path[1:] != path[:-1]
        out.append([int(i) for i in path[keep] if int(i) != blank])
    return out
