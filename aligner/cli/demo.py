"""`aligner demo`: corpus, training, synthesis, evolution and alignment quality in one go
(`aligner.pipeline.demo.run_demo`)."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.options import vocoder_option


@click.command()
@click.option(
    "--out",
    "out_dir",
    default="demo",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the corpus (data/), the run (exp/) and the outputs.",
)
@click.option(
    "--minutes",
    default=20.0,
    show_default=True,
    type=click.FloatRange(0.0, 10_000.0, min_open=True),
    help="Training time budget, in minutes.",
)
@click.option(
    "--utterances",
    default=1000,
    show_default=True,
    type=click.IntRange(10, 100_000),
    help="Size of the eSpeak NG corpus.",
)
@click.option(
    "--recipe",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Training recipe (default: the small dynamic-convolution-attention TTS recipe, "
    "recipes/tts/tacotron_dca_small.yaml, shipped with the package).",
)
@vocoder_option
def demo(out_dir: Path, minutes: float, utterances: int, recipe: Path | None, vocoder: str) -> None:
    """Prepare the eSpeak NG corpus, train the small TTS recipe for --minutes, synthesize a
    new sentence, and draw its alignment and the alignment's evolution during training.
    Re-running continues where it stopped.

    \b
    Examples:
      aligner demo                      # as `make demo`: 20 minutes into demo/
      aligner demo --minutes 5 --out quick/
      aligner demo --vocoder exp/vocoder      # a vocoder trained on the same features
    """
    from aligner.pipeline.demo import DemoError, run_demo
    from aligner.train.run import tensorboard_command

    try:
        run = run_demo(out_dir, minutes, utterances, recipe, say=click.echo, vocoder=vocoder)
    except DemoError as err:
        raise click.ClickException(str(err)) from None
    exp = out_dir / "exp"
    click.echo(
        f"\nDone. Listen to {run.wav}; look at {run.alignment_png} and "
        f"{run.evolution_gif}.\nTensorBoard logs: {exp / 'tb'}\n"
        f"  open them with: {tensorboard_command(exp / 'tb', 'demo')}   "
        "(then browse http://localhost:6006)"
    )
