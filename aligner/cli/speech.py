"""`aligner synthesize | convert | align | plot`: options in, one library call
(aligner.inference), a report out. A failure the user can fix ends with one line
(click.ClickException) and exit code 1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from aligner.cli.options import (
    MAX_PAUSE_SECONDS,
    batch_size_option,
    checkpoint_option,
    device_option,
    force_option,
    griffin_lim_option,
    max_length_ratio_option,
    parse_window,
    renamed,
)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's user-facing errors into one-line click errors."""
    from aligner.audio.io import AudioError
    from aligner.data.manifest import ManifestError
    from aligner.inference.common import InferenceError

    try:
        yield
    except (InferenceError, AudioError, ManifestError, FileExistsError) as err:
        raise click.ClickException(str(err)) from None


def report(run, what: str) -> None:
    """Warnings, then `what`; every bad item of a batch on its own line and exit 1."""
    for line in run.warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(what)
    bad = getattr(run, "bad", [])
    for line in bad:
        click.echo(f"Error: {line}", err=True)
    if bad:
        click.echo(f"Error: {len(bad)} bad input(s) skipped (listed above)", err=True)
        raise click.exceptions.Exit(1)


def read_text_file(path: Path) -> str:
    """The UTF-8 text of --in FILE; one line for a missing, binary or non-UTF-8 file."""
    if not path.is_file():
        raise click.ClickException(f"--in {path} does not exist")
    data = path.read_bytes()
    if b"\x00" in data:
        raise click.ClickException(f"--in {path} is a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise click.ClickException(
            f"--in {path}: line {line} is not UTF-8 (byte {data[err.start]:#x}); "
            "convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None


seed_option = click.option(
    "--seed",
    default=0,
    show_default=True,
    help="Seed (the prenet keeps dropout on, as Tacotron 2).",
)
save_mel_option = click.option(
    "--save-mel",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each predicted mel spectrogram as NAME.npy (log-mel, frames x mels; "
    "see docs/commands.md) into this folder, for a neural vocoder.",
)


# ---------------------------------------------------------------------- synthesize
@click.command()
@checkpoint_option
@click.option("--text", help="Text to say (long text is split into sentences).")
@click.option(
    "--in",
    "text_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the text from this UTF-8 file instead.",
)
@renamed("--text-file", "--in", "text_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output WAV file (sentences joined with --pause seconds of silence).",
)
@click.option(
    "--alignment",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Alignment heatmap PNG file (one panel per sentence).",
)
@save_mel_option
@max_length_ratio_option(default=10.0, per="mel frames per input token")
@click.option(
    "--window",
    callback=parse_window,
    help="Monotonic attention window BACK,FRONT around the last focus (e.g. 1,3).",
)
@batch_size_option(what="Sentences decoded at once.")
@click.option(
    "--pause",
    default=0.25,
    show_default=True,
    type=click.FloatRange(0.0, MAX_PAUSE_SECONDS),
    help=f"Seconds of silence between sentences (at most {MAX_PAUSE_SECONDS:g}).",
)
@griffin_lim_option
@device_option
@seed_option
@force_option
def synthesize(
    checkpoint: Path,
    text: str | None,
    text_file: Path | None,
    out: Path,
    alignment: Path | None,
    save_mel: Path | None,
    max_length_ratio: float,
    window: tuple[int, int] | None,
    batch_size: int,
    pause: float,
    griffin_lim_iters: int,
    device: str,
    seed: int,
    force: bool,
) -> None:
    """Text to speech with a TTS checkpoint (Griffin-Lim vocoder).

    Prints how the text was normalized and split into sentences.

    \b
    Examples:
      aligner synthesize --checkpoint demo/exp --text "Hello there." --out hello.wav
      aligner synthesize --checkpoint exp/tts/checkpoints/best.pt --in book.txt \\
          --out book.wav --save-mel mels/
    """
    from aligner.inference.synthesis import Decoding
    from aligner.inference.synthesis import synthesize as run

    if (text is None) == (text_file is None):
        raise click.ClickException("give the text with exactly one of --text or --in FILE")
    if text_file is not None:
        text = read_text_file(text_file)
    decoding = Decoding(batch_size, max_length_ratio, window, griffin_lim_iters, seed)
    with user_errors():
        result = run(
            checkpoint,
            text or "",
            out,
            alignment,
            decoding,
            pause,
            device,
            force,
            save_mel=save_mel,
        )
    for i, sentence in enumerate(result.names, 1):
        click.echo(f"sentence {i}: {sentence}")
    report(
        result,
        f"wrote {out} ({result.frames} frames, {len(result.names)} sentence(s), "
        f"{checkpoint} at step {result.step})",
    )


# ---------------------------------------------------------------------- convert
@click.command()
@checkpoint_option
@click.option(
    "--in",
    "src",
    required=True,
    type=click.Path(path_type=Path),
    help="Source audio: a file, a folder of audio files, or a manifest (.jsonl).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A WAV file for one input file; a folder for a folder or a manifest.",
)
@click.option(
    "--alignment",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Alignment heatmap PNG file (one input file only).",
)
@save_mel_option
@max_length_ratio_option(default=3.0, per="output frames per source frame")
@click.option("--window", callback=parse_window, help="Monotonic window BACK,FRONT (e.g. 1,3).")
@batch_size_option(what="Pieces of audio decoded at once.")
@griffin_lim_option
@device_option
@seed_option
@force_option
def convert(
    checkpoint: Path,
    src: Path,
    out: Path,
    alignment: Path | None,
    save_mel: Path | None,
    max_length_ratio: float,
    window: tuple[int, int] | None,
    batch_size: int,
    griffin_lim_iters: int,
    device: str,
    seed: int,
    force: bool,
) -> None:
    """Voice conversion of one file, a folder or a manifest with a VC checkpoint.

    A batch converts every readable input, names each bad one (also in OUT/summary.json)
    and then exits with status 1. Recordings longer than 20 s are converted in pieces cut
    at silences.

    \b
    Examples:
      aligner convert --checkpoint exp/vc --in src.wav --out converted.wav
      aligner convert --checkpoint exp/vc/checkpoints/best.pt --in data/test.jsonl --out conv/
    """
    from aligner.inference.conversion import convert as run
    from aligner.inference.synthesis import Decoding

    decoding = Decoding(batch_size, max_length_ratio, window, griffin_lim_iters, seed)
    with user_errors():
        result = run(checkpoint, src, out, alignment, decoding, device, force, save_mel=save_mel)
    report(
        result, f"wrote {len(result.outputs)} file(s) to {out} ({checkpoint} at step {result.step})"
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
    type=click.FloatRange(0.0, 1.0),
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
    type=click.FloatRange(0.0, 120.0),
    help="Pauses in the words/phones tiers are where the audio is this many dB "
    "below its loudest frame, within the frames of separators, punctuation and "
    "</s>; 0: do not look at the audio (punctuation is a pause, a word separator "
    "is not).",
)
@click.option(
    "--min-pause",
    default=0.08,
    show_default=True,
    type=click.FloatRange(0.0, 10.0),
    help="Seconds: shorter silences (a stop's closure) are no pause.",
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
    device: str,
    force: bool,
) -> None:
    """Alignments of a manifest: durations, TextGrids, heatmaps and a summary.

    With a TTS or VC checkpoint (teacher-forced) or an alignment model's: per utterance
    a durations JSON, a Praat TextGrid (words, phones, tokens), durations/ID.npy, the
    weights and a heatmap; summary.json flags suspect alignments (skipped or repeated
    tokens, mean focus rate below --min-focus). Items that cannot be aligned are named
    and counted; the others are aligned, then the command exits with status 1.

    \b
    Examples:
      aligner align --checkpoint exp/align --in data/test.jsonl --out align/
      aligner score-alignment --reference data/test.jsonl --predicted align/
    """
    from aligner.audio.trim import PauseRule
    from aligner.inference.align import align_manifest

    if manifest is None:
        raise click.UsageError("Missing option '--in' (the manifest to align).")
    if out.exists() and not out.is_dir():
        raise click.ClickException(f"--out {out} is a file; give a folder")
    if out.exists() and any(out.iterdir()) and not force:
        raise click.ClickException(f"{out} is not empty; pass --force to overwrite its files")
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
        )
    click.echo(summary.table())
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
    from aligner.attention.plot import plot_npy

    try:
        plot_npy(alignment, out, title, force, durations=durations)
    except (ValueError, FileExistsError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {out}")
