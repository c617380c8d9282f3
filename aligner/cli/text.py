"""`aligner g2p` and `aligner translate`: options in, `aligner.inference.text_io.decode_inputs`
out, lines printed."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.errors import user_errors
from aligner.cli.options import FLOAT, FloatRange, renamed, resolve_checkpoint


def run(task: str, words=(), in_file=None, alignment=None, force=False, **search) -> None:
    """Decode with `decode_inputs` and print its lines; bad inputs are named on stderr and
    the command then exits 1 after counting them."""
    from aligner.inference.text_io import Search, decode_inputs

    checkpoints = search.pop("checkpoints")
    with user_errors():  # also a --in manifest that cannot be read
        result = decode_inputs(
            task, checkpoints, Search(**search), words, in_file, alignment, force
        )
    for error in result.errors:
        click.echo(f"Error: {error}", err=True)
    for line in result.lines():
        click.echo(line)
    if alignment is not None and result.bad < result.given:
        click.echo(f"alignment -> {alignment}", err=True)
    if result.bad:
        if result.given > 1:
            click.echo(
                f"Error: skipped {result.bad} of {result.given} inputs (reported above)", err=True
            )
        raise click.exceptions.Exit(1)


SEARCH_OPTIONS = [
    click.option(
        "--beam",
        default=5,
        show_default=True,
        type=click.IntRange(1, 1000),
        help="Beam size (1 = greedy).",
    ),
    click.option(
        "--nbest",
        default=1,
        show_default=True,
        type=click.IntRange(1, 1000),
        help="Outputs per input (at most --beam).",
    ),
    click.option(
        "--alpha",
        type=FloatRange(min=0.0),
        default=None,
        help="GNMT length penalty ((5 + n) / 6) ** alpha; 0 = plain log-probability "
        "[default: the recipe's model.length_penalty].",
    ),
    click.option(
        "--max-length-ratio",
        "max_len_ratio",
        type=FloatRange(0.0, 1000.0, min_open=True),
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
        type=FLOAT,
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
        callback=resolve_checkpoint,
        help="A checkpoint (.pt) from EXP/checkpoints or the folder EXP (its best.pt, else "
        "its latest); "
        "repeat it to decode an ensemble "
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


def search_options(func):
    """--beam, --nbest, --alpha, --max-length-ratio, --alignment, --force, --r2l,
    --r2l-weight, --checkpoint, --in (and the old spelling --max-len-ratio)."""
    func = renamed("--max-len-ratio", "--max-length-ratio", "max_len_ratio", type=FLOAT)(func)
    for option in reversed(SEARCH_OPTIONS):
        func = option(func)
    return func


@click.command()
@click.argument("words", nargs=-1)
@search_options
def g2p(words, in_file, **search):
    """Convert words (arguments or the lines of --in FILE) to ARPAbet phonemes.

    Prints `word<TAB>phonemes` (with --nbest N: `word<TAB>rank<TAB>score<TAB>phonemes`;
    with --r2l the score is the reranking's interpolated one).

    \b
    Examples:
      aligner g2p --checkpoint exp/g2p aligner toolkit
      aligner g2p --checkpoint exp/g2p --in words.txt --beam 10 --nbest 3
    """
    run("g2p", words, in_file, **search)


@click.command()
@click.option("--text", default=None, help="A sentence to translate.")
@search_options
def translate(text, in_file, **search):
    """Translate --text or each line of --in FILE with an NMT checkpoint.

    Prints one translation a line (with --nbest N: `input<TAB>rank<TAB>score<TAB>output`).

    \b
    Examples:
      aligner translate --checkpoint exp/nmt --text "Where is the station?"
      aligner translate --checkpoint exp/nmt/checkpoints/best.pt --in data/test.jsonl
    """
    run("nmt", (text,) if text is not None else (), in_file, **search)
