"""Symbol tables: token strings <-> integer ids, saved with every model.

Four special symbols come first with fixed ids: ``<pad>`` = 0, ``<unk>`` = 1,
``<s>`` = 2, ``</s>`` = 3; the table's own symbols follow in the given order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import torch

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS: tuple[str, ...] = (PAD, UNK, BOS, EOS)


class UnknownSymbolError(ValueError):
    """Tokens missing from a symbol table: lists each with the positions it occurs at."""

    def __init__(self, unknown: dict[str, list[int]], context: str = "") -> None:
        self.unknown = unknown
        parts = [f"{tok!r} at {_positions(pos)}" for tok, pos in unknown.items()]
        where = f" in {context}" if context else ""
        super().__init__(
            f"unknown symbol(s){where}: {', '.join(parts)}; the model's symbol table (from its "
            "training text) lacks them: clean them from the text, or train on text that has "
            "them (in Python, unknown='map' maps them to <unk>)"
        )


def _positions(pos: list[int], limit: int = 5) -> str:
    shown = ", ".join(str(p) for p in pos[:limit])
    more = f" (+{len(pos) - limit} more)" if len(pos) > limit else ""
    return f"token {shown}{more}" if len(pos) == 1 else f"tokens {shown}{more}"


class SymbolTable:
    """An ordered vocabulary with the four specials first.

    Args:
        symbols: the table's symbols; duplicates and specials are dropped, order kept.
    """

    def __init__(self, symbols: Iterable[str]) -> None:
        seen: dict[str, None] = dict.fromkeys(SPECIALS)
        for sym in symbols:
            if not isinstance(sym, str) or not sym:
                raise ValueError(f"symbol table entries must be non-empty strings, got {sym!r}")
            seen.setdefault(sym, None)
        self._symbols: list[str] = list(seen)
        self._index: dict[str, int] = {s: i for i, s in enumerate(self._symbols)}

    @classmethod
    def from_corpus(cls, token_lists: Iterable[Sequence[str]]) -> SymbolTable:
        """A table of every token in ``token_lists``, sorted for a stable order."""
        found: set[str] = set()
        for tokens in token_lists:
            found.update(tokens)
        return cls(sorted(found))

    pad_id: int = 0
    unk_id: int = 1
    bos_id: int = 2
    eos_id: int = 3

    @property
    def symbols(self) -> list[str]:
        """All symbols including the specials, in id order."""
        return list(self._symbols)

    def __len__(self) -> int:
        return len(self._symbols)

    def __contains__(self, symbol: object) -> bool:
        return symbol in self._index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SymbolTable) and self._symbols == other._symbols

    def __repr__(self) -> str:
        return f"SymbolTable({len(self)} symbols)"

    def encode(
        self,
        tokens: Sequence[str],
        unknown: Literal["error", "map"] = "error",
        context: str = "",
    ) -> list[int]:
        """Token strings -> ids.

        Args:
            tokens: the token sequence.
            unknown: ``"error"`` raises :class:`UnknownSymbolError` listing every unknown
                token and its positions; ``"map"`` maps them to ``<unk>``.
            context: where the tokens come from (e.g. an utterance id), for the error.
        """
        if unknown not in ("error", "map"):
            raise ValueError(f"unknown must be 'error' or 'map', got {unknown!r}")
        ids: list[int] = []
        missing: dict[str, list[int]] = {}
        for i, tok in enumerate(tokens):
            idx = self._index.get(tok)
            if idx is None:
                missing.setdefault(tok, []).append(i)
                idx = self.unk_id
            ids.append(idx)
        if missing and unknown == "error":
            raise UnknownSymbolError(missing, context)
        return ids

    def text_positions(self, ids: torch.Tensor) -> torch.Tensor:
        """Bool mask of ``ids``: False on the ``</s>`` appended to a text and the ``<s>``
        prepended to it (markers that may have no frames of their own), True elsewhere. The
        alignment metrics count skips only where it is True."""
        return (ids != self.eos_id) & (ids != self.bos_id)

    def decode(self, ids: Iterable[int], strip_specials: bool = False) -> list[str]:
        """Ids -> token strings; ``strip_specials`` drops pad/bos/eos (keeps ``<unk>``)."""
        out: list[str] = []
        for i in ids:
            i = int(i)
            if not 0 <= i < len(self._symbols):
                raise ValueError(f"id {i} out of range for a table of {len(self)} symbols")
            sym = self._symbols[i]
            if strip_specials and sym in (PAD, BOS, EOS):
                continue
            out.append(sym)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored in checkpoints)."""
        return {"symbols": self._symbols[len(SPECIALS) :]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SymbolTable:
        """Inverse of :meth:`to_dict`."""
        return cls(data["symbols"])
