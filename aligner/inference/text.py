"""Trained text models (G2P, translation) ready for use.

``load_text_model(paths, task)`` turns one checkpoint, or several runs of one recipe (an
ensemble: `aligner.decode.ensemble`), into a :class:`TextModel`; it encodes inputs,
decodes them in length-sorted batches (greedy or beam search, optionally reranked by a
model reading the target the other way: `aligner.decode.rerank`) and turns the output
tokens back into text::

    g2p = load_text_model(["exp/g2p/avg.pt"], "g2p")
    g2p.convert(["aligner"], beam=5)   # -> [["AH0 L AY1 N ER0"]]
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.data.collate import length_batches, pad
from aligner.decode.beam import Hypothesis, search
from aligner.decode.rerank import rerank, reverse_scores
from aligner.inference.common import InferenceError
from aligner.inference.text_models import load_checkpoints, load_reverse_checkpoints
from aligner.text.splitting import join_tokens, output_tokens, splitter
from aligner.text.symbols import SymbolTable, UnknownSymbolError

BATCH = 128


@dataclass
class TextModel:
    """A G2P or NMT model (or ensemble) in eval mode with its symbol tables.

    `symbols` is the checkpoint's (``data`` holds the tokenization); `decoding` the
    recipe's decoding defaults (``length_penalty``, ``max_len_ratio``).
    """

    task: str
    model: Any
    src: SymbolTable
    tgt: SymbolTable
    symbols: dict[str, Any]

    @classmethod
    def from_checkpoint(cls, ckpt: dict[str, Any], file: Path, role: Any, device: Any = "cpu"):
        """The model of a checkpoint read from `file` (`aligner.checkpoint`); text models
        decode on the CPU."""
        task = (ckpt.get("symbols") or {}).get("task") or ckpt["config"]["task"]
        return load_text_model([file], task)

    @property
    def data(self) -> dict[str, Any]:
        return self.symbols["data"]

    @property
    def unknown(self) -> str:
        """How unknown source tokens are handled: ``map`` to <unk> when the recipe kept
        only frequent tokens (``min_freq > 1``), else ``error``."""
        return "map" if self.data.get("min_freq", 1) > 1 else "error"

    def encode(self, text: str) -> list[int]:
        """Tokenize and encode one input; `InferenceError` with the reason.

        With character tokens, a letter the model does not know is retried without its
        accents (``naïve`` as ``naive``) before it counts as unknown.
        """
        return encode_text(text, self.src, self.data, self.unknown)

    def source_tokens(self, ids: Sequence[int]) -> list[str]:
        return self.src.decode(list(ids))

    def output_tokens(self, hyp: Hypothesis) -> list[str]:
        """The output tokens of `hyp` in reading order."""
        return output_tokens(self.tgt.decode(hyp.tokens), self.data)

    def text(self, hyp: Hypothesis) -> str:
        """The output of `hyp` as text (joined as the target was split)."""
        return join_tokens(self.output_tokens(hyp), self.data["tgt_split"])

    def decoding(self, alpha: float | None = None, max_len_ratio: float | None = None):
        """`(alpha, max_len_ratio)`: the given values, else the recipe's."""
        recipe = self.symbols["decoding"]
        alpha = recipe["length_penalty"] if alpha is None else alpha
        ratio = recipe["max_len_ratio"] if max_len_ratio is None else max_len_ratio
        if ratio <= 0:
            raise InferenceError(f"need --max-length-ratio > 0, got {ratio}")
        return alpha, ratio

    def decode(
        self,
        encoded: Sequence[Sequence[int] | None],
        beam: int = 5,
        nbest: int = 1,
        alpha: float | None = None,
        max_len_ratio: float | None = None,
        rerank_by: tuple[TextModel, float] | None = None,
        progress: bool = False,
    ) -> list[list[Hypothesis] | None]:
        """n-best lists for every encoded input, in input order (None where the input is
        None), decoded in batches of similar length. With `rerank_by = (reverse, weight)`
        the whole beam is rescored by `reverse` (`aligner.decode.rerank`) before the
        `nbest` best are kept."""
        from tqdm import tqdm

        alpha, max_len_ratio = self.decoding(alpha, max_len_ratio)
        todo = [i for i, ids in enumerate(encoded) if ids is not None]
        results: list[list[Hypothesis] | None] = [None] * len(encoded)
        batches = length_batches([len(encoded[i]) for i in todo], BATCH)
        keep = nbest if rerank_by is None else beam
        for chunk in tqdm(batches, disable=not progress or len(batches) < 4, desc="decoding"):
            src, lengths, _ = pad([_long(encoded[todo[k]]) for k in chunk], 0)
            found = search(self.model, src, lengths, beam, keep, alpha, max_len_ratio)
            if rerank_by is not None:
                back = reverse_scores(rerank_by[0].model, src, lengths, found, alpha)
                found = [hyps[:nbest] for hyps in rerank(found, back, rerank_by[1])]
            for k, hyps in zip(chunk, found):
                results[todo[k]] = hyps
        return results

    def convert(self, texts: Sequence[str], beam: int = 5, nbest: int = 1, **options: Any):
        """The `nbest` outputs (text) of each input text; `InferenceError` for a bad one."""
        hyps = self.decode([self.encode(t) for t in texts], beam, nbest, **options)
        return [[self.text(h) for h in found] for found in hyps]


