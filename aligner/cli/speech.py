"""`aligner synthesize | convert | align | plot | demo`: argument handling and reporting.

The work is done by aligner.inference (models, batching), aligner.export (durations,
TextGrids, metrics) and the audio front end. A failure the user can fix ends with one
line (click.ClickException) and exit code 1.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

AUDIO_EXTS = (".wav", ".flac", ".ogg", ".mp3")


# ---------------------------------------------------------------------- helpers
@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's user-facing errors into one-line click errors."""
    from aligner.audio.io import AudioError
    from aligner.data.manifest import ManifestError
    from aligner.inference import InferenceError

    try:
        yield
    except (InferenceError, AudioError, ManifestError, FileExistsError) as err:
        raise click.ClickException(str(err)) from None


def refuse_existing(paths: list[Path | None], force: bool) -> None:
    for path in paths:
        if path is not None and path.exists() and not force:
            raise click.ClickException(f"{path} exists; pass --force to overwrite it")


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


def seed_all(seed: int) -> None:
    import torch

    torch.manual_seed(seed)


def block_diagonal(alignments: list) -> object:
    """Alignments (S_i, N_i) -> one (sum S, sum N) matrix, sentence after sentence."""
    import torch

    return torch.block_diag(*[a.float() for a in alignments])


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
    from aligner.inference import join_waves, load_speech_model, split_sentences

    if (text is None) == (text_file is None):
        raise click.ClickException("give the text with exactly one of --text or --text-file")
    if text_file is not None:
        if not text_file.is_file():
            raise click.ClickException(f"--text-file {text_file} does not exist")
        text = text_file.read_text(encoding="utf-8")
    sentences = split_sentences(text or "")
    if not sentences:
        raise click.ClickException("the text is empty: give some words to say")
    refuse_existing([out, alignment], force)
    seed_all(seed)
    with user_errors():
        speech = load_speech_model(checkpoint, "tts", device)
        ids = [speech.encode_text(s, f"sentence {i + 1}") for i, s in enumerate(sentences)]
    click.echo(f"{checkpoint} (step {speech.step}): {len(sentences)} sentence(s)", err=True)
    results = speech.generate(ids, batch_size, max_length_ratio, window)
    waves = []
    with click.progressbar(results, label="vocoding", file=sys.stderr) as bar:
        for r in bar:
            waves.append(speech.vocode(r.mel, griffin_lim_iters))
    report_length_hits(sentences, [r.hit_max for r in results], max_length_ratio)
    save_wave(out, join_waves(waves, speech.mel_cfg.sample_rate, pause), speech.mel_cfg.sample_rate)
    if alignment is not None:
        save_png(block_diagonal([r.alignment for r in results]), alignment, force)
    frames = sum(len(r.mel) for r in results)
    click.echo(f"wrote {out} ({frames} frames, {len(sentences)} sentence(s))")


def report_length_hits(names: list[str], hits: list[bool], ratio: float) -> None:
    for i, (name, hit) in enumerate(zip(names, hits)):
        if hit:
            short = name if len(name) <= 60 else name[:57] + "..."
            click.echo(
                f"warning: sentence {i + 1} ({short!r}) reached --max-length-ratio {ratio:g} "
                "without predicting its end; the output is cut there (check the text or the model)",
                err=True,
            )


def save_wave(path: Path, wav, sample_rate: int) -> None:
    from aligner.audio.io import save_audio

    path.parent.mkdir(parents=True, exist_ok=True)
    save_audio(path, wav, sample_rate)


def save_png(weights, path: Path, force: bool, title: str | None = None) -> None:
    from aligner.attention.plot import save_alignment_png

    save_alignment_png(weights, path, title=title, force=force)


# ---------------------------------------------------------------------- convert
def conversion_inputs(src: Path) -> tuple[list[dict], bool]:
    """(items with ``id`` and ``audio`` (+ ``target_audio``), many) for a file, folder or
    JSON Lines manifest."""
    from aligner.data.manifest import read_manifest

    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.suffix.lower() in AUDIO_EXTS)
        if not files:
            raise click.ClickException(f"--in {src} holds no audio files ({', '.join(AUDIO_EXTS)})")
        return [{"id": p.stem, "audio": str(p)} for p in files], True
    if src.suffix in (".jsonl", ".json"):
        with user_errors():
            items = read_manifest(src)
        missing = [str(i.get("id", n)) for n, i in enumerate(items) if "audio" not in i]
        if missing:
            raise click.ClickException(f"{src}: items without 'audio': {', '.join(missing[:5])}")
        return items, True
    return [{"id": src.stem, "audio": str(src)}], False


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
    from aligner.audio.io import load_audio
    from aligner.data.manifest import write_manifest
    from aligner.inference import load_speech_model

    if not src.exists():
        raise click.ClickException(f"--in {src} does not exist")
    items, many = conversion_inputs(src)
    if many and alignment is not None:
        raise click.ClickException("--alignment needs a single input file; omit it for folders")
    outs = [out / f"{it['id']}.wav" for it in items] if many else [out]
    refuse_existing([*outs, alignment, out / "manifest.jsonl" if many else None], force)
    seed_all(seed)
    with user_errors():
        speech = load_speech_model(checkpoint, "vc", device)
        sr = speech.mel_cfg.sample_rate
        mels = [speech.source_mel(load_audio(it["audio"], sr)[0]) for it in items]
    click.echo(f"{checkpoint} (step {speech.step}): converting {len(items)} file(s)", err=True)
    results = speech.generate(mels, batch_size, max_length_ratio, window)
    with click.progressbar(list(zip(results, outs)), label="vocoding", file=sys.stderr) as bar:
        for r, path in bar:
            save_wave(path, speech.vocode(r.mel, griffin_lim_iters), sr)
    report_length_hits(
        [str(it["id"]) for it in items], [r.hit_max for r in results], max_length_ratio
    )
    if alignment is not None:
        save_png(results[0].alignment, alignment, force)
    if many:
        converted = [
            {**it, "audio": str(p), "source_audio": it["audio"]} for it, p in zip(items, outs)
        ]
        write_manifest(out / "manifest.jsonl", converted)
    click.echo(f"wrote {len(outs)} file(s) to {out}")


