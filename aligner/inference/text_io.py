"""`aligner g2p` and `aligner translate` as one library call: read the inputs, decode them
with a model or ensemble (optionally reranked), report bad inputs, and draw an alignment.

    run = decode_inputs("g2p", ["exp/g2p/avg.pt"], Search(beam=5), words=("aligner",))
    for line in run.lines(): print(line)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from aligner.attention.plot import text_alignment_figure
from aligner.data.manifest import manifest_items
from aligner.decode.beam import Hypothesis
from aligner.families import family_name, role
from aligner.inference.common import InferenceError, read_text_file
from aligner.inference.text import TextModel, load_reverse_model, load_text_model
from aligner.text.splitting import display_label


class Input(NamedTuple):
    """One input line and where it came from (``words.txt:4``, ``argument 2``, an id)."""

    where: str
    text: str


@dataclass(frozen=True)
class Search:
    """How to decode: beam size, outputs per input, length penalty and limit (None: the
    recipe's), and right-to-left checkpoints that rerank the beam with `r2l_weight`."""

    beam: int = 5
    nbest: int = 1
    alpha: float | None = None
    max_len_ratio: float | None = None
    r2l: tuple[Path, ...] = ()
    r2l_weight: float | None = None

    def check(self) -> None:
        if self.beam < 1 or not 1 <= self.nbest <= self.beam:
            raise InferenceError(
                f"need --beam >= 1 and 1 <= --nbest <= --beam, got {self.beam}, {self.nbest}"
            )
        if not self.r2l:
            if self.r2l_weight is not None:
                raise InferenceError("--r2l-weight needs --r2l CHECKPOINT to rerank with")
            return
        if self.beam < 2:
            raise InferenceError(
                "--r2l reranks the beam's candidates: give --beam 2 or more (greedy has one)"
            )
        if self.r2l_weight is not None and not 0.0 <= self.r2l_weight <= 1.0:
            raise InferenceError(f"need 0 <= --r2l-weight <= 1, got {self.r2l_weight}")


@dataclass
class TextRun:
    """The outcome of `decode_inputs`: per input its n-best (None for a bad or blank one),
    the one-line reasons of the bad ones, and how many inputs were given."""

    task: str
    model: TextModel
    inputs: list[Input]
    results: list[list[Hypothesis] | None]
    nbest: int
    errors: list[str] = field(default_factory=list)
    given: int = 0

    @property
    def bad(self) -> int:
        return self.given - sum(r is not None for r in self.results)

    @property
    def words(self) -> bool:
        """Whether the inputs are words (G2P: ``word<TAB>output`` lines), not sentences."""
        return role(family_name({"task": self.task}), self.task).reads == "words"

    def lines(self) -> Iterator[str]:
        """The output lines: `word<TAB>phonemes` (g2p) or the translation (nmt), or with
        nbest > 1 `input<TAB>rank<TAB>score<TAB>output`; a translation keeps one (empty)
        line for a blank or skipped input."""
        for inp, hyps in zip(self.inputs, self.results):
            if hyps is None:
                if not self.words and self.nbest == 1:
                    yield ""
                continue
            for rank, hyp in enumerate(hyps, 1):
                out = self.model.text(hyp)
                if self.nbest > 1:
                    yield f"{inp.text}\t{rank}\t{hyp.score:.4f}\t{out}"
                else:
                    yield f"{inp.text}\t{out}" if self.words else out


def read_inputs(
    items: Sequence[str], in_file: Path | None, what: str, given_as: str
) -> list[Input]:
    """The input lines from the arguments or `in_file` (text, one a line, or a .jsonl
    manifest's sources), each with its origin; blank lines are kept."""
    if items and in_file is not None:
        raise InferenceError(f"give the {what} {given_as} or with --in, not both")
    if in_file is None:
        inputs = [Input(f"argument {n}", s.strip()) for n, s in enumerate(items, 1)]
    elif not in_file.is_file():
        raise InferenceError(f"--in {in_file} does not exist")
    elif in_file.suffix == ".jsonl":
        inputs = _manifest_sources(in_file)
    else:
        text = read_text_file(in_file)  # a byte-order mark is no part of the first line
        inputs = [Input(f"{in_file}:{n}", s.strip()) for n, s in enumerate(text.splitlines(), 1)]
    if not any(inp.text for inp in inputs):
        where = f" in {in_file}" if in_file is not None else ""
        raise InferenceError(f"no {what} given{where}: nothing to do")
    return inputs


def _manifest_sources(path: Path) -> list[Input]:
    """The `source` of every item of a JSON Lines manifest (e.g. data/test.jsonl)."""
    items = manifest_items(path, "--in", ("source",))
    return [
        Input(f"{path} item {it.get('id', n)}", it["source"].strip())
        for n, it in enumerate(items, 1)
    ]


def encode_inputs(model: TextModel, inputs: list[Input], blank_is_error: bool):
    """Encoded ids of each input (None for a blank or bad one) and the one-line reason of
    each bad one (a blank one too with `blank_is_error`), in input order."""
    encoded: list[list[int] | None] = []
    errors: list[str] = []
    for inp in inputs:
        ids = None
        if not inp.text and blank_is_error:
            errors.append(f"{inp.where} is blank; give a word there; skipped")
        elif inp.text:
            try:
                ids = model.encode(inp.text)
            except InferenceError as err:
                errors.append(f"{inp.where} {inp.text!r}: {err}; skipped")
        encoded.append(ids)
    return encoded, errors


def decode_inputs(
    task: str,
    checkpoints: Sequence[Path],
    search: Search,
    words: Sequence[str] = (),
    in_file: Path | None = None,
    alignment: Path | None = None,
    force: bool = False,
) -> TextRun:
    """Read, encode and decode the inputs of `aligner g2p` (`words` or the non-blank lines
    of `in_file`) or `aligner translate` (one sentence, or every line of `in_file`), and
    draw the attention of the single input's best output to `alignment` (PNG).

    A bad input is reported in `TextRun.errors` and skipped while the others are
    decoded; for G2P a blank argument counts as bad.
    """
    reads_words = role(family_name({"task": task}), task).reads == "words"  # G2P
    what, given_as = ("words", "as arguments") if reads_words else ("text", "with --text")
    inputs = read_inputs(words, in_file, what, given_as)
    if reads_words and in_file is not None:  # blank lines of a words file are spacing
        inputs = [inp for inp in inputs if inp.text]
    blank_is_error = reads_words
    given = len(inputs) if blank_is_error else sum(bool(inp.text) for inp in inputs)
    search.check()
    _check_alignment(alignment, given, force)
    model = load_text_model(checkpoints, task)
    rerank_by = None
    if search.r2l:
        weight = 0.5 if search.r2l_weight is None else search.r2l_weight
        rerank_by = (load_reverse_model(search.r2l, model), weight)
    encoded, errors = encode_inputs(model, inputs, blank_is_error)
    results = model.decode(
        encoded, search.beam, search.nbest, search.alpha, search.max_len_ratio, rerank_by, True
    )
    run = TextRun(task, model, inputs, results, search.nbest, errors, given)
    done = [i for i, hyps in enumerate(results) if hyps is not None]
    if alignment is not None and done:
        save_text_alignment(model, results[done[0]][0], encoded[done[0]], alignment)
    return run


def _check_alignment(alignment: Path | None, n_inputs: int, force: bool) -> None:
    if alignment is None:
        return
    if n_inputs != 1:
        raise InferenceError("--alignment needs exactly one input; give a single one")
    if alignment.exists() and not force:
        raise InferenceError(f"{alignment} exists; pass --force to overwrite it")


def save_text_alignment(model: TextModel, hyp: Hypothesis, ids: Any, path: Path) -> None:
    """The attention of `hyp` as a PNG heatmap, source tokens against output tokens."""
    import matplotlib.pyplot as plt

    src = [display_label(t) for t in model.source_tokens(ids)]
    out = [display_label(t) for t in [*model.tgt.decode(hyp.tokens), "</s>"]]
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = text_alignment_figure(hyp.attention, src, out)
    fig.savefig(path, format="png")
    plt.close(fig)