def _long(ids: Sequence[int]):
    import torch

    return torch.tensor(list(ids), dtype=torch.long)


def load_text_model(paths: Sequence[str | Path], task: str) -> TextModel:
    """One model, or an ensemble of several, from the checkpoint files `paths` of a
    `task` (g2p | nmt) run; `InferenceError` (one line) for a missing, unreadable or
    foreign file, or members whose symbol tables or tokenization differ."""
    model, src, tgt, symbols = load_checkpoints(list(paths), task)
    return TextModel(task, model, src, tgt, symbols)


def load_reverse_model(paths: Sequence[str | Path], main: TextModel) -> TextModel:
    """The model (or ensemble) of `paths` that reads the target the other way than
    `main` does, to rerank its n-best; `InferenceError` when it reads it the same way or
    its tables or tokenization differ."""
    model, src, tgt, symbols = load_reverse_checkpoints(list(paths), main.task, main.symbols)
    return TextModel(main.task, model, src, tgt, symbols)


def _strip_accents(token: str) -> str:
    """``ï`` -> ``i``: the letters of a token without their combining marks (NFKD)."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def encode_text(text: str, table: SymbolTable, data: dict, unknown: str) -> list[int]:
    """Tokenize `text` as the model's `data` settings say and encode it with `table`."""
    tokens = splitter(data["src_split"], data["lowercase"])(text)
    if data["src_split"] == "chars":
        tokens = [
            c for tok in tokens for c in (tok if tok in table else _strip_accents(tok) or tok)
        ]
    try:
        ids = table.encode(tokens, unknown=unknown)
    except UnknownSymbolError as err:
        raise InferenceError(_unknown_message(err, table, data)) from None
    if not ids:
        raise InferenceError("no tokens to convert")
    return ids


def _unknown_message(err: UnknownSymbolError, table: SymbolTable, data: dict) -> str:
    unknowns = ", ".join(f"{tok!r} at position {pos[0] + 1}" for tok, pos in err.unknown.items())
    chars = sorted(s for s in table.symbols[4:] if len(s) == 1)
    known = "".join(c for c in chars if c.isalnum())
    marks = " ".join("space" if c.isspace() else c for c in chars if not c.isalnum())
    known += f" and {marks}" if marks else ""
    hint = f"; it knows {known}" if data["src_split"] == "chars" else ""
    return f"the model has no symbol {unknowns}{hint}"
