"""Text tasks for the generic trainer: grapheme-to-phoneme (`g2p`) and translation (`nmt`).

Recipe sections (see `TextData`, `TextModel`)::

    task: g2p                       # or nmt
    data: {train: train.jsonl, valid: valid.jsonl, src_split: chars, tgt_split: words}
    model: {decoder: bahdanau, attention: additive, enc_hidden: 256, ...}

Manifests hold `id`, `source`, `target` (G2P: several lines may share a word, one per
pronunciation). Validation reports the token-level NLL (`loss`) and, from greedy or
beam decoding, PER/WER for G2P (a word is right when it equals ANY of its reference
pronunciations; PER uses the closest reference) or corpus BLEU (sacrebleu) for NMT, and
logs the attention of the first `plot_items` validation items to TensorBoard.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from aligner.config import from_dict
from aligner.data.collate import collate_text, pad
from aligner.data.datasets import TextPairDataset
from aligner.data.manifest import read_manifest
from aligner.decode.beam import Hypothesis, beam_search, greedy_search
from aligner.models.seq2seq import Seq2Seq, build_seq2seq
from aligner.text.symbols import SPECIALS, UNK, SymbolTable

Split = Literal["chars", "words", "tokens"]
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.UNICODE)
SPACE_MARK = "\u2581"  # "▁": the token follows a space (SentencePiece's convention)


# ----------------------------------------------------------------------------- config
@dataclass
class TextData:
    """`data:` section. Manifest paths are relative to the data folder.

    `src_split`/`tgt_split`: `chars` (each character), `words` (on whitespace) or
    `tokens` (words and punctuation apart, a token after a space marked with a leading
    "▁" so that output text gets its spacing back: see `split_spaced`). `min_freq`:
    rarer training tokens map to <unk> (NMT). `lowercase` folds the source,
    `lowercase_target` the target, before splitting (both recipes fold the source only:
    ARPAbet and translations keep their case). `reverse_target` trains a right-to-left
    model: it reads and writes the target tokens last to first (`output_tokens` turns its
    output back), the partner that reranks a left-to-right model's n-best
    (`aligner.decode.rerank`).
    """

    train: str = "train.jsonl"
    valid: str = "valid.jsonl"
    src_split: Split = "chars"
    tgt_split: Split = "words"
    lowercase: bool = False
    lowercase_target: bool = False
    min_freq: int = 1
    reverse_target: bool = False


@dataclass
class TextModel:
    """`model:` section: `build_seq2seq` arguments plus loss and validation decoding."""

    decoder: Literal["bahdanau", "luong"] = "bahdanau"
    emb_dim: int = 128
    enc_hidden: int = 256
    enc_layers: int = 1
    dec_hidden: int = 512
    dec_layers: int = 1
    attention: str = "additive"
    attn_dim: int = 256
    attention_options: dict[str, Any] | None = None
    out_dim: int = 256
    dropout: float = 0.2
    bridge: bool = True
    input_feeding: bool = True
    label_smoothing: float = 0.1
    valid_beam: int = 1
    length_penalty: float = 0.0
    max_len_ratio: float = 2.0
    plot_items: int = 3


# ----------------------------------------------------------------------------- tokens
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


def build_table(texts: Iterable[str], split: Callable[[str], list[str]], min_freq: int = 1):
    """A `SymbolTable` of the tokens seen at least `min_freq` times, most frequent first."""
    counts = Counter(tok for text in texts for tok in split(text))
    kept = sorted((t for t, c in counts.items() if c >= min_freq), key=lambda t: (-counts[t], t))
    return SymbolTable(kept)


# ----------------------------------------------------------------------------- metrics
def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between token sequences (substitution, insertion, deletion)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def g2p_error_rates(
    hypotheses: dict[str, list[str]], references: dict[str, list[list[str]]]
) -> tuple[float, float]:
    """PER and WER (fractions) of `hypotheses` (word -> phones) against `references`
    (word -> list of pronunciations).

    A word is correct when its hypothesis equals any reference. PER sums, over words,
    the edit distance to the closest reference, divided by the summed length of those
    closest references (ties: the shorter reference).
    """
    if not hypotheses:
        raise ValueError("no hypotheses to score")
    errors = length = wrong = 0
    for word, hyp in hypotheses.items():
        refs = references[word]
        dist, ref_len = min((edit_distance(hyp, r), len(r)) for r in refs)
        errors += dist
        length += ref_len
        wrong += dist > 0
    return errors / max(length, 1), wrong / len(hypotheses)


def corpus_bleu(hypotheses: list[str], references: list[str], lowercase: bool = False) -> float:
    """Corpus BLEU (sacrebleu, 13a tokenization) of detokenized strings; `lowercase`
    makes it case-insensitive."""
    import sacrebleu

    return float(sacrebleu.corpus_bleu(hypotheses, [references], lowercase=lowercase).score)


# ----------------------------------------------------------------------------- plotting
def _label(token: str) -> str:
    """How a token shows on a plot axis: without its leading `SPACE_MARK`."""
    return token[1:] if token.startswith(SPACE_MARK) and len(token) > 1 else token


def text_alignment_figure(weights, src_tokens: list[str], out_tokens: list[str], title=None):
    """A heatmap of `weights (T_out, T_src)` with output tokens on x, source tokens on y;
    the labels drop the `SPACE_MARK` of the `tokens` split (``▁know`` shows as ``know``)."""
    from aligner.attention.plot import alignment_figure

    fig = alignment_figure(weights, [_label(t) for t in src_tokens], title)
    ax = fig.axes[0]
    labels = [_label(t) for t in out_tokens]
    ax.set_xticks(range(len(out_tokens)), labels=labels, fontsize=6, rotation=90)
    ax.set_xlabel("output token")
    ax.set_ylabel("source token")
    fig.tight_layout()
    return fig


def text_alignment_image(weights, src_tokens, out_tokens, title=None) -> np.ndarray:
    """`(H, W, 3)` uint8 image of `text_alignment_figure`."""
    import matplotlib.pyplot as plt

    fig = text_alignment_figure(weights, src_tokens, out_tokens, title)
    fig.canvas.draw()
    image = np.ascontiguousarray(np.asarray(fig.canvas.buffer_rgba())[..., :3])
    plt.close(fig)
    return image


# ----------------------------------------------------------------------------- decoding
def decode_batch(
    model: Seq2Seq,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    beam: int = 1,
    nbest: int = 1,
    alpha: float = 0.0,
    max_len_ratio: float = 2.0,
) -> list[list[Hypothesis]]:
    """Greedy (`beam == 1`, `nbest == 1`) or beam search -> n-best lists per item."""
    if beam == 1 and nbest == 1:
        return [[h] for h in greedy_search(model, src, src_lengths, max_len_ratio)]
    return beam_search(model, src, src_lengths, beam, nbest, alpha, max_len_ratio)


def length_batches(
    encoded: Sequence[Sequence[int]], size: int
) -> Iterator[tuple[list[int], torch.Tensor, torch.Tensor]]:
    """Batches of at most `size` of the `encoded` inputs, shortest first, so that a
    batch pads little: ``(indices into encoded, padded ids (B, T_max), lengths (B,))``,
    padded with 0 (`<pad>`)."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1, got {size}")
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    for start in range(0, len(order), size):
        chunk = order[start : start + size]
        src, lengths, _ = pad([torch.tensor(encoded[i], dtype=torch.long) for i in chunk], 0)
        yield chunk, src, lengths


