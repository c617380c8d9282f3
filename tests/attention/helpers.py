"""Shared cases and drivers for the attention conformance suite."""

from __future__ import annotations

import torch
from torch import Tensor

from aligner.attention import Attention, AttentionState, build_attention

DIM = 4
ATTN_DIM = 3

# Every registered mechanism (forward twice: plain and with the transition agent), with
# small options so that float64 gradcheck stays fast.
CASES: list[tuple[str, dict]] = [
    ("dot", {}),
    ("general", {}),
    ("concat", {}),
    ("additive", {}),
    ("distance", {"temperature": 1.0}),
    ("location", {"filters": 2, "kernel_size": 3}),
    ("local-m", {"window": 2, "scorer": "additive"}),
    ("local-p", {"window": 2, "scorer": "general"}),
    ("forward", {}),
    ("forward", {"transition_agent": True}),
    ("gmm", {"components": 2}),
    (
        "dca",
        {"static_filters": 2, "static_kernel": 3, "dynamic_filters": 2, "dynamic_kernel": 3},
    ),
]
IDS = [name + ("-ta" if opts.get("transition_agent") else "") for name, opts in CASES]
CONTENT = ["dot", "general", "concat", "additive", "distance"]


def make(name: str, opts: dict, dtype: torch.dtype = torch.float32) -> Attention:
    attn = build_attention(name, query_dim=DIM, memory_dim=DIM, attn_dim=ATTN_DIM, **opts)
    return attn.to(dtype)


def lengths_mask(lengths: list[int], max_len: int | None = None) -> Tensor:
    max_len = max_len or max(lengths)
    return torch.arange(max_len)[None, :] < torch.tensor(lengths)[:, None]


def run_steps(
    attn: Attention, memory: Tensor, mask: Tensor | None, queries: Tensor
) -> tuple[Tensor, Tensor, AttentionState]:
    """Step through ``queries (B, U, D)``; returns contexts (B, U, D), weights (B, U, T)."""
    state = attn.init_state(memory, mask)
    contexts, weights = [], []
    for u in range(queries.size(1)):
        context, w, state = attn(queries[:, u], state)
        contexts.append(context)
        weights.append(w)
    return torch.stack(contexts, 1), torch.stack(weights, 1), state
