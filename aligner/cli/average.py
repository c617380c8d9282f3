"""`aligner average`: the mean of a run's last checkpoints (`aligner.checkpoint.write_average`)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The averaged checkpoint to write (a .pt file).",
)
@click.option(
    "--last",
    default=3,
    show_default=True,
    type=click.IntRange(min=1),
    help="Checkpoints taken from each folder given (its newest ckpt-STEP.pt).",
)
@click.option("--force", is_flag=True, help="Replace an existing --out.")
def average(sources: tuple[Path, ...], out: Path, last: int, force: bool) -> None:
    """Average the weights of SOURCES into one checkpoint for decoding and evaluation.

    Each SOURCE is a checkpoint file or an experiment folder (or its checkpoints/), which
    contributes its --last newest ckpt-STEP.pt. All must come from one training run. The
    result has no optimizer state: it is for inference, not --resume.

    \b
    Examples:
      aligner average exp/g2p --last 3 --out exp/g2p/avg.pt
      aligner average exp/g2p/checkpoints/ckpt-00007000.pt exp/g2p/checkpoints/ckpt-00008000.pt --out avg.pt
    """
    from aligner.checkpoint import CheckpointError, write_average

    try:
        state = write_average(list(sources), out, last, force)
    except CheckpointError as err:
        raise click.ClickException(str(err)) from None
    steps = ", ".join(map(str, state["averaged_from"]))
    n = len(state["averaged_from"])
    click.echo(f"wrote {out}: mean of {n} checkpoints (steps {steps})")
    folders = [s for s in sources if s.is_dir()]
    if folders and n < last * len(folders):
        click.echo(f"note: --last {last} asked for more checkpoints than the run keeps", err=True)
