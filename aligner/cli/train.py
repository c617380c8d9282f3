"""`aligner train` and `aligner evolution`: argument handling only; the work is in aligner.train.

Multi-process: ``torchrun --nproc-per-node N --no-python aligner train RECIPE ...``.
"""

from __future__ import annotations

import shutil
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
@click.option("--resume", is_flag=True, help="Continue from the latest checkpoint in --out.")
@click.option(
    "--force", is_flag=True, help="Delete the checkpoints and logs in --out and start over."
)
def train(
    recipe: Path,
    data_dir: Path,
    out_dir: Path,
    overrides: tuple[str, ...],
    resume: bool,
    force: bool,
) -> None:
    """Train a model from RECIPE.yaml on --data, writing checkpoints and logs to --out."""
    from aligner.config import ConfigError, load_config, save_config
    from aligner.tasks import UnknownTaskError, build_task
    from aligner.train import distributed as ddp
    from aligner.train.checkpoint import CheckpointError, CheckpointManager
    from aligner.train.trainer import Trainer, TrainingError, seed_everything

    try:
        cfg = load_config(recipe, overrides)
    except ConfigError as err:
        raise click.ClickException(str(err)) from None
    if resume and force:
        raise click.ClickException("give either --resume or --force, not both")
    manager = CheckpointManager(out_dir / "checkpoints", cfg.train.keep_last)
    has_ckpts = bool(manager.checkpoints()) or manager.best_path.exists()
    if has_ckpts and not (resume or force):
        raise click.ClickException(
            f"{out_dir} already holds checkpoints; pass --resume to continue or --force to start over"
        )
    info = ddp.init_distributed()
    try:
        if force and info.is_main:
            for sub in ("checkpoints", "tb"):
                shutil.rmtree(out_dir / sub, ignore_errors=True)
        ddp.barrier(info)
        seed_everything(cfg.train.seed)
        try:
            task = build_task(cfg, data_dir)
            trainer = Trainer(task, cfg.train, out_dir, config=cfg.to_dict(), info=info)
        except (UnknownTaskError, TrainingError, ValueError, OSError) as err:  # config, data
            raise click.ClickException(str(err)) from None
        if info.is_main:
            out_dir.mkdir(parents=True, exist_ok=True)
            save_config(cfg, out_dir / "config.yaml")
        if resume:
            try:
                path = trainer.resume()
            except CheckpointError as err:
                raise click.ClickException(str(err)) from None
            if info.is_main:
                click.echo(
                    f"resumed from {path} at step {trainer.step}"
                    if path
                    else f"no checkpoint in {out_dir}; starting from step 0"
                )
        try:
            result = trainer.fit()
        except TrainingError as err:
            raise click.ClickException(str(err)) from None
        if info.is_main:
            click.echo(
                f"stopped at step {result.step} ({result.reason}); best validation loss "
                f"{result.best_loss:.4g}; checkpoint {result.checkpoint}; "
                f"TensorBoard: tensorboard --logdir {out_dir / 'tb'}"
            )
    finally:
        ddp.cleanup()


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
@click.option("--frame-ms", default=400, show_default=True, help="Duration of each GIF frame.")
@click.option("--strip-frames", default=8, show_default=True, help="Frames in the PNG strip.")
@click.option("--force", is_flag=True, help="Overwrite existing output files.")
def evolution(
    exp: Path, tag: str | None, out_path: Path | None, frame_ms: int, strip_frames: int, force: bool
) -> None:
    """Stitch the logged alignments of one item over training into a GIF and a PNG strip."""
    from aligner.train.evolution import EvolutionError, image_tags, read_images, write_evolution

    log_dir = exp / "tb" if (exp / "tb").is_dir() else exp
    gif = out_path or exp / "evolution.gif"
    png = gif.with_suffix(".png")
    try:
        if tag is None:
            tags = image_tags(log_dir)
            aligned = [t for t in tags if "align" in t.lower()]
            if not aligned:
                raise EvolutionError(
                    f"no alignment images in {log_dir}; logged image tags: {', '.join(tags) or 'none'}"
                )
            tag = aligned[0]
        frames = read_images(log_dir, tag)
    except EvolutionError as err:
        raise click.ClickException(str(err)) from None
    for path in (gif, png):
        if path.exists() and not force:
            raise click.ClickException(f"{path} exists; pass --force to overwrite it")
    gif.parent.mkdir(parents=True, exist_ok=True)
    write_evolution(frames, gif, png, frame_ms=frame_ms, strip_frames=strip_frames)
    steps = [s for s, _ in frames]
    click.echo(f"{tag}: {len(frames)} frames (steps {steps[0]}..{steps[-1]}) -> {gif}, {png}")
