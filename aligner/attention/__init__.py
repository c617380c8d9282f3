"""The reusable attention core: every mechanism behind one step interface.

>>> attn = build_attention("location", query_dim=1024, memory_dim=512, attn_dim=128)
>>> state = attn.init_state(memory, mask)        # (B, T, D_mem), (B, T) bool
>>> context, weights, state = attn(query, state)  # (B, D_q) -> (B, D_mem), (B, T)
"""

from __future__ import annotations

from .base import Attention, AttentionState, masked_softmax, window_mask
from .content import (
    AdditiveAttention,
    ConcatAttention,
    ContentAttention,
    DistanceAttention,
    DotAttention,
    GeneralAttention,
)
from .dca import DynamicConvolutionAttention
from .gmm import GMMAttention
from .local import LocalMonotonicAttention, LocalPredictiveAttention
from .location import LocationSensitiveAttention
from .monotonic import ForwardAttention, apply_window

REGISTRY: dict[str, type[Attention]] = {
    "dot": DotAttention,
    "general": GeneralAttention,
    "concat": ConcatAttention,
    "additive": AdditiveAttention,
    "distance": DistanceAttention,
    "location": LocationSensitiveAttention,
    "local-m": LocalMonotonicAttention,
    "local-p": LocalPredictiveAttention,
    "forward": ForwardAttention,
    "gmm": GMMAttention,
    "dca": DynamicConvolutionAttention,
}


def available() -> list[str]:
    """Registered mechanism names, in registry order."""
    return list(REGISTRY)


def build_attention(
    name: str, query_dim: int, memory_dim: int, attn_dim: int = 128, **options
) -> Attention:
    """Build a mechanism by name; ``options`` are that mechanism's keyword options.

    Every mechanism accepts ``query_dim``, ``memory_dim``, ``attn_dim`` (ignored where
    unused) and ``window=(back, front)`` (inference-time monotonic constraint; for
    ``local-m``/``local-p`` an int ``window`` is the local half-width ``D`` instead).
    """
    if name not in REGISTRY:
        raise ValueError(f"unknown attention {name!r}; choose one of {available()}")
    try:
        return REGISTRY[name](query_dim, memory_dim, attn_dim, **options)
    except TypeError as err:
        raise ValueError(f"attention {name!r}: bad options {sorted(options)}: {err}") from err


__all__ = [
    "REGISTRY",
    "AdditiveAttention",
    "Attention",
    "AttentionState",
    "ConcatAttention",
    "ContentAttention",
    "DistanceAttention",
    "DotAttention",
    "DynamicConvolutionAttention",
    "ForwardAttention",
    "GMMAttention",
    "GeneralAttention",
    "LocalMonotonicAttention",
    "LocalPredictiveAttention",
    "LocationSensitiveAttention",
    "apply_window",
    "available",
    "build_attention",
    "masked_softmax",
    "window_mask",
]
