"""`aligner g2p` and `aligner translate`: argument handling for text seq2seq inference.

The work is done by `aligner.tasks.text` (model loading, tokenization) and
`aligner.decode.beam` (greedy and beam search).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

import click

BATCH = 128


def load_text_checkpoints(paths: tuple[Path, ...], task: str) -> tuple[Any, Any, Any, dict]:
    """Model and tables of one checkpoint of `task` (g2p | nmt), or an ensemble of
    several (`aligner.decode.ensemble`); one-line errors otherwise."""
    from aligner.tasks.text import load_checkpoints

    try:
        return load_checkpoints(paths, task)
    except ValueError as err:
        raise click.ClickException(str(err)) from None


class Input(NamedTuple):
    """One input line and where it came from (``words.txt:4``, ``argument 2``, an id)."""

    where: str
    text: str


def read_inputs(
    items: tuple[str, ...], in_file: Path | None, what: str, given_as: str = "as arguments"
) -> list[Input]:
    """The input lines from the arguments or `--in FILE`, each with its origin; blank
    lines are kept (a translation keeps one output line per input line)."""
    if items and in_file is not None:
        raise click.ClickException(f"give the {what} {given_as} or with --in, not both")
    if in_file is None:
        inputs = [Input(f"argument {n}", s.strip()) for n, s in enumerate(items, 1)]
    elif not in_file.is_file():
        raise click.ClickException(f"--in {in_file} does not exist")
    elif in_file.suffix == ".jsonl":
        inputs = _manifest_sources(in_file)
    else:
        try:
            text = in_file.read_text(encoding="utf-8")
        except UnicodeDecodeError as err:
            raise click.ClickException(
                f"--in {in_file} is not UTF-8 text (byte {err.start}); convert it to UTF-8"
            ) from None
        inputs = [Input(f"{in_file}:{n}", s.strip()) for n, s in enumerate(text.splitlines(), 1)]
    if not any(inp.text for inp in inputs):
        where = f" in {in_file}" if in_file is not None else ""
        raise click.ClickException(f"no {what} given{where}: nothing to do")
    return inputs


def _manifest_sources(path: Path) -> list[Input]:
    """The `source` of every item of a JSON Lines manifest (e.g. data/test.jsonl)."""
    from aligner.data.manifest import read_manifest

    try:
        items = read_manifest(path)
    except ValueError as err:
        raise click.ClickException(str(err).splitlines()[0]) from None
    missing = [str(it.get("id", n)) for n, it in enumerate(items, 1) if not it.get("source")]
    if missing:
        raise click.ClickException(f"{path}: items without 'source': {', '.join(missing[:5])}")
    return [
        Input(f"{path} item {it.get('id', n)}", it["source"].strip())
        for n, it in enumerate(items, 1)
    ]


def _strip_accents(token: str) -> str:
    """``ï`` -> ``i``: the letters of a token without their combining marks (NFKD)."""
    decomposed = unicodedata.normalize("NFKD", token)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def encode_one(text: str, table: Any, data: dict, unknown: str) -> list[int]:
    """Tokenize and encode one input; raises `ValueError` with the reason.

    With character tokens, a letter the model does not know is retried without its
    accents (``naïve`` as ``naive``) before it counts as unknown.
    """
    from aligner.tasks.text import splitter
    from aligner.text.symbols import UnknownSymbolError

    tokens = splitter(data["src_split"], data["lowercase"])(text)
    if data["src_split"] == "chars":
        tokens = [
            c for tok in tokens for c in (tok if tok in table else _strip_accents(tok) or tok)
        ]
    try:
        ids = table.encode(tokens, unknown=unknown)
    except UnknownSymbolError as err:
        unknowns = ", ".join(
            f"{tok!r} at position {pos[0] + 1}" for tok, pos in err.unknown.items()
        )
        chars = sorted(s for s in table.symbols[4:] if len(s) == 1)
        known = "".join(c for c in chars if c.isalnum())
        marks = " ".join("space" if c.isspace() else c for c in chars if not c.isalnum())
        known += f" and {marks}" if marks else ""
        hint = f"; it knows {known}" if data["src_split"] == "chars" else ""
        raise ValueError(f"the model has no symbol {unknowns}{hint}") from None
    if not ids:
        raise ValueError("no tokens to convert")
    return ids


def encode_inputs(
    inputs: list[Input], table: Any, data: dict, unknown: str, blank_is_error: bool = False
) -> list[list[int] | None]:
    """Encoded ids of each input; None for a blank one and for a bad one, which is
    reported on stderr in one line naming where it came from and why (a blank one too
    with `blank_is_error`)."""
    encoded: list[list[int] | None] = []
    for inp in inputs:
        ids = None
        if not inp.text and blank_is_error:
            click.echo(f"Error: {inp.where} is blank; give a word there; skipped", err=True)
        elif inp.text:
            try:
                ids = encode_one(inp.text, table, data, unknown)
            except ValueError as err:
                click.echo(f"Error: {inp.where} {inp.text!r}: {err}; skipped", err=True)
        encoded.append(ids)
    return encoded


def decode_all(
    model: Any,
    encoded: list[list[int] | None],
    beam: int,
    nbest: int,
    alpha: float,
    max_len_ratio: float,
    rerank_by: tuple[Any, float] | None = None,
):
    """n-best `Hypothesis` lists for every encoded input, in input order (batched by
    length); None where the input is None. With `rerank_by = (reverse_model, weight)`
    the whole beam is reranked by the model reading the target the other way
    (`aligner.decode.rerank`) before the `nbest` best are kept."""
    from tqdm import tqdm

    from aligner.decode.rerank import rerank, reverse_scores
    from aligner.tasks.text import decode_batch, length_batches

    todo = [i for i, ids in enumerate(encoded) if ids is not None]
    results: list[Any] = [None] * len(encoded)
    batches = list(length_batches([encoded[i] for i in todo], BATCH))
    for chunk, src, lengths in tqdm(
        batches, disable=len(batches) < 4, desc="decoding", unit="batch"
    ):
        found = decode_batch(
            model, src, lengths, beam, nbest if rerank_by is None else beam, alpha, max_len_ratio
        )
        if rerank_by is not None:
            back = reverse_scores(rerank_by[0], src, lengths, found, alpha)
            found = [hyps[:nbest] for hyps in rerank(found, back, rerank_by[1])]
        for k, hyps in zip(chunk, found):
            results[todo[k]] = hyps
    return results


def check_search(beam: int, nbest: int, alignment: Path | None, n_inputs: int, force: bool):
    if beam < 1 or not 1 <= nbest <= beam:
        raise click.ClickException(
            f"need --beam >= 1 and 1 <= --nbest <= --beam, got {beam}, {nbest}"
        )
    if alignment is not None:
        if n_inputs != 1:
            raise click.ClickException("--alignment needs exactly one input; give a single one")
        if alignment.exists() and not force:
            raise click.ClickException(f"{alignment} exists; pass --force to overwrite it")


def check_rerank(r2l: tuple[Path, ...], weight: float | None, beam: int) -> None:
    """--r2l needs a beam to rerank; --r2l-weight needs --r2l and lies in [0, 1]."""
    if not r2l:
        if weight is not None:
            raise click.ClickException("--r2l-weight needs --r2l CHECKPOINT to rerank with")
        return
    if beam < 2:
        raise click.ClickException(
            "--r2l reranks the beam's candidates: give --beam 2 or more (greedy has one)"
        )
    if weight is not None and not 0.0 <= weight <= 1.0:
        raise click.ClickException(f"need 0 <= --r2l-weight <= 1, got {weight}")


def save_alignment(hyp: Any, src_tokens: list[str], out_tokens: list[str], path: Path) -> None:
    import matplotlib.pyplot as plt

    from aligner.tasks.text import text_alignment_figure

    path.parent.mkdir(parents=True, exist_ok=True)
    fig = text_alignment_figure(hyp.attention, src_tokens, [*out_tokens, "</s>"])
    fig.savefig(path, format="png")
    plt.close(fig)
    click.echo(f"alignment -> {path}", err=True)


def run(
    task: str,
    checkpoints: tuple[Path, ...],
    inputs: list[Input],
    beam: int,
    nbest: int,
    alpha: float | None,
    max_len_ratio: float | None,
    alignment: Path | None,
    force: bool,
    r2l: tuple[Path, ...] = (),
    r2l_weight: float | None = None,
) -> None:
    """Shared body of both commands: load, encode, decode, print (and plot).

    `r2l`: checkpoints of models reading the target the other way, whose scores rerank
    the beam with weight `r2l_weight` (default 0.5; `aligner.decode.rerank`).

    A bad input is reported and skipped while the others are converted; the command
    then ends with exit status 1 after counting them. A translation prints an empty
    line for a blank or skipped input, so that its output lines match the input lines;
    for G2P a blank input (an empty argument) is a bad one.
    """
    from aligner.tasks.text import (
        decoding_options,
        join_tokens,
        load_reverse_checkpoints,
        output_tokens,
    )

    blank_is_error = task == "g2p"  # g2p has dropped its words file's blank lines
    given = len(inputs) if blank_is_error else sum(bool(inp.text) for inp in inputs)
    check_search(beam, nbest, alignment, given, force)
    check_rerank(r2l, r2l_weight, beam)
    r2l_weight = 0.5 if r2l_weight is None else r2l_weight
    model, src_table, tgt_table, symbols = load_text_checkpoints(checkpoints, task)
    rerank_by = None
    if r2l:
        try:
            rerank_by = (load_reverse_checkpoints(r2l, task, symbols)[0], r2l_weight)
        except ValueError as err:
            raise click.ClickException(str(err)) from None
    data = symbols["data"]
    unknown = "map" if data.get("min_freq", 1) > 1 else "error"
    encoded = encode_inputs(inputs, src_table, data, unknown, blank_is_error)
    alpha, max_len_ratio = decoding_options(symbols, alpha, max_len_ratio)
    if max_len_ratio <= 0:
        raise click.ClickException(f"need --max-len-ratio > 0, got {max_len_ratio}")
    results = decode_all(model, encoded, beam, nbest, alpha, max_len_ratio, rerank_by)
    for inp, hyps in zip(inputs, results):
        if hyps is None:
            if task == "nmt" and nbest == 1:
                click.echo("")
            continue
        for rank, hyp in enumerate(hyps, 1):
            out = join_tokens(
                output_tokens(tgt_table.decode(hyp.tokens), symbols), data["tgt_split"]
            )
            if nbest == 1:
                click.echo(f"{inp.text}\t{out}" if task == "g2p" else out)
            else:
                click.echo(f"{inp.text}\t{rank}\t{hyp.score:.4f}\t{out}")
    done = [i for i, hyps in enumerate(results) if hyps is not None]
    if alignment is not None and done:
        hyp, ids = results[done[0]][0], encoded[done[0]]
        save_alignment(hyp, src_table.decode(ids), tgt_table.decode(hyp.tokens), alignment)
    bad = given - len(done)
    if bad:
        if given > 1:
            click.echo(f"Error: skipped {bad} of {given} inputs (reported above)", err=True)
        raise click.exceptions.Exit(1)


def search_options(func):
    """--beam, --nbest, --alpha, --max-len-ratio, --alignment, --force, --r2l, --r2l-weight,
    --checkpoint, --in."""
    options = [
        click.option("--beam", default=5, show_default=True, help="Beam size (1 = greedy)."),
        click.option("--nbest", default=1, show_default=True, help="Outputs per input."),
        click.option(
            "--alpha",
            type=float,
            default=None,
            help="GNMT length penalty ((5 + n) / 6) ** alpha; 0 = plain log-probability "
            "[default: the recipe's model.length_penalty].",
        ),
        click.option(
            "--max-len-ratio",
            type=float,
            default=None,
            help="Stop an output at this many tokens per input token "
            "[default: the recipe's model.max_len_ratio].",
        ),
        click.option(
            "--alignment",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Write the attention of the (single) input's best output as a PNG.",
        ),
        click.option("--force", is_flag=True, help="Overwrite an existing --alignment file."),
        click.option(
            "--r2l",
            multiple=True,
            type=click.Path(path_type=Path),
            help="A checkpoint that reads the target the other way (trained with "
            "data.reverse_target=true for left-to-right --checkpoints); repeat it for an "
            "ensemble. Its scores rerank the whole beam before --nbest are kept.",
        ),
        click.option(
            "--r2l-weight",
            type=float,
            default=None,
            help="Weight w of the --r2l score: (1 - w) * main + w * r2l, also the score "
            "printed with --nbest  [default: 0.5].",
        ),
        click.option(
            "--checkpoint",
            "checkpoints",
            required=True,
            multiple=True,
            type=click.Path(path_type=Path),
            help="A checkpoint (.pt) from EXP/checkpoints; repeat it to decode an ensemble "
            "(probabilities averaged per step) of models trained on the same data.",
        ),
        click.option(
            "--in",
            "in_file",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Read the inputs from this file, one a line (or a .jsonl manifest's sources).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.command()
@click.argument("words", nargs=-1)
@search_options
def g2p(words, in_file, **search):
    """Convert WORD... (or the words of --in FILE) to ARPAbet phonemes.

    Prints `word<TAB>phonemes` (with --nbest N: `word<TAB>rank<TAB>score<TAB>phonemes`;
    with --r2l the score is the reranking's interpolated one).
    """
    inputs = read_inputs(words, in_file, "words")
    if in_file is not None:  # blank lines of a words file are spacing, not words
        inputs = [inp for inp in inputs if inp.text]
    run("g2p", inputs=inputs, **search)


@click.command()
@click.option("--text", default=None, help="A sentence to translate.")
@search_options
def translate(text, in_file, **search):
    """Translate --text or each line of --in FILE with an NMT checkpoint.

    Prints one translation a line (with --nbest N: `input<TAB>rank<TAB>score<TAB>output`).
    """
    inputs = read_inputs((text,) if text is not None else (), in_file, "text", "with --text")
    run("nmt", inputs=inputs, **search)
