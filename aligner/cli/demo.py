"""`aligner demo`: corpus, training, synthesis, evolution and alignment quality in one go,
each step a child `aligner` command."""

from __future__ import annotations

import sys
from pathlib import Path

import click


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
    help="Training recipe (default: the small dynamic-convolution-attention TTS recipe).",
)
def demo(out_dir: Path, minutes: float, utterances: int, recipe: Path | None) -> None:
    """Prepare the eSpeak NG corpus, train the small TTS recipe for --minutes, synthesize a
    new sentence, and draw its alignment and the alignment's evolution during training.
    Re-running continues where it stopped.

    \b
    Examples:
      aligner demo                      # as `make demo`: 20 minutes into demo/
      aligner demo --minutes 5 --out quick/
    """
    import aligner

    root = Path(aligner.__file__).resolve().parents[1]
    recipe = recipe or root / "recipes" / "tts" / "tacotron_dca_small.yaml"
    if not recipe.is_file():
        raise click.ClickException(f"recipe {recipe} not found; give one with --recipe")
    data, exp = out_dir / "data", out_dir / "exp"
    click.secho(f"[1/5] eSpeak NG corpus ({utterances} utterances) -> {data}", bold=True)
    if not (data / "valid.jsonl").is_file():
        run_cli("prepare", "espeak", str(data), "--utterances", str(utterances))
    click.secho(f"[2/5] training {recipe.name} for up to {minutes:g} min -> {exp}", bold=True)
    if not (exp / ".done").exists():
        resume = ["--resume"] if any((exp / "checkpoints").glob("ckpt-*.pt")) else []
        run_cli(
            "train",
            str(recipe),
            "--data",
            str(data),
            "--out",
            str(exp),
            *resume,
            "--set",
            f"train.max_minutes={minutes}",
        )
        (exp / ".done").touch()
    ckpt = chosen_checkpoint(exp)
    sentence = new_sentence(data)
    click.secho(f"[3/5] synthesizing a sentence not in the corpus: {sentence!r}", bold=True)
    run_cli(
        "synthesize",
        "--checkpoint",
        str(ckpt),
        "--text",
        sentence,
        "--force",
        "--out",
        str(out_dir / "demo.wav"),
        "--alignment",
        str(out_dir / "demo_alignment.png"),
    )
    click.secho("[4/5] alignment evolution during training", bold=True)
    run_cli("evolution", str(exp), "--out", str(out_dir / "evolution.gif"), "--force")
    click.secho("[5/5] alignment quality on the validation split", bold=True)
    run_cli(
        "align",
        "--checkpoint",
        str(ckpt),
        "--in",
        str(data / "valid.jsonl"),
        "--out",
        str(out_dir / "valid_alignments"),
        "--no-png",
        "--force",
    )
    if not has_timings(data / "valid.jsonl"):
        click.echo(f"{data} has no reference timings (an older corpus): boundary errors skipped")
    else:
        click.secho("      ... against the reference timings eSpeak NG reported", bold=True)
        score_alignment(data, out_dir)
    from aligner.train.run import tensorboard_command

    click.echo(
        f"\nDone. Listen to {out_dir / 'demo.wav'}; look at {out_dir / 'demo_alignment.png'} and "
        f"{out_dir / 'evolution.gif'}.\nTensorBoard logs: {exp / 'tb'}\n"
        f"  open them with: {tensorboard_command(exp / 'tb', 'demo')}   "
        "(then browse http://localhost:6006)"
    )


def chosen_checkpoint(exp: Path) -> Path:
    """best.pt (the lowest validation loss) when the run has one, else the latest
    checkpoint; says which and why."""
    from aligner.checkpoint import list_checkpoints, load_checkpoint

    ckpts, best = list_checkpoints(exp / "checkpoints"), exp / "checkpoints" / "best.pt"
    if best.is_file():
        step = load_checkpoint(best)["step"]
        last = f" (the last is step {int(ckpts[-1].stem.split('-')[1])})" if ckpts else ""
        click.echo(f"using {best}: the lowest validation loss, at step {step}{last}")
        return best
    if not ckpts:
        raise click.ClickException(
            f"no checkpoint in {exp / 'checkpoints'}; delete {exp} and re-run"
        )
    click.echo(f"using {ckpts[-1]}: the latest checkpoint (no best.pt: no validation yet)")
    return ckpts[-1]


def has_timings(manifest: Path) -> bool:
    from aligner.data.manifest import read_manifest

    return any(it.get("timings") for it in read_manifest(manifest)[:1])


def score_alignment(data: Path, out_dir: Path) -> None:
    run_cli(
        "score-alignment",
        "--reference",
        str(data / "valid.jsonl"),
        "--predicted",
        str(out_dir / "valid_alignments"),
        "--out",
        str(out_dir / "alignment_score.json"),
        "--force",
    )


DEMO_SENTENCES = (
    "Seven quiet violins drifted above the harbour at dawn.",
    "A curious otter juggled three pebbles beside the frozen waterfall.",
    "Bright lanterns guided the weary travellers across the marsh.",
)


def new_sentence(data: Path) -> str:
    """The first demo sentence whose text is in none of the corpus manifests."""
    from aligner.data.manifest import read_manifest

    seen = {
        " ".join(str(it.get("text", "")).lower().split())
        for split in ("train", "valid", "test")
        if (data / f"{split}.jsonl").is_file()
        for it in read_manifest(data / f"{split}.jsonl")
    }
    for sentence in DEMO_SENTENCES:
        if " ".join(sentence.lower().split()) not in seen:
            return sentence
    raise click.ClickException("every demo sentence is in the corpus; give another corpus size")


def run_cli(*args: str) -> None:
    """Run `aligner ARGS...` in a child process (its progress bars show as they are)."""
    import subprocess

    cmd = [sys.executable, "-c", "from aligner.cli import main; main()", *args]
    if subprocess.run(cmd).returncode != 0:
        raise click.ClickException(f"`aligner {' '.join(args)}` failed (see above); fix and re-run")
