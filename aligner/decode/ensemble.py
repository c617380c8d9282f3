"""Decode several seq2seq models as one (an ensemble), for greedy and beam search.

`Ensemble` offers the interface `aligner.decode.beam` drives (`encode`, `start`, `step`,
the special ids), so `greedy_search(Ensemble([a, b]), ...)` and `beam_search` work
unchanged. At every step the members' next-token distributions are averaged in
probability space (`log mean_m p_m(y | ...)`, as fairseq and OpenNMT ensemble), and
their attention weights are averaged. Each member keeps its own encoder output and
decoder state; all see the same history of chosen tokens.

Members must share the target vocabulary (and so the special ids); the caller checks
that their symbol tables agree (`aligner.tasks.text.load_checkpoints`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn


@dataclass
class EnsembleEncoded:
    """The members' `Encoded` outputs; `memory` is the first member's (the search reads
    only its source length, the same for all)."""

    parts: list[Any]

    @property
    def memory(self) -> Tensor:
        return self.parts[0].memory


@dataclass
class EnsembleState:
    """The members' decoder states."""

    parts: list[Any]

    def index_select(self, index: Tensor) -> EnsembleState:
        """Reorder/expand every member's state along the batch; `index (B',)` long."""
        return EnsembleState([s.index_select(index) for s in self.parts])


class Ensemble(nn.Module):
    """Members decoded together: log of the mean of their probabilities per step."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        super().__init__()
        if not models:
            raise ValueError("an ensemble needs at least one model")
        ids = {(m.pad_id, m.bos_id, m.eos_id) for m in models}
        if len(ids) != 1:
            raise ValueError(f"ensemble members disagree on the special ids: {sorted(ids)}")
        self.members = nn.ModuleList(models)
        self.pad_id, self.bos_id, self.eos_id = ids.pop()

    def encode(self, src: Tensor, src_lengths: Tensor) -> EnsembleEncoded:
        """`src (B, T)`, `src_lengths (B,)` -> every member's encoding."""
        return EnsembleEncoded([m.encode(src, src_lengths) for m in self.members])

    def start(self, enc: EnsembleEncoded) -> EnsembleState:
        return EnsembleState([m.start(e) for m, e in zip(self.members, enc.parts)])

    def step(self, prev: Tensor, state: EnsembleState) -> tuple[Tensor, Tensor, EnsembleState]:
        """`prev (B,)` -> log-probs `(B, V)` (log of the mean probability), weights
        `(B, T)` (mean attention), new state."""
        outs = [m.step(prev, s) for m, s in zip(self.members, state.parts)]
        log_probs = torch.stack([lp for lp, _, _ in outs])  # (M, B, V)
        mean_lp = torch.logsumexp(log_probs, dim=0) - math.log(len(outs))
        weights = torch.stack([w for _, w, _ in outs]).mean(0)
        return mean_lp, weights, EnsembleState([s for _, _, s in outs])
