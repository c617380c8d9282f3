"""Content-based scorers: dot, general, concat (Luong 2015), additive (Bahdanau 2015) and
distance (Badlani 2021).

Each scorer splits its score into a key projection done once per utterance
(:meth:`project_keys`) and a cheap per-query part (:meth:`score`), which works on any
number ``U`` of queries at once: the step interface uses ``U = 1`` and
:meth:`ContentAttention.attend_all` uses all teacher-forced queries together.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .base import Attention, AttentionState, _check_shape, masked_softmax


class ContentAttention(Attention):
    """Base for scorers whose energies depend only on the query and the keys."""

    def score(self, queries: Tensor, keys: Tensor) -> Tensor:
        """Energies ``(B, U, T)`` for ``queries (B, U, D_q)`` and ``keys (B, T, A)``."""
        raise NotImplementedError

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        energies = self.score(query.unsqueeze(1), state.keys).squeeze(1)
        return masked_softmax(energies, mask), state.extras

    def attend_all(self, queries: Tensor, state: AttentionState) -> tuple[Tensor, Tensor]:
        """All steps at once for teacher forcing; equals the step loop.

        Args:
            queries: ``(B, U, D_q)``.
            state: from :meth:`init_state`.

        Returns:
            contexts ``(B, U, D_mem)`` and weights ``(B, U, T)``.
        """
        _check_shape("queries", queries, (state.batch_size, None, self.query_dim), "(B, U, D_q)")
        if self.window is not None:
            raise ValueError(
                "attend_all: the monotonic window needs step-by-step decoding; "
                "set attn.window = None for teacher forcing"
            )
        weights = masked_softmax(self.score(queries, state.keys), state.mask.unsqueeze(1))
        return torch.bmm(weights, state.values), weights


class DotAttention(ContentAttention):
    """Luong dot score ``q^T k``; needs ``query_dim == memory_dim`` (``attn_dim`` unused)."""

    def __init__(self, query_dim: int, memory_dim: int, attn_dim: int = 128, **kw) -> None:
        if query_dim != memory_dim:
            raise ValueError(
                f"dot attention needs query_dim == memory_dim, got {query_dim} and "
                f"{memory_dim}; use 'general' for different sizes"
            )
        super().__init__(query_dim, memory_dim, attn_dim, **kw)

    def project_keys(self, memory: Tensor) -> Tensor:
        return memory

    def score(self, queries: Tensor, keys: Tensor) -> Tensor:
        return torch.bmm(queries, keys.transpose(1, 2))


class GeneralAttention(ContentAttention):
    """Luong general score ``q^T W_a k``; keys are ``W_a k`` (``(B, T, D_q)``)."""

    def __init__(self, query_dim: int, memory_dim: int, attn_dim: int = 128, **kw) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.key_layer = nn.Linear(memory_dim, query_dim, bias=False)

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.key_layer(memory)

    def score(self, queries: Tensor, keys: Tensor) -> Tensor:
        return torch.bmm(queries, keys.transpose(1, 2))


class AdditiveAttention(ContentAttention):
    """Bahdanau score ``v^T tanh(W q + U k + b)``; keys are ``U k + b`` (``(B, T, A)``)."""

    def __init__(self, query_dim: int, memory_dim: int, attn_dim: int = 128, **kw) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        self.query_layer = nn.Linear(query_dim, attn_dim, bias=False)
        self.key_layer = nn.Linear(memory_dim, attn_dim, bias=True)
        self.v = nn.Linear(attn_dim, 1, bias=False)

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.key_layer(memory)

    def score(self, queries: Tensor, keys: Tensor) -> Tensor:
        hidden = torch.tanh(self.query_layer(queries).unsqueeze(2) + keys.unsqueeze(1))
        return self.v(hidden).squeeze(-1)


class ConcatAttention(AdditiveAttention):
    """Luong concat score ``v_a^T tanh(W_a [q; k])``.

    ``W_a [q; k] = W_q q + W_k k``, so it is the additive form with ``W_a`` split in two
    (the key half applied once per utterance); kept as its own name for recipes that
    follow Luong et al. (2015).
    """


class DistanceAttention(ContentAttention):
    """Minus the scaled squared distance ``-temperature * ||W_q q - W_k k||^2`` (the soft
    alignment of RAD-TTS / FastPitch's aligner, Badlani et al. 2021): a query attends to
    the keys nearest to it in the ``attn_dim`` space. Keys are ``W_k k`` (``(B, T, A)``).

    Options: ``temperature`` (0.0005, as in FastPitch; the projections learn the scale).
    """

    def __init__(
        self,
        query_dim: int,
        memory_dim: int,
        attn_dim: int = 128,
        temperature: float = 5e-4,
        **kw,
    ) -> None:
        super().__init__(query_dim, memory_dim, attn_dim, **kw)
        if temperature <= 0:
            raise ValueError(f"distance attention: temperature must be > 0, got {temperature}")
        self.temperature = temperature
        self.query_layer = nn.Linear(query_dim, attn_dim, bias=False)
        self.key_layer = nn.Linear(memory_dim, attn_dim, bias=True)

    def project_keys(self, memory: Tensor) -> Tensor:
        return self.key_layer(memory)

    def score(self, queries: Tensor, keys: Tensor) -> Tensor:
        q = self.query_layer(queries)  # ||q - k||^2 = ||q||^2 - 2 q.k + ||k||^2, never (B,U,T,A)
        dist = q.pow(2).sum(-1, keepdim=True) - 2 * torch.bmm(q, keys.transpose(1, 2))
        return -self.temperature * (dist + keys.pow(2).sum(-1).unsqueeze(1)).clamp_min(0)


CONTENT_SCORERS: dict[str, type[ContentAttention]] = {
    "dot": DotAttention,
    "general": GeneralAttention,
    "concat": ConcatAttention,
    "additive": AdditiveAttention,
    "distance": DistanceAttention,
}


def build_scorer(name: str, query_dim: int, memory_dim: int, attn_dim: int) -> ContentAttention:
    """A content scorer by name (``dot``, ``general``, ``concat``, ``additive``)."""
    if name not in CONTENT_SCORERS:
        raise ValueError(
            f"unknown content scorer {name!r}; choose one of {sorted(CONTENT_SCORERS)}"
        )
    return CONTENT_SCORERS[name](query_dim, memory_dim, attn_dim)
