"""What a Tacotron decoder passes between steps and returns: its recurrent state, its
output, and the stop rule; shared by the decoder and its two free-running loops
(`free_running`, `static_decoding`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch


def stop_cut(threshold: float) -> float:
    """The stop logit above which an item stops: ``sigmoid(stop) > threshold``."""
    if threshold <= 0.0 or threshold >= 1.0:
        return -math.inf if threshold < 0.5 else math.inf
    return math.log(threshold / (1.0 - threshold))


@dataclass
class DecoderState:
    """Recurrent state of the decoder between steps (batch-first tensors)."""

    attn_h: torch.Tensor  # (B, A)
    attn_c: torch.Tensor  # (B, A)
    dec_h: tuple[torch.Tensor, ...]  # K x (B, H)
    dec_c: tuple[torch.Tensor, ...]  # K x (B, H)
    context: torch.Tensor  # (B, D_mem)
    attention: Any  # the core's AttentionState

    def index_select(self, index: torch.Tensor) -> DecoderState:
        """Reorder / select batch items (B',) long."""
        pick = lambda t: t.index_select(0, index)  # noqa: E731
        return DecoderState(
            pick(self.attn_h),
            pick(self.attn_c),
            tuple(map(pick, self.dec_h)),
            tuple(map(pick, self.dec_c)),
            pick(self.context),
            self.attention.index_select(index),
        )


@dataclass
class DecoderOutput:
    """Teacher-forced or generated decoder output.

    mel: (B, T, M) frames before the postnet (zero past ``lengths`` when generated).
    stop_logits: (B, S) one logit per decoder step (S = ceil(T / r)).
    alignments: (B, S, T_enc) attention weights per step.
    lengths: (B,) frames produced per item (generation), or None.
    hit_max: (B,) bool, items that reached the maximum length without stopping, or None.
    """

    mel: torch.Tensor
    stop_logits: torch.Tensor
    alignments: torch.Tensor
    lengths: torch.Tensor | None = None
    hit_max: torch.Tensor | None = None
