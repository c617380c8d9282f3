"""The step interface shared by every attention mechanism.

A mechanism is an :class:`Attention` module. ``init_state(memory, mask)`` projects the
keys once and returns an :class:`AttentionState`; each decoder step then calls
``attn(query, state) -> (context, weights, state)``. Subclasses implement
:meth:`Attention.compute_weights` only; the base class validates shapes, applies the
optional inference-time window, computes the context and advances the state.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import torch
from torch import Tensor, nn

Window = tuple[int, int]


def lengths_to_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """lengths (B,) -> mask (B, max_len) bool, True on the first ``lengths[b]`` positions
    (on the device of `lengths`; `max_len` defaults to the longest length)."""
    max_len = int(lengths.max()) if max_len is None else max_len
    return torch.arange(max_len, device=lengths.device)[None, :] < lengths[:, None]


def masked_softmax(scores: Tensor, mask: Tensor, dim: int = -1) -> Tensor:
    """Softmax over ``dim`` restricted to ``mask`` (True = valid).

    Invalid positions are filled with ``torch.finfo(dtype).min`` (never ``-inf``, so
    fp16/bf16 cannot produce NaN) and their weight is set to exactly zero afterwards. A
    row with no valid position returns all zeros.

    Args:
        scores: any shape, e.g. ``(B, T)`` or ``(B, U, T)``.
        mask: bool, broadcastable to ``scores``.
    """
    neg = torch.finfo(scores.dtype).min
    filled = scores.masked_fill(~mask, neg).clamp_min(neg)
    return torch.softmax(filled, dim=dim) * mask.to(scores.dtype)


def window_mask(position: Tensor, length: int, window: Window) -> Tensor:
    """Bool mask ``(B, T)`` allowing ``position - back <= j <= position + front`` per item.

    Args:
        position: ``(B,)`` long, the last attended index of each item.
        length: ``T``, the padded source length.
        window: ``(back, front)``, both >= 0.
    """
    back, front = window
    j = torch.arange(length, device=position.device)
    offset = j[None, :] - position[:, None]
    return (offset >= -back) & (offset <= front)


MAX_WINDOW = 10_000  # tokens either side; wider is a mistake, not a window


def check_window(window: Window | None) -> Window | None:
    """Validate a ``(back, front)`` window (both from 0 to ``MAX_WINDOW``); returns it as a
    tuple of two ints."""
    if window is None:
        return None
    if len(window) != 2 or not all(0 <= int(w) <= MAX_WINDOW for w in window):
        raise ValueError(
            f"window: expected (back, front), both from 0 to {MAX_WINDOW}, got {window!r}"
        )
    return int(window[0]), int(window[1])


def _check_shape(name: str, tensor: Tensor, expected: tuple[int | None, ...], hint: str) -> None:
    """Raise ValueError naming expected vs given shape (None = any size)."""
    ok = tensor.dim() == len(expected) and all(
        e is None or e == g for e, g in zip(expected, tensor.shape)
    )
    if not ok:
        want = ", ".join("*" if e is None else str(e) for e in expected)
        want += "," if len(expected) == 1 else ""
        raise ValueError(f"{name}: expected shape {hint} = ({want}), got {tuple(tensor.shape)}")


@dataclass
class AttentionState:
    """Per-utterance attention state; every field is a tensor with batch first.

    Attributes:
        keys: ``(B, T, A)`` keys projected once in ``init_state`` (``None`` for purely
            location-based mechanisms such as DCA).
        values: ``(B, T, D_mem)`` the memory the context is read from.
        mask: ``(B, T)`` bool, True = valid source position.
        prev_weights: ``(B, T)`` weights of the previous step.
        cum_weights: ``(B, T)`` sum of all previous weights.
        step: ``(B,)`` long, number of steps taken.
        position: ``(B,)`` long, last attended index (argmax of the latest non-empty
            weights; 0 at start), kept up to date while a window is set; read it with
            :meth:`last_position`, which is right with or without a window.
        extras: mechanism-specific tensors with batch first (GMM means, forward log-alpha,
            transition probability, ...).
    """

    keys: Tensor | None
    values: Tensor
    mask: Tensor
    prev_weights: Tensor
    cum_weights: Tensor
    step: Tensor
    position: Tensor
    extras: dict[str, Tensor] = field(default_factory=dict)

    @property
    def batch_size(self) -> int:
        return self.values.size(0)

    @property
    def lengths(self) -> Tensor:
        """``(B,)`` long, number of valid source positions per item."""
        return self.mask.sum(dim=1)

    def last_position(self) -> Tensor:
        """``(B,)`` long: argmax of the latest weights, or ``position`` where they are
        empty (before the first step, or a step whose window held no valid position)."""
        prev = self.prev_weights.detach()
        return torch.where(prev.sum(1) > 0, prev.argmax(dim=1), self.position)

    def index_select(self, index: Tensor) -> AttentionState:
        """Reorder or repeat items along the batch (beam search). ``index``: ``(B',)`` long."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Tensor):
                out[f.name] = value.index_select(0, index)
            elif isinstance(value, dict):
                out[f.name] = {k: v.index_select(0, index) for k, v in value.items()}
            else:
                out[f.name] = value
        return AttentionState(**out)


class Attention(nn.Module):
    """Base class: one decoder step of attention over a padded memory.

    Args:
        query_dim: ``D_q``, size of the decoder query.
        memory_dim: ``D_mem``, size of the encoder memory (and of the context).
        attn_dim: ``A``, size of the hidden attention space (ignored by mechanisms that
            have none).
        window: optional ``(back, front)`` monotonic constraint: at each step only source
            positions within ``[last - back, last + front]`` of each item's last attended
            index (argmax of the previous weights) may receive weight. Meant for
            inference; set or clear it at any time with ``attn.window = (b, f)``.
    """

    def __init__(
        self, query_dim: int, memory_dim: int, attn_dim: int = 128, window: Window | None = None
    ) -> None:
        super().__init__()
        self.query_dim = query_dim
        self.memory_dim = memory_dim
        self.attn_dim = attn_dim
        self.window = window

    @property
    def window(self) -> Window | None:
        return self._window

    @window.setter
    def window(self, value: Window | None) -> None:
        self._window = check_window(value)

    # -- to implement ---------------------------------------------------------------
    def project_keys(self, memory: Tensor) -> Tensor | None:
        """``(B, T, D_mem) -> (B, T, A)``; called once per utterance. Default: no keys."""
        return None

    def init_extras(self, memory: Tensor, mask: Tensor) -> dict[str, Tensor]:
        """Mechanism-specific initial state tensors (batch first)."""
        return {}

    def compute_weights(
        self, query: Tensor, state: AttentionState, mask: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        """Weights ``(B, T)`` for one step and the updated extras.

        ``mask`` is ``state.mask`` narrowed by the window when one is set; the weights
        must be zero outside it and sum to one over it (zeros for an empty row).
        """
        raise NotImplementedError

    def update_extras(
        self, query: Tensor, context: Tensor, extras: dict[str, Tensor]
    ) -> dict[str, Tensor]:
        """Hook run after the context is known (e.g. the forward-attention transition agent)."""
        return extras

    # -- shared machinery -----------------------------------------------------------
    def init_state(self, memory: Tensor, mask: Tensor | None = None) -> AttentionState:
        """Start attending over ``memory (B, T, D_mem)`` with ``mask (B, T)`` bool, True = valid."""
        _check_shape("memory", memory, (None, None, self.memory_dim), "(B, T, D_mem)")
        batch, length, _ = memory.shape
        if mask is None:
            mask = torch.ones(batch, length, dtype=torch.bool, device=memory.device)
        _check_shape("mask", mask, (batch, length), "(B, T) of the memory")
        if mask.dtype != torch.bool:
            if mask.is_floating_point():
                raise ValueError(f"mask: expected bool (True = valid), got {mask.dtype}")
            mask = mask.bool()
        zeros = memory.new_zeros(batch, length)
        step = torch.zeros(batch, dtype=torch.long, device=memory.device)
        return AttentionState(
            keys=self.project_keys(memory),
            values=memory,
            mask=mask,
            prev_weights=zeros,
            cum_weights=zeros,
            step=step,
            position=step.clone(),
            extras=self.init_extras(memory, mask),
        )

    def effective_mask(self, state: AttentionState, last: Tensor | None = None) -> Tensor:
        """``state.mask`` narrowed to the window around each item's last position, if set
        (``last``: that position, when the caller has already computed it)."""
        if self.window is None:
            return state.mask
        last = state.last_position() if last is None else last
        return state.mask & window_mask(last, state.mask.size(1), self.window)

    def check_query(self, query: Tensor, state: AttentionState) -> None:
        _check_shape("query", query, (state.batch_size, self.query_dim), "(B, D_q)")

    def forward(
        self, query: Tensor, state: AttentionState
    ) -> tuple[Tensor, Tensor, AttentionState]:
        """One step: ``query (B, D_q)`` -> ``context (B, D_mem)``, ``weights (B, T)``, new state."""
        self.check_query(query, state)
        # the position is only needed by the window: tracked while one is set, derived
        # from prev_weights by last_position() otherwise (5 small ops a step saved)
        last = None if self.window is None else state.last_position()
        weights, extras = self.compute_weights(query, state, self.effective_mask(state, last))
        context = torch.bmm(weights.unsqueeze(1), state.values).squeeze(1)
        extras = self.update_extras(query, context, extras)
        position = state.position
        if last is not None:
            detached = weights.detach()
            position = torch.where(detached.sum(1) > 0, detached.argmax(1), last)
        new_state = AttentionState(  # not dataclasses.replace: this runs every decoder step
            keys=state.keys,
            values=state.values,
            mask=state.mask,
            prev_weights=weights,
            cum_weights=state.cum_weights + weights,
            step=state.step + 1,
            position=position,
            extras=extras,
        )
        return context, weights, new_state
