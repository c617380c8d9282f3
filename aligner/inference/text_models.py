"""Loading text seq2seq checkpoints (G2P, NMT): one model or an ensemble of runs, and the
right-to-left partner that reranks a left-to-right model's n-best."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aligner.checkpoint import CheckpointError, read_checkpoint
from aligner.decode.ensemble import Ensemble
from aligner.inference.common import InferenceError
from aligner.models.seq2seq.config import from_checkpoint_config
from aligner.models.seq2seq.model import Seq2Seq
from aligner.text.splitting import SPACE_MARK
from aligner.text.symbols import SPECIALS, SymbolTable


def load_model(checkpoint: dict[str, Any]) -> tuple[Seq2Seq, SymbolTable, SymbolTable, dict]:
    """Model, source and target tables and the `symbols` dict of a text checkpoint.

    `symbols["decoding"]` holds the recipe's decoding defaults (`length_penalty`,
    `max_len_ratio`), which the command line and scripts use unless told otherwise.
    """
    symbols = checkpoint["symbols"]
    src, tgt = SymbolTable.from_dict(symbols["src"]), SymbolTable.from_dict(symbols["tgt"])
    section = checkpoint["config"].get("model", {})
    model, opts = from_checkpoint_config(section, len(src), len(tgt), checkpoint["model"])
    decoding = {"length_penalty": opts.length_penalty, "max_len_ratio": opts.max_len_ratio}
    return model.eval(), src, tgt, {**symbols, "decoding": decoding}


def _signature(symbols: dict[str, Any]) -> dict[str, Any]:
    """What ensemble members must share: task, symbol tables, tokenization."""
    data = symbols.get("data", {})
    split = {k: data.get(k) for k in ("src_split", "tgt_split", "lowercase")}
    split["reverse_target"] = data.get("reverse_target", False)
    return {"task": symbols.get("task"), "src": symbols["src"], "tgt": symbols["tgt"], **split}


def _check_space_marks(path, src: SymbolTable, tgt: SymbolTable, symbols: dict) -> None:
    """A `tokens` table without any `SPACE_MARK` token was built by the split of aligner
    before it marked spaces (every sentence's first token now carries one): its output
    would lose its spacing, so it is refused with a one-line reason."""
    data = symbols.get("data", {})
    for side, key, table in (("source", "src_split", src), ("target", "tgt_split", tgt)):
        regular = table.symbols[len(SPECIALS) :]
        if (
            data.get(key) == "tokens"
            and regular
            and not any(t.startswith(SPACE_MARK) for t in regular)
        ):
            raise InferenceError(
                f"{path}: its {side} tokens carry no '{SPACE_MARK}' space marks: it was "
                "trained before the tokens split marked spaces; retrain it with this "
                "version of aligner"
            )


def load_checkpoints(paths: Sequence[str | Path], task: str):
    """One model, or an `Ensemble` of several, from the checkpoint files (or experiment
    folders: `aligner.checkpoint.checkpoint_file`) `paths` of a `task` (g2p |
    nmt) run.

    Returns `(model, src_table, tgt_table, symbols)` as `load_model` does. Raises a
    one-line `InferenceError` for a missing or unreadable file, a checkpoint of another task,
    or a member whose symbol tables or tokenization differ from the first one's.
    """
    if not paths:
        raise InferenceError("no checkpoint given")
    loaded = []
    for given in paths:
        try:
            path, state = read_checkpoint(given)
        except CheckpointError as err:
            raise InferenceError(str(err)) from None
        found = (state.get("config") or {}).get("task")
        if found != task:
            raise InferenceError(
                f"{path} is a {found!r} checkpoint; give one trained with a recipe from "
                f"recipes/{task}/ (task: {task})"
            )
        model, src, tgt, symbols = load_model(state)
        _check_space_marks(path, src, tgt, symbols)
        loaded.append((str(path), model, src, tgt, symbols))
    first_name, model, src, tgt, symbols = loaded[0]
    if len(loaded) == 1:
        return model, src, tgt, symbols
    ref = _signature(symbols)
    for name, _, _, _, other in loaded[1:]:
        sig = _signature(other)
        differ = [k for k in ref if sig[k] != ref[k]]
        if differ:
            raise InferenceError(
                f"{name} cannot join an ensemble with {first_name}: their {', '.join(differ)} "
                "differ (ensemble checkpoints trained on the same data and recipe)"
            )
    return Ensemble([m for _, m, _, _, _ in loaded]).eval(), src, tgt, symbols


def load_reverse_checkpoints(
    paths: Sequence[str | Path], task: str, symbols: dict[str, Any]
) -> tuple[Any, SymbolTable, SymbolTable, dict[str, Any]]:
    """The model (or ensemble) of `paths` that reads the target in the opposite direction
    to the model whose `symbols` are given, to rerank its n-best
    (`aligner.decode.rerank`): e.g. right-to-left checkpoints (`data.reverse_target`)
    for left-to-right ones. Returns `(model, its symbols)`; a one-line `ValueError` when
    the direction is the same or the symbol tables or tokenization differ."""
    model, src, tgt, reverse = load_checkpoints(paths, task)
    ref, sig = _signature(symbols), _signature(reverse)
    if sig["reverse_target"] == ref["reverse_target"]:
        way = "right-to-left" if ref["reverse_target"] else "left-to-right"
        raise InferenceError(
            f"{paths[0]} reads the target {way}, as the main model does; the reranking "
            "model must read it the other way (train it with --set data.reverse_target="
            f"{str(not ref['reverse_target']).lower()})"
        )
    differ = [k for k in ref if k != "reverse_target" and sig[k] != ref[k]]
    if differ:
        raise InferenceError(
            f"{paths[0]} cannot rerank the main model's output: their {', '.join(differ)} "
            "differ (train both on the same data with the same tokenization)"
        )
    return model, src, tgt, reverse
