"""The frame-wise VC baseline (`vc_baseline_model.py` beside it): a regression from
DTW-paired source frames to target frames, then a vocoder (`--vocoder`, as `aligner
convert`'s: Griffin-Lim by default); it keeps the source's timing.

    python scripts/vc_baseline.py train --data data --out exp/baseline/model.pt [--max-minutes 10]
    python scripts/vc_baseline.py convert --model exp/baseline/model.pt --in data/test.jsonl \
        --out exp/baseline/converted
    aligner score --task vc --hyp exp/baseline/converted/manifest.jsonl
"""

from __future__ import annotations

from pathlib import Path

import click


def _fail(err: Exception) -> click.ClickException:
    return click.ClickException(str(err).splitlines()[0])


@click.group()
def main() -> None:
    """Train the frame-wise baseline, or convert with it."""


@main.command()
@click.option(
    "--data",
    type=click.Path(path_type=Path),
    required=True,
    help="A parallel corpus folder (train.jsonl, valid.jsonl with target_audio).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The model file to write.",
)
@click.option("--epochs", default=30, show_default=True)
@click.option("--max-minutes", default=10.0, show_default=True, help="Training time budget.")
@click.option("--context", default=4, show_default=True, help="Source frames each side.")
@click.option("--seed", default=0, show_default=True)
@click.option("--force", is_flag=True, help="Overwrite --out.")
def train(
    data: Path, out: Path, epochs: int, max_minutes: float, context: int, seed: int, force: bool
) -> None:
    """Fit the regression on the corpus's training pairs (DTW-aligned log-mels)."""
    from vc_baseline_model import BaselineConfig, train_baseline

    from aligner.inference.common import InferenceError

    cfg = BaselineConfig(context=context, epochs=epochs, max_minutes=max_minutes, seed=seed)
    try:
        summary = train_baseline(data, out, cfg=cfg, force=force, log=click.echo)
    except (InferenceError, ValueError) as err:
        raise _fail(err) from None
    click.echo(
        f"wrote {out}: {summary['pairs']} frame pairs, {summary['epochs']} epochs in "
        f"{summary['minutes']} min, valid L1 {summary['valid_l1']}"
    )


def _writes_conversions(what: str):
    """The options of the commands that write OUT/ID.wav and OUT/manifest.jsonl from a
    manifest (`what`: which of its audio they read)."""

    def wrap(func):
        for option in reversed(
            [
                click.option(
                    "--model",
                    type=click.Path(dir_okay=False, path_type=Path),
                    required=True,
                    help="A baseline model file (its log-mel settings).",
                ),
                click.option(
                    "--in",
                    "manifest",
                    type=click.Path(dir_okay=False, path_type=Path),
                    required=True,
                    help=f"A manifest (e.g. data/test.jsonl): {what}.",
                ),
                click.option(
                    "--out",
                    type=click.Path(file_okay=False, path_type=Path),
                    required=True,
                    help="Folder for ID.wav and manifest.jsonl.",
                ),
                click.option(
                    "--vocoder",
                    default="griffin-lim",
                    show_default=True,
                    help="griffin-lim, a vocoder experiment folder or checkpoint, or "
                    "hifigan:DIR (as aligner convert --vocoder).",
                ),
                click.option("--griffin-lim-iters", default=60, show_default=True),
                click.option(
                    "--force", is_flag=True, help="Overwrite an existing --out/manifest.jsonl."
                ),
            ]
        ):
            func = option(func)
        return main.command()(func)

    return wrap


def _write(
    make, model: Path, manifest: Path, out: Path, vocoder: str, iters: int, force: bool
) -> None:
    from aligner.inference.common import InferenceError

    try:
        path = make(model, manifest, out, iters, force, vocoder)
    except (InferenceError, ValueError) as err:
        raise _fail(err) from None
    click.echo(f"wrote {path}")


@_writes_conversions("its audio is converted")
def convert(
    model: Path, manifest: Path, out: Path, vocoder: str, griffin_lim_iters: int, force: bool
) -> None:
    """Convert every item's audio; writes OUT/manifest.jsonl for `aligner score --task vc`."""
    from vc_baseline_model import convert_baseline

    _write(convert_baseline, model, manifest, out, vocoder, griffin_lim_iters, force)


@_writes_conversions("its target_audio is vocoded")
def vocode(
    model: Path, manifest: Path, out: Path, vocoder: str, griffin_lim_iters: int, force: bool
) -> None:
    """The vocoder's floor: the target's own log-mel through the vocoder, scored like a
    conversion (what a perfect mel conversion would get through this vocoder)."""
    from vc_baseline_model import vocode_targets

    _write(vocode_targets, model, manifest, out, vocoder, griffin_lim_iters, force)


if __name__ == "__main__":
    main()