# ----------------------------------------------------------------------------- task
class TextTask:
    """G2P or NMT as a `aligner.tasks.base.Task`."""

    def __init__(
        self,
        kind: str,
        model: Seq2Seq,
        train_set: TextPairDataset,
        valid_set: TextPairDataset,
        src_table: SymbolTable,
        tgt_table: SymbolTable,
        data: TextData,
        options: TextModel,
    ) -> None:
        self.kind, self.model = kind, model
        self.train_set, self.valid_set = train_set, valid_set
        self.src_table, self.tgt_table = src_table, tgt_table
        self.data, self.options = data, options
        # validation scores against the manifest's own targets, not their token ids:
        # rare NMT tokens map to <unk>, which the references must not contain
        self._references = {
            str(item.get("id", n)): item["target"] for n, item in enumerate(valid_set.items)
        }
        self.symbols = {
            "task": kind,
            "src": src_table.to_dict(),
            "tgt": tgt_table.to_dict(),
            "data": asdict(data),
        }

    def lengths(self, dataset: TextPairDataset) -> Sequence[int]:
        return dataset.lengths

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        return collate_text(examples)

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        """Label-smoothed NLL over valid target tokens (mean per token)."""
        log_probs, _ = model(batch["src"], batch["src_lengths"], batch["tgt_in"])
        smoothed, nll = token_losses(log_probs, batch["tgt_out"], self.options.label_smoothing)
        return smoothed, {"nll": float(nll)}

    @torch.no_grad()
    def validate(self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger):
        """NLL per token, then PER/WER (g2p) or BLEU (nmt) from decoding; attention plots."""
        nll_sum, n_tokens = 0.0, 0
        sources, hyps, refs = [], [], []
        for batch in batches:
            log_probs, _ = model(batch["src"], batch["src_lengths"], batch["tgt_in"])
            _, nll = token_losses(log_probs, batch["tgt_out"], 0.0)
            count = int((batch["tgt_out"] != model.pad_id).sum())
            nll_sum, n_tokens = nll_sum + float(nll) * count, n_tokens + count
            for i, nbest in enumerate(self._decode(model, batch["src"], batch["src_lengths"])):
                sources.append(self._src_text(batch["src"][i, : batch["src_lengths"][i]]))
                hyps.append(output_tokens(self.tgt_table.decode(nbest[0].tokens), self.symbols))
                refs.append(self._references[batch["ids"][i]])
        metrics = {"loss": nll_sum / max(n_tokens, 1)}
        metrics.update(self._scores(sources, hyps, refs))
        if logger is not None:
            self._plot(model, step, logger)
        return metrics

    # -- helpers ------------------------------------------------------------------
    def _decode(self, model: Seq2Seq, src: torch.Tensor, lengths: torch.Tensor):
        o = self.options
        return decode_batch(model, src, lengths, o.valid_beam, 1, o.length_penalty, o.max_len_ratio)

    def _src_text(self, ids: torch.Tensor) -> str:
        return join_tokens(self.src_table.decode(ids.tolist()), self.data.src_split)

    def _scores(self, sources: list[str], hyps: list[list[str]], refs: list[str]):
        """PER/WER (g2p) or BLEU (nmt) of decoded token lists against target texts."""
        if not hyps:
            return {}
        data = self.data
        if self.kind == "g2p":
            split = splitter(data.tgt_split, data.lowercase_target)
            by_word: dict[str, list[list[str]]] = {}
            first: dict[str, list[str]] = {}
            for src, hyp, ref in zip(sources, hyps, refs):
                by_word.setdefault(src, []).append(split(ref))
                first.setdefault(src, hyp)
            per, wer = g2p_error_rates(first, by_word)
            return {"per": 100 * per, "wer": 100 * wer}
        texts = [join_tokens(h, data.tgt_split) for h in hyps]
        return {"bleu": corpus_bleu(texts, refs, lowercase=data.lowercase_target)}

    def _plot(self, model: Seq2Seq, step: int, logger) -> None:
        """Attention of the same first validation items at every validation."""
        n = min(self.options.plot_items, len(self.valid_set))
        if n == 0 or not getattr(logger, "enabled", True):
            return
        batch = collate_text([self.valid_set[i] for i in range(n)])
        device = next(model.parameters()).device
        src, lengths = batch["src"].to(device), batch["src_lengths"].to(device)
        for i, nbest in enumerate(self._decode(model, src, lengths)):
            hyp = nbest[0]
            src_tokens = self.src_table.decode(batch["src"][i, : lengths[i]].tolist())
            out_tokens = [*self.tgt_table.decode(hyp.tokens), "</s>"]
            image = text_alignment_image(hyp.attention, src_tokens, out_tokens)
            logger.image(f"alignment/{batch['ids'][i]}", image, step)


