"""`aligner align | plot`: alignments of a manifest to files, and a saved alignment drawn;
options in, one library call (aligner.inference.align, aligner.alignment.plotting), a
report out."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.errors import user_errors
from aligner.cli.options import (
    FloatRange,
    batch_size_option,
    checkpoint_option,
    device_option,
    force_option,
    renamed,
)


# ---------------------------------------------------------------------- align
@click.command()
@checkpoint_option
@click.option(
    "--in",
    "manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A JSON Lines manifest (id, audio, text; VC: target_audio).  [required]",
)
@renamed("--manifest", "--in", "manifest", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (per-utterance files and summary.json).",
)
@batch_size_option(what="Utterances aligned at once.")
@click.option(
    "--min-focus",
    default=0.4,
    show_default=True,
    type=FloatRange(0.0, 1.0),
    help="Flag alignments whose mean focus rate is below this.",
)
@click.option("--no-png", is_flag=True, help="Skip the heatmap PNGs (faster).")
@click.option(
    "--durations",
    type=click.Choice(["search", "argmax"]),
    default="search",
    show_default=True,
    help="search: the best monotonic path through the attention spread to frames "
    "(frame resolution); argmax: the most attended token of each decoder step "
    "(multiples of r frames).",
)
@click.option(
    "--silence-db",
    default=40.0,
    show_default=True,
    type=FloatRange(0.0, 120.0),
    help="Pauses in the words/phones tiers are where the audio is this many dB "
    "below its loudest frame, within the frames of separators, punctuation and "
    "</s>; 0: do not look at the audio (punctuation is a pause, a word separator "
    "is not).",
)
@click.option(
    "--min-pause",
    default=0.08,
    show_default=True,
    type=FloatRange(0.0, 10.0),
    help="Seconds: shorter silences (a stop's closure) are no pause.",
)
@click.option(
    "--audio-key",
    default="audio",
    show_default=True,
    help="The manifest field of the recording to align: audio, or target_audio (the "
    "target voice of a parallel VC corpus, with an alignment model).",
)
@click.option(
    "--long-form",
    is_flag=True,
    help="Each item is a whole recording (minutes to an hour) with its whole text: "
    "windowed search, one TextGrid per recording, mismatches of text and audio reported "
    "(alignment models only; implied by --audio).",
)
@click.option(
    "--audio",
    type=click.Path(dir_okay=False, path_type=Path),
    help="One long recording to align with --text (instead of --in).",
)
@click.option(
    "--text",
    "text_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The UTF-8 text of --audio, whole.",
)
@device_option
@force_option
def align(
    checkpoint: Path,
    manifest: Path,
    out: Path,
    batch_size: int,
    min_focus: float,
    no_png: bool,
    durations: str,
    silence_db: float,
    min_pause: float,
    audio_key: str,
    long_form: bool,
    audio: Path | None,
    text_file: Path | None,
    device: str,
    force: bool,
) -> None:
    """Alignments of a manifest: durations, TextGrids, heatmaps and a summary.

    With a TTS or VC checkpoint (teacher-forced) or an alignment model's: per utterance
    a durations JSON, a Praat TextGrid (words, phones, tokens), durations/ID.npy, the
    weights and a heatmap; summary.json flags suspect alignments (skipped or repeated
    tokens, mean focus rate below --min-focus; VC's skipped source frames are counted,
    not flagged). Items that cannot be aligned are named
    and counted; the others are aligned, then the command exits with status 1.

    \b
    Examples:
      aligner align --checkpoint exp/align --in data/test.jsonl --out align/
      aligner align --checkpoint exp/align --audio chapter.wav --text chapter.txt --out ali/
      aligner score-alignment --reference data/test.jsonl --predicted align/
    """
    from aligner.audio.trim import PauseRule
    from aligner.inference.align import align_manifest

    if long_form or audio is not None or text_file is not None:
        from aligner.cli.align_long import align_long_cli

        align_long_cli(checkpoint, manifest, audio, text_file, out, device, force,
                       PauseRule(silence_db, min_pause))  # fmt: skip
        return
    if manifest is None:
        raise click.UsageError("Missing option '--in' (the manifest to align).")
    with user_errors():
        summary = align_manifest(
            checkpoint,
            manifest,
            out,
            batch_size,
            min_focus,
            not no_png,
            device,
            force,
            durations=durations,
            pauses=PauseRule(silence_db, min_pause),
            audio_key=audio_key,
        )
    click.echo(summary.table())
    if summary.guessed:
        click.echo(summary.guessed_note(), err=True)
    click.echo(f"wrote {out}/summary.json and per-utterance files")
    for bad in summary.bad:
        click.echo(f"Error: {bad['id']}: {bad['reason']}", err=True)
    if summary.bad:
        click.echo(
            f"Error: {len(summary.bad)} item(s) not aligned (listed above and in "
            f"{out}/summary.json)",
            err=True,
        )
        raise click.exceptions.Exit(1)


# ---------------------------------------------------------------------- plot
@click.command()
@click.argument("alignment", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Output PNG file."
)
@click.option(
    "--durations",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Tokens, r and seconds from an `aligner align` .durations.json [default: "
    "ID.durations.json beside ID.npy].",
)
@click.option("--title", default=None, help="Figure title [default: the sentence or the id].")
@force_option
def plot(
    alignment: Path, out: Path, durations: Path | None, title: str | None, force: bool
) -> None:
    """Heatmap PNG of a saved alignment (.npy or .durations.json).

    The .npy holds (T_dec, T_enc) or (1, T_dec, T_enc) weights; a .durations.json from
    `aligner align` is drawn as its hard alignment.

    \b
    Examples:
      aligner plot align/u0.npy --out u0.png      # labels from align/u0.durations.json
      aligner plot align/u0.durations.json --out u0_hard.png
    """
    from aligner.alignment.plotting import plot_file

    try:
        plot_file(alignment, out, title, force, durations=durations)
    except (ValueError, FileExistsError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {out}")
