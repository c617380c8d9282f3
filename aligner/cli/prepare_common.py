"""What the `aligner prepare` commands share: their arguments and options, the progress bar,
and running one preparation with its report (one line per bad item, the summary)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from aligner.data.prepare.common import PrepareSummary
from aligner.data.report import BadItemReport, BadItemsError, NoItemsError

OUT = click.argument("out", type=click.Path(file_okay=False, path_type=Path))
FORCE = click.option("--force", is_flag=True, help="Overwrite existing manifests in OUT.")
SKIP_BAD = click.option(
    "--skip-bad", is_flag=True, help="Report bad items and keep the good ones (default: fail)."
)
SEED = click.option("--seed", default=0, show_default=True, help="Seed of the split (and text).")


UTTERANCES = click.option(
    "--utterances",
    default=1000,
    show_default=True,
    type=click.IntRange(1, 1_000_000),
    help="Number of sentences.",
)


class SeveralValues(click.Option):
    """An option that takes every value up to the next option: ``--voices V1 V2`` is
    ``--voices V1 --voices V2`` (both spellings work, and ``--voices "V1 V2"`` too)."""

    def add_to_parser(self, parser, ctx) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            option = parser._long_opt.get(name) or parser._short_opt.get(name)
            if option is None:
                continue
            take_one = option.process

            def take_all(value, state, take_one=take_one) -> None:
                take_one(value, state)
                while state.rargs and not state.rargs[0].startswith("-"):
                    take_one(state.rargs.pop(0), state)

            option.process = take_all


def _split_words(ctx, param, values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(word for value in values for word in value.split())


def voices_option(help: str):
    """``--voices V1 [V2 ...]`` of a synthesized corpus (also repeatable), with the
    synthesizer's own help. The voices end at the next option, so OUT goes before them."""
    return click.option(
        "--voices",
        cls=SeveralValues,
        multiple=True,
        metavar="VOICE [VOICE ...]",
        callback=_split_words,
        help=help,
    )


PARALLEL = click.option(
    "--parallel",
    nargs=2,
    metavar="SRC_VOICE TGT_VOICE",
    help="Speak every sentence with both voices (a VC pair: audio and target_audio).",
)


@contextlib.contextmanager
def progress_bar(total: int | None, unit: str) -> Iterator[Callable[[int], object]]:
    """The ``update(n)`` of a tqdm bar that appears at the first update, so a failure
    before any work (missing folder, existing output) prints only its error line."""
    from tqdm import tqdm

    bar = None

    def update(n: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit=unit, dynamic_ncols=True, leave=False)
        bar.update(n)

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()


def print_bad(report: BadItemReport, verb: str) -> None:
    for item in report.items:
        click.echo(f"{verb}: {item}", err=True)


def run_preparation(work: Callable[[], PrepareSummary]) -> None:
    """Run one preparation; user-fixable failures become one-line ClickExceptions."""
    from aligner.audio.festival import FestivalError
    from aligner.audio.synth import SynthError

    try:
        summary = work()
    except BadItemsError as err:
        print_bad(err.report, "bad item")
        raise click.ClickException(str(err)) from None
    except NoItemsError as err:
        print_bad(err.report, "skipped")
        raise click.ClickException(str(err)) from None
    except (FileExistsError, FileNotFoundError, ValueError, SynthError, FestivalError) as err:
        raise click.ClickException(str(err)) from None
    print_bad(summary.bad, "skipped")
    click.echo("\n".join(summary.lines()))
