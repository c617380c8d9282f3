"""`aligner prepare espeak` and `aligner prepare festival`: corpora that a speech
synthesizer speaks, with its exact timings (argument handling only; the work is in
aligner.data.prepare)."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.prepare_common import (
    FORCE,
    OUT,
    PARALLEL,
    SEED,
    UTTERANCES,
    progress_bar,
    run_preparation,
    voices_option,
)
from aligner.data.prepare.common import PrepareSummary


def workers_option(help_text: str):
    """``--workers``: processes that synthesize at once (at least one)."""
    return click.option(
        "--workers", type=click.IntRange(min=1), default=2, show_default=True, help=help_text
    )


@click.command()
@OUT
@UTTERANCES
@voices_option(
    "eSpeak NG voice NAME[,rate=..,pitch=..,range=..,gap=..], e.g. 'en-us+m3,rate=150'; "
    "several for several speakers (`--voices V1 V2`; sentences cycle through them). "
    "Default en-us."
)
@PARALLEL
@workers_option("Synthesis processes.")
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
        with progress_bar(files, "wav") as progress:
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

    run_preparation(work)


@click.command()
@OUT
@UTTERANCES
@voices_option(
    "Festival voice name, e.g. kal_diphone; several for several speakers (`--voices V1 V2`; "
    "sentences cycle through them). Default: cmu_us_slt_arctic_hts, kal_diphone, ked_diphone."
)
@PARALLEL
@click.option(
    "--text",
    "text_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="UTF-8 file of sentences, one a line (default: plain sentences of Debian's English "
    "fortunes; a voice of another language needs it).",
)
@workers_option("Festival processes at once.")
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
        with progress_bar(total, "utt") as progress:
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

    run_preparation(work)