def token_losses(log_probs: torch.Tensor, target: torch.Tensor, smoothing: float, pad_id: int = 0):
    """Label-smoothed and plain NLL, each averaged over non-pad targets.

    `log_probs (B, U, V)` (log-softmax outputs), `target (B, U)` with `pad_id` padding.
    The smoothed loss is `(1 - eps) * NLL + eps * mean_v(-log p_v)`.
    """
    flat_lp, flat_t = log_probs.reshape(-1, log_probs.size(-1)), target.reshape(-1)
    nll = F.nll_loss(flat_lp, flat_t, ignore_index=pad_id)
    if smoothing == 0.0:
        return nll, nll.detach()
    mask = flat_t != pad_id
    uniform = -flat_lp[mask].mean(dim=-1).mean()
    return (1 - smoothing) * nll + smoothing * uniform, nll.detach()


def build(cfg: Any, data_dir: Path) -> TextTask:
    """Build the G2P/NMT task of an `ExperimentConfig` from manifests under `data_dir`."""
    data = from_dict(TextData, cfg.data, where="data")
    opts = from_dict(TextModel, cfg.model, where="model")
    paths = {name: Path(data_dir) / getattr(data, name) for name in ("train", "valid")}
    for name, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: no {name} manifest; run `aligner prepare` or set data.{name}"
            )
    train_items, valid_items = read_manifest(paths["train"]), read_manifest(paths["valid"])
    if cfg.task not in ("g2p", "nmt"):
        raise ValueError(f"aligner.tasks.text builds g2p or nmt, not {cfg.task!r}")
    src_fn = splitter(data.src_split, data.lowercase)
    tgt_fn = splitter(data.tgt_split, data.lowercase_target)
    if data.reverse_target:
        tgt_fn = _reversed(tgt_fn)
    src_table = build_table((it["source"] for it in train_items), src_fn, data.min_freq)
    tgt_table = build_table((it["target"] for it in train_items), tgt_fn, data.min_freq)
    unknown = "map" if data.min_freq > 1 else "error"
    train_set = TextPairDataset(train_items, src_table, tgt_table, src_fn, tgt_fn, unknown)
    valid_set = TextPairDataset(valid_items, src_table, tgt_table, src_fn, tgt_fn, "map")
    model = build_model(opts, len(src_table), len(tgt_table))
    return TextTask(cfg.task, model, train_set, valid_set, src_table, tgt_table, data, opts)


