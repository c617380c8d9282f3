"""`aligner segment`: long recordings and their alignments -> an utterance corpus; options
in, one library call (aligner.data.segment), a report out."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.errors import user_errors
from aligner.cli.options import FLOAT, force_option

_FILE = click.Path(dir_okay=False, path_type=Path)


@click.command()
@click.option("--in", "manifest", type=_FILE, help="A manifest of long recordings (id, audio).")
@click.option(
    "--alignments",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder aligner align --long-form wrote for --in (ID.durations.json).",
)
@click.option("--audio", type=_FILE, help="One long recording (instead of --in).")
@click.option("--alignment", type=_FILE, help="Its ID.durations.json (with --audio).")
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The corpus folder: wavs/, train/valid/test.jsonl, summary.json.",
)
@click.option(
    "--min-seconds", default=1.0, show_default=True, type=FLOAT, help="Shortest utterance."
)
@click.option(
    "--max-seconds", default=15.0, show_default=True, type=FLOAT, help="Longest utterance."
)
@click.option(
    "--min-pause",
    default=0.2,
    show_default=True,
    type=FLOAT,
    help="Seconds between two words where an utterance may be cut.",
)
@click.option(
    "--pad", default=0.15, show_default=True, type=FLOAT, help="Most silence kept at each edge."
)
@click.option("--speaker", help="The speaker of every utterance (default: the recording's name).")
@click.option("--seed", default=0, show_default=True, help="Seed of the train/valid/test split.")
@force_option
def segment(
    manifest: Path | None,
    alignments: Path | None,
    audio: Path | None,
    alignment: Path | None,
    out: Path,
    min_seconds: float,
    max_seconds: float,
    min_pause: float,
    pad: float,
    speaker: str | None,
    seed: int,
    force: bool,
) -> None:
    """Cut long recordings into an utterance corpus at the pauses of their alignments.

    Each utterance lies between --min-seconds and --max-seconds, is cut in a pause, and
    holds no span the alignment reported as a mismatch (text not in the audio, audio not
    in the text, a word unlike its audio or one the model cannot read); what is left out
    is listed with its span. The corpus is what `aligner train` reads; a recording that
    cannot be cut is named and the rest are cut (exit 1).

    \b
    Examples:
      aligner align --checkpoint exp/align --audio chapter.wav --text chapter.txt --out ali/
      aligner segment --audio chapter.wav --alignment ali/chapter.durations.json --out corpus/
      aligner segment --in long.jsonl --alignments ali/ --out corpus/ --max-seconds 10
    """
    from aligner.data.segment import SegmentRules, segment_recordings
    from aligner.inference.long_files import recordings_to_cut

    with user_errors():
        try:
            bad: list = []  # BadLine: what could not be paired with a record
            pairs = recordings_to_cut(manifest, alignments, audio, alignment, bad)
            rules = SegmentRules(min_seconds, max_seconds, min_pause, pad)
            summary = segment_recordings(pairs, out, rules, speaker, seed, force, bad)
        except ValueError as err:  # also a record that is not JSON
            raise click.ClickException(str(err).splitlines()[0]) from None
    for line in summary.lines():
        click.echo(line)
    for item in summary.bad.items:  # each named with its line or recording: fix and rerun
        click.echo(f"Error: {item}", err=True)
    if summary.bad:
        raise click.exceptions.Exit(1)
