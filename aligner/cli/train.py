"""`aligner train` and `aligner evolution`: argument handling only; the work is in aligner.train.

Multi-process: ``torchrun --nproc-per-node N --no-python aligner train RECIPE ...``.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("recipe", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--data",
    "data_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Data folder (the manifests written by `aligner prepare`).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Experiment folder: checkpoints/, tb/ (TensorBoard) and config.yaml.",
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a recipe value, e.g. --set train.lr=5e-4 (repeatable).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue from the latest checkpoint in --out (give that run's recipe and --set values again, or its OUT/config.yaml as RECIPE).",
)
@click.option(
    "--restart",
    is_flag=True,
    help="DELETE the checkpoints and TensorBoard logs in --out and start over.",
)
@click.option("--force", is_flag=True, hidden=True, help="Old name of --restart.")
def train(
    recipe: Path,
    data_dir: Path,
    out_dir: Path,
    overrides: tuple[str, ...],
    resume: bool,
    restart: bool,
    force: bool,
) -> None:
    """Train a model from RECIPE.yaml on --data, writing checkpoints and logs to --out.

    Ctrl-C or SIGTERM saves a checkpoint first (a second Ctrl-C stops at once); continue
    with --resume. One run at a time per --out.

    \b
    Examples:
      aligner train recipes/tts/tacotron_dca_small.yaml --data data/espeak --out exp/dca
      aligner train recipes/tts/tacotron_dca_small.yaml --data data/espeak --out exp/dca \\
          --resume --set train.max_minutes=30
    """
    import signal
    import sys

    from aligner.train.run import RunError, run

    if force:
        click.echo(
            "note: `train --force` is now `train --restart` (it deletes the run in "
            "--out); --force will stop working in a later version",
            err=True,
        )
    try:
        result = run(recipe, data_dir, out_dir, overrides, resume, restart or force, click.echo)
    except RunError as err:
        exc = click.ClickException(str(err))
        exc.exit_code = err.exit_code
        raise exc from None
    if result.signal:  # interrupted: the conventional status of a process killed by it
        sys.exit(128 + signal.Signals[result.signal].value)


@click.command()
@click.argument("exp", type=click.Path(path_type=Path))
@click.option(
    "--tag",
    default=None,
    help="Image tag of the item to follow (default: the first tag containing 'align').",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="GIF to write (default EXP/evolution.gif); the PNG strip goes next to it.",
)
@click.option(
    "--frame-ms",
    default=400,
    show_default=True,
    type=click.IntRange(1, 60_000),
    help="Duration of each GIF frame, in milliseconds.",
)
@click.option(
    "--strip-frames",
    default=8,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Frames (training steps) in the PNG strip.",
)
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
def evolution(
    exp: Path, tag: str | None, out_path: Path | None, frame_ms: int, strip_frames: int, force: bool
) -> None:
    """Stitch the logged alignments of one item over training into a GIF and a PNG strip.

    \b
    Example:
      aligner evolution exp/dca --strip-frames 6
    """
    from aligner.train.evolution import EvolutionError, evolution_of

    try:
        tag, steps, gif, png = evolution_of(exp, tag, out_path, frame_ms, strip_frames, force)
    except EvolutionError as err:
        raise click.ClickException(str(err)) from None
    click.echo(f"{tag}: {len(steps)} frames (steps {steps[0]}..{steps[-1]}) -> {gif}, {png}")