# ---------------------------------------------------------------------- align
@click.command()
@checkpoint_option
@click.option("--manifest", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--batch-size", default=8, show_default=True)
@click.option("--min-focus", default=0.4, show_default=True,
              help="Flag alignments whose mean focus rate is below this.")  # fmt: skip
@click.option("--no-png", is_flag=True, help="Skip the heatmap PNGs (faster).")
@click.option("--device", default="cpu", show_default=True)
@force_option
def align(
    checkpoint: Path,
    manifest: Path,
    out: Path,
    batch_size: int,
    min_focus: float,
    no_png: bool,
    device: str,
    force: bool,
) -> None:
    """Teacher-forced alignments of a manifest's audio + text (TTS) or audio pairs (VC):
    durations JSON, Praat TextGrid, heatmap and metrics per utterance, and a summary
    (summary.json) flagging suspect alignments: skipped or repeated tokens, or a mean
    focus rate below --min-focus."""
    from aligner.export import align_manifest

    if out.exists() and any(out.iterdir()) and not force:
        raise click.ClickException(f"{out} is not empty; pass --force to overwrite its files")
    with user_errors():
        summary = align_manifest(
            checkpoint, manifest, out, batch_size, min_focus, not no_png, device, force
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
    import numpy as np

    if not alignment.is_file():
        raise click.ClickException(f"{alignment} does not exist")
    refuse_existing([out], force)
    try:
        weights = np.load(alignment, allow_pickle=False)
    except (ValueError, OSError) as err:
        raise click.ClickException(f"{alignment} is not a .npy array ({err})") from None
    weights = weights.squeeze(0) if weights.ndim == 3 and weights.shape[0] == 1 else weights
    if weights.ndim != 2 or not np.isfinite(weights).all():
        raise click.ClickException(
            f"{alignment}: expected a finite (T_dec, T_enc) matrix, got shape {weights.shape}"
        )
    save_png(weights, out, force, title or alignment.stem)
    click.echo(f"wrote {out}")


# ---------------------------------------------------------------------- demo
@click.command()
@click.option("--out", "out_dir", default="demo", show_default=True,
              type=click.Path(file_okay=False, path_type=Path))  # fmt: skip
@click.option("--minutes", default=20.0, show_default=True, help="Training time budget.")
@click.option("--utterances", default=1000, show_default=True, help="Size of the espeak corpus.")
@click.option("--recipe", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Training recipe (default: the small dynamic-convolution-attention TTS recipe).")  # fmt: skip
def demo(out_dir: Path, minutes: float, utterances: int, recipe: Path | None) -> None:
    """Prepare the eSpeak NG corpus, train the small TTS recipe for --minutes, synthesize a
    new sentence, and draw its alignment and the alignment's evolution during training.
    Re-running continues where it stopped."""
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
        run_cli("train", str(recipe), "--data", str(data), "--out", str(exp), *resume,
                "--set", f"train.max_minutes={minutes}")  # fmt: skip
        (exp / ".done").touch()
    ckpts = sorted((exp / "checkpoints").glob("ckpt-*.pt"))
    if not ckpts:
        raise click.ClickException(
            f"no checkpoint in {exp / 'checkpoints'}; delete {exp} and re-run"
        )
    ckpt = ckpts[-1]  # the most trained one
    sentence = new_sentence(data)
    click.secho(f"[3/5] synthesizing a sentence not in the corpus: {sentence!r}", bold=True)
    run_cli("synthesize", "--checkpoint", str(ckpt), "--text", sentence, "--force",
            "--out", str(out_dir / "demo.wav"), "--alignment", str(out_dir / "demo_alignment.png"))  # fmt: skip
    click.secho("[4/5] alignment evolution during training", bold=True)
    run_cli("evolution", str(exp), "--out", str(out_dir / "evolution.gif"), "--force")
    click.secho("[5/5] alignment quality on the validation split", bold=True)
    run_cli("align", "--checkpoint", str(ckpt), "--manifest", str(data / "valid.jsonl"),
            "--out", str(out_dir / "valid_alignments"), "--no-png", "--force")  # fmt: skip
    click.echo(
        f"\nDone. Listen to {out_dir / 'demo.wav'}; look at {out_dir / 'demo_alignment.png'} and "
        f"{out_dir / 'evolution.gif'}.\nTensorBoard logs: {exp / 'tb'}\n"
        f"  open them with: tensorboard --logdir {exp / 'tb'}   (then browse http://localhost:6006)"
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