def _reversed(split: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """`split` with its tokens in reverse order (a right-to-left model's targets)."""
    return lambda text: split(text)[::-1]


def output_tokens(tokens: Sequence[str], symbols: dict[str, Any]) -> list[str]:
    """A model's output tokens in reading order: reversed back for a right-to-left
    model (`data.reverse_target` in its `symbols`), unchanged otherwise."""
    reverse = symbols.get("data", {}).get("reverse_target", False)
    return list(tokens)[::-1] if reverse else list(tokens)


def build_model(opts: TextModel, src_vocab: int, tgt_vocab: int) -> Seq2Seq:
    """The `Seq2Seq` of a `model:` section."""
    skip = {"label_smoothing", "valid_beam", "length_penalty", "max_len_ratio", "plot_items"}
    kwargs = {k: v for k, v in asdict(opts).items() if k not in skip}
    return build_seq2seq(src_vocab, tgt_vocab, **kwargs)


def load_model(checkpoint: dict[str, Any]) -> tuple[Seq2Seq, SymbolTable, SymbolTable, dict]:
    """Model, source and target tables and the `symbols` dict of a text checkpoint.

    `symbols["decoding"]` holds the recipe's decoding defaults (`length_penalty`,
    `max_len_ratio`), which the command line and scripts use unless told otherwise.
    """
    symbols = checkpoint["symbols"]
    src, tgt = SymbolTable.from_dict(symbols["src"]), SymbolTable.from_dict(symbols["tgt"])
    opts = from_dict(TextModel, checkpoint["config"].get("model", {}), where="model")
    model = build_model(opts, len(src), len(tgt))
    model.load_state_dict(checkpoint["model"])
    decoding = {"length_penalty": opts.length_penalty, "max_len_ratio": opts.max_len_ratio}
    return model.eval(), src, tgt, {**symbols, "decoding": decoding}


def decoding_options(
    symbols: dict[str, Any], alpha: float | None = None, max_len_ratio: float | None = None
) -> tuple[float, float]:
    """`(alpha, max_len_ratio)` for decoding: the given values, else the recipe's
    (`symbols["decoding"]` of `load_model`)."""
    recipe = symbols["decoding"]
    return (
        recipe["length_penalty"] if alpha is None else alpha,
        recipe["max_len_ratio"] if max_len_ratio is None else max_len_ratio,
    )


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
            raise ValueError(
                f"{path}: its {side} tokens carry no '{SPACE_MARK}' space marks: it was "
                "trained before the tokens split marked spaces; retrain it with this "
                "version of aligner"
            )


def load_checkpoints(paths: Sequence[str | Path], task: str):
    """One model, or an `Ensemble` of several, from the checkpoint files `paths` of a
    `task` (g2p | nmt) run.

    Returns `(model, src_table, tgt_table, symbols)` as `load_model` does. Raises a
    one-line `ValueError` for a missing or unreadable file, a checkpoint of another task,
    or a member whose symbol tables or tokenization differ from the first one's.
    """
    from aligner.decode.ensemble import Ensemble
    from aligner.train.checkpoint import load_checkpoint

    if not paths:
        raise ValueError("no checkpoint given")
    loaded = []
    for path in paths:
        state = load_checkpoint(path)
        found = (state.get("config") or {}).get("task")
        if found != task:
            raise ValueError(
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
            raise ValueError(
                f"{name} cannot join an ensemble with {first_name}: their {', '.join(differ)} "
                "differ (ensemble checkpoints trained on the same data and recipe)"
            )
    return Ensemble([m for _, m, _, _, _ in loaded]).eval(), src, tgt, symbols


def load_reverse_checkpoints(
    paths: Sequence[str | Path], task: str, symbols: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """The model (or ensemble) of `paths` that reads the target in the opposite direction
    to the model whose `symbols` are given, to rerank its n-best
    (`aligner.decode.rerank`): e.g. right-to-left checkpoints (`data.reverse_target`)
    for left-to-right ones. Returns `(model, its symbols)`; a one-line `ValueError` when
    the direction is the same or the symbol tables or tokenization differ."""
    model, _, _, reverse = load_checkpoints(paths, task)
    ref, sig = _signature(symbols), _signature(reverse)
    if sig["reverse_target"] == ref["reverse_target"]:
        way = "right-to-left" if ref["reverse_target"] else "left-to-right"
        raise ValueError(
            f"{paths[0]} reads the target {way}, as the main model does; the reranking "
            "model must read it the other way (train it with --set data.reverse_target="
            f"{str(not ref['reverse_target']).lower()})"
        )
    differ = [k for k in ref if k != "reverse_target" and sig[k] != ref[k]]
    if differ:
        raise ValueError(
            f"{paths[0]} cannot rerank the main model's output: their {', '.join(differ)} "
            "differ (train both on the same data with the same tokenization)"
        )
    return model, reverse
