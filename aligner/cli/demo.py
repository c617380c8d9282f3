"""`aligner demo`: corpus, training, synthesis, evolution and alignment quality in one go
(`aligner.pipeline.demo.run_demo`)."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.options import FloatRange


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
    default=18.0,
    show_default=True,
    type=FloatRange(0.0, 10_000.0, min_open=True),
    help="The TTS recipe's training budget, in minutes.",
)
@click.option(
    "--guide",
    type=click.Choice(["durations", "diagonal"]),
    default="durations",
    show_default=True,
    help="durations: train the alignment model first (--align-minutes) and guide the TTS "
    "attention with its durations; diagonal: the recipe's diagonal guide alone.",
)
@click.option(
    "--align-minutes",
    default=3.0,
    show_default=True,
    type=FloatRange(0.0, 10_000.0, min_open=True),
    help="The alignment model's training budget, in minutes (--guide durations).",
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
    help="Training recipe (default: the small forward-attention TTS recipe shipped with "
    "the package, recipes/tts/tacotron_forward_small_guided.yaml with --guide durations, "
    "recipes/tts/tacotron_forward_small.yaml with --guide diagonal).",
)
@click.option(
    "--vocoder",
    default="train",
    show_default=True,
    metavar="NAME",
    help="train: the small Vocos recipe on the corpus for --vocoder-minutes; or griffin-lim, "
    "hifigan:DIR, or a vocoder experiment folder or checkpoint.",
)
@click.option(
    "--vocoder-minutes",
    default=5.0,
    show_default=True,
    type=FloatRange(0.0, 10_000.0, min_open=True),
    help="The vocoder's training budget, in minutes (--vocoder train).",
)
def demo(
    out_dir: Path,
    minutes: float,
    guide: str,
    align_minutes: float,
    utterances: int,
    recipe: Path | None,
    vocoder: str,
    vocoder_minutes: float,
) -> None:
    """Prepare the eSpeak NG corpus, train the alignment model and write its durations,
    train the small TTS recipe guided by them, train a vocoder, synthesize a new sentence
    through it, and draw its alignment and the alignment's evolution during training; the
    alignment's boundary errors against eSpeak's timings close it. About 30 minutes on 2
    CPU cores. Re-running continues where it stopped.

    \b
    Examples:
      aligner demo                      # as `make demo` into demo/
      aligner demo --minutes 5 --align-minutes 1 --vocoder-minutes 1 --out quick/
      aligner demo --guide diagonal --vocoder griffin-lim   # as before the guide
    """
    from aligner.pipeline.demo import DemoError, DemoPlan, run_demo
    from aligner.train.run import tensorboard_command

    try:
        plan = DemoPlan(minutes, utterances, recipe, guide, align_minutes, vocoder, vocoder_minutes)
        run = run_demo(out_dir, plan, say=click.echo)
    except DemoError as err:
        raise click.ClickException(str(err)) from None
    exp = out_dir / "exp"
    if run.score:
        tiers = [
            f"{tier} {run.score[tier]['mean_ms']:.1f} ms mean, "
            f"{run.score[tier]['within_20ms']:.0f}% within 20 ms"
            for tier in ("words", "phones")
            if run.score.get(tier, {}).get("boundaries")
        ]
        click.echo(
            f"\nThe Tacotron's alignment ({run.checkpoint.name}) against eSpeak NG's timings, "
            f"validation split: {'; '.join(tiers)}"
        )
    click.echo(
        f"\nDone. Listen to {run.wav}; look at {run.alignment_png} and "
        f"{run.evolution_gif}.\nTensorBoard logs: {exp / 'tb'}\n"
        f"  open them with: {tensorboard_command(exp / 'tb', 'demo')}   "
        "(then browse http://localhost:6006)"
    )
