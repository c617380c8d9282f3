"""`aligner synthesize | convert | align | plot`: options in, one library call
(aligner.inference), a report out. A failure the user can fix ends with one line
(click.ClickException) and exit code 1."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click


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


def parse_window(ctx: click.Context, param: click.Parameter, value: str | None):
    """``"back,front"`` -> (back, front) ints >= 0."""
    if value is None:
        return None
    try:
        back, front = (int(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(
            f"expected two integers BACK,FRONT (e.g. 1,3), got {value!r}"
        ) from None
    if back < 0 or front < 0:
        raise click.BadParameter(f"both must be >= 0, got {value!r}")
    return back, front


def report(run, what: str) -> None:
    for line in run.warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(what)


checkpoint_option = click.option(
    "--checkpoint",
    required=True,
    type=click.Path(path_type=Path),
    help="A .pt file from EXP/checkpoints (best.pt or ckpt-STEP.pt).",
)
force_option = click.option("--force", is_flag=True, help="Overwrite existing outputs.")
seed_option = click.option(
    "--seed",
    default=0,
    show_default=True,
    help="Seed (the prenet keeps dropout on, as Tacotron 2).",
)


# ---------------------------------------------------------------------- synthesize
@click.command()
@checkpoint_option
@click.option("--text", help="Text to say (long text is split into sentences).")
@click.option("--text-file", type=click.Path(path_type=Path), help="Read the text from a file.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Output WAV (sentences joined with --pause seconds of silence).")  # fmt: skip
@click.option("--alignment", type=click.Path(dir_okay=False, path_type=Path),
              help="Heatmap PNG of the alignment (sentences one after another).")  # fmt: skip
@click.option(
    "--max-length-ratio",
    default=10.0,
    show_default=True,
    help="Stop a sentence after this many mel frames per input token (reported when hit).",
)
@click.option(
    "--window", callback=parse_window, help="Monotonic attention window BACK,FRONT (e.g. 1,3)."
)
@click.option("--batch-size", default=8, show_default=True, help="Sentences decoded at once.")
@click.option("--pause", default=0.25, show_default=True, help="Seconds between sentences.")
@click.option("--griffin-lim-iters", default=60, show_default=True)
@click.option("--device", default="cpu", show_default=True)
@seed_option
@force_option
def synthesize(
    checkpoint: Path,
    text: str | None,
    text_file: Path | None,
    out: Path,
    alignment: Path | None,
    max_length_ratio: float,
    window: tuple[int, int] | None,
    batch_size: int,
    pause: float,
    griffin_lim_iters: int,
    device: str,
    seed: int,
    force: bool,
) -> None:
    """Text to speech with a TTS checkpoint (Griffin-Lim vocoder)."""
    from aligner.inference.synthesis import Decoding
    from aligner.inference.synthesis import synthesize as run

    if (text is None) == (text_file is None):
        raise click.ClickException("give the text with exactly one of --text or --text-file")
    if text_file is not None:
        if not text_file.is_file():
            raise click.ClickException(f"--text-file {text_file} does not exist")
        text = text_file.read_text(encoding="utf-8")
    decoding = Decoding(batch_size, max_length_ratio, window, griffin_lim_iters, seed)
    with user_errors():
        result = run(checkpoint, text or "", out, alignment, decoding, pause, device, force)
    report(result, f"wrote {out} ({result.frames} frames, {len(result.names)} sentence(s), "
           f"{checkpoint} at step {result.step})")  # fmt: skip


# ---------------------------------------------------------------------- convert
@click.command()
@checkpoint_option
@click.option("--in", "src", required=True, type=click.Path(path_type=Path),
              help="Source audio: a file, a folder of audio files, or a manifest (.jsonl).")  # fmt: skip
@click.option("--out", required=True, type=click.Path(path_type=Path),
              help="OUT.wav for one file, a folder for several.")  # fmt: skip
@click.option("--alignment", type=click.Path(dir_okay=False, path_type=Path),
              help="Heatmap PNG (one input file only).")  # fmt: skip
@click.option("--max-length-ratio", default=3.0, show_default=True,
              help="Stop after this many output frames per source frame (reported when hit).")  # fmt: skip
@click.option("--window", callback=parse_window, help="Monotonic window BACK,FRONT.")
@click.option("--batch-size", default=8, show_default=True)
@click.option("--griffin-lim-iters", default=60, show_default=True)
@click.option("--device", default="cpu", show_default=True)
@seed_option
@force_option
def convert(
    checkpoint: Path,
    src: Path,
    out: Path,
    alignment: Path | None,
    max_length_ratio: float,
    window: tuple[int, int] | None,
    batch_size: int,
    griffin_lim_iters: int,
    device: str,
    seed: int,
    force: bool,
) -> None:
    """Voice conversion of one file, a folder or a manifest with a VC checkpoint."""
    from aligner.inference.synthesis import Decoding
    from aligner.inference.synthesis import convert as run

    decoding = Decoding(batch_size, max_length_ratio, window, griffin_lim_iters, seed)
    with user_errors():
        result = run(checkpoint, src, out, alignment, decoding, device, force)
    report(
        result, f"wrote {len(result.outputs)} file(s) to {out} ({checkpoint} at step {result.step})"
    )


# ---------------------------------------------------------------------- align
@click.command()
@checkpoint_option
@click.option("--manifest", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--batch-size", default=8, show_default=True)
@click.option("--min-focus", default=0.4, show_default=True,
              help="Flag alignments whose mean focus rate is below this.")  # fmt: skip
@click.option("--no-png", is_flag=True, help="Skip the heatmap PNGs (faster).")
@click.option("--durations", type=click.Choice(["search", "argmax"]), default="search",
              show_default=True,
              help="search: the best monotonic path through the attention spread to frames "
              "(frame resolution); argmax: the most attended token of each decoder step "
              "(multiples of r frames).")  # fmt: skip
@click.option("--device", default="cpu", show_default=True)
@force_option
def align(
    checkpoint: Path,
    manifest: Path,
    out: Path,
    batch_size: int,
    min_focus: float,
    no_png: bool,
    durations: str,
    device: str,
    force: bool,
) -> None:
    """Teacher-forced alignments of a manifest's audio + text (TTS) or audio pairs (VC):
    durations JSON, Praat TextGrid, heatmap and metrics per utterance, and a summary
    (summary.json) flagging suspect alignments: skipped or repeated tokens, or a mean
    focus rate below --min-focus."""
    from aligner.inference.align import align_manifest

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
        )
    click.echo(summary.table())
    click.echo(f"wrote {out}/summary.json and per-utterance files")


# ---------------------------------------------------------------------- plot
@click.command()
@click.argument("alignment", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--title", default=None)
@force_option
def plot(alignment: Path, out: Path, title: str | None, force: bool) -> None:
    """Heatmap PNG of an alignment saved as .npy ((T_dec, T_enc), or (1, T_dec, T_enc))."""
    from aligner.attention.plot import plot_npy

    try:
        plot_npy(alignment, out, title, force)
    except (ValueError, FileExistsError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"wrote {out}")
