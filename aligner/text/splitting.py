"""Token splitting and joining for the text seq2seq tasks (G2P, translation).

A split turns a text into tokens and `join_tokens` turns tokens back into text:
``chars`` (each character), ``words`` (on whitespace) or ``tokens`` (words and
punctuation apart; a token that follows a space carries a leading `SPACE_MARK`, so that
joined output gets its spacing back).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from aligner.text.symbols import UNK, SymbolTable

Split = Literal["chars", "words", "tokens"]
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
SPACE_MARK = "\u2581"  # "▁": the token follows a space (SentencePiece's convention)


def splitter(kind: str, lowercase: bool = False) -> Callable[[str], list[str]]:
    """Text -> tokens for `kind` in chars | words | tokens."""
    base: dict[str, Callable[[str], list[str]]] = {
        "chars": list,
        "words": str.split,
        "tokens": split_spaced,
    }
    if kind not in base:
        raise ValueError(f"unknown split {kind!r}; choose one of {', '.join(base)}")
    fn = base[kind]
    return (lambda text: fn(text.lower())) if lowercase else fn


def reversed_split(split: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """`split` with its tokens in reverse order (a right-to-left model's targets)."""
    return lambda text: split(text)[::-1]


def split_spaced(text: str) -> list[str]:
    """Words (`\\w+`) and single punctuation marks; a token that starts the text or
    follows whitespace carries a leading `SPACE_MARK`.

    ``"I don't know, Tom."`` -> ``["▁I", "▁don", "'", "t", "▁know", ",", "▁Tom", "."]``;
    `join_tokens(tokens, "tokens")` gives the text back with its whitespace normalized.
    """
    return [
        SPACE_MARK + m.group() if m.start() == 0 or text[m.start() - 1].isspace() else m.group()
        for m in _TOKEN_RE.finditer(text)
    ]


def join_tokens(tokens: Sequence[str], kind: str) -> str:
    """Inverse of `splitter` up to runs of whitespace: chars are concatenated, words
    space-joined, tokens glued with each `SPACE_MARK` turned back into a space."""
    if kind == "chars":
        return "".join(tokens)
    if kind == "tokens":  # <unk> stands for a word: it gets a space before it
        glued = "".join(SPACE_MARK + t if t == UNK else t for t in tokens)
        return glued.replace(SPACE_MARK, " ").strip()
    return " ".join(tokens)


def output_tokens(tokens: Sequence[str], data: dict[str, Any]) -> list[str]:
    """A model's output tokens in reading order: reversed back for a right-to-left model
    (`reverse_target` in its `data` settings), unchanged otherwise."""
    return list(tokens)[::-1] if data.get("reverse_target", False) else list(tokens)


def display_label(token: str) -> str:
    """How a token shows on a plot axis: without its leading `SPACE_MARK`."""
    return token[1:] if token.startswith(SPACE_MARK) and len(token) > 1 else token


def build_table(texts: Iterable[str], split: Callable[[str], list[str]], min_freq: int = 1):
    """A `SymbolTable` of the tokens seen at least `min_freq` times, most frequent first."""
    counts = Counter(tok for text in texts for tok in split(text))
    kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
    return SymbolTable(kept)
