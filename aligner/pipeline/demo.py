"""`aligner demo` as one call: the eSpeak NG corpus, a TTS recipe trained for a few
minutes, a new sentence synthesized, the alignment's evolution during training, and the
alignment's quality against the reference timings, each stage a library function.

Re-running continues where it stopped: the corpus is made once, training resumes from
its latest checkpoint until it ends (``exp/.done``), and the outputs of the later stages
are written again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.config import find_recipe

DEFAULT_RECIPE = Path("recipes/tts/tacotron_dca_small.yaml")
DEMO_SENTENCES = (
    "Seven quiet violins drifted above the harbour at dawn.",
    "A curious otter juggled three pebbles beside the frozen waterfall.",
    "Bright lanterns guided the weary travellers across the marsh.",
)
STAGES = 5


class DemoError(ValueError):
    """A stage failed for a reason the user can fix; the message is one line."""


@dataclass
class DemoRun:
    """Where the demo wrote its outputs, and the alignment score (None without reference
    timings)."""

    out_dir: Path
    checkpoint: Path
    sentence: str
    wav: Path
    alignment_png: Path
    evolution_gif: Path
    score: dict[str, Any] | None = None


def run_demo(
    out_dir: str | Path,
    minutes: float = 20.0,
    utterances: int = 1000,
    recipe: str | Path | None = None,
    say: Callable[[str], object] = print,
    vocoder: str | None = None,
) -> DemoRun:
    """Run the demo's stages into `out_dir` (``data/``, ``exp/`` and the outputs), training
    `recipe` (default: the small dynamic-convolution-attention TTS recipe) for at most
    `minutes`; `vocoder` (`aligner.models.vocoders.load_vocoder`: None is Griffin-Lim)
    plays the synthesized sentence; `say` prints each stage. DemoError (one line) when a
    stage fails."""
    from aligner.inference.common import InferenceError

    out_dir = Path(out_dir)
    recipe = find_recipe(recipe or DEFAULT_RECIPE)
    if not recipe.is_file():
        raise DemoError(f"recipe {recipe} not found; give one with --recipe")
    data, exp = out_dir / "data", out_dir / "exp"
    try:
        _corpus(data, utterances, say)
        _train(recipe, data, exp, minutes, say)
        ckpt = chosen_checkpoint(exp, say)
        run = _synthesize(ckpt, data, out_dir, say, vocoder)
        _evolution(exp, run, say)
        run.score = _alignment_quality(ckpt, data, out_dir, say)
    except (InferenceError, FileExistsError) as err:
        raise DemoError(str(err)) from None
    return run


def _stage(say: Callable[[str], object], k: int, what: str) -> None:
    say(f"[{k}/{STAGES}] {what}")


def _corpus(data: Path, utterances: int, say) -> None:
    from aligner.data.prepare.espeak import prepare_espeak
    from aligner.data.report import BadItemsError

    _stage(say, 1, f"eSpeak NG corpus ({utterances} utterances) -> {data}")
    if (data / "valid.jsonl").is_file():
        say(f"      {data} exists, kept")
        return
    try:
        summary = prepare_espeak(data, utterances)
    except (BadItemsError, ValueError, OSError) as err:
        raise DemoError(f"preparing the corpus failed: {err}") from None
    for line in summary.lines():
        say(f"      {line}")


def _train(recipe: Path, data: Path, exp: Path, minutes: float, say) -> None:
    """Train (or resume) until the run ends; ``exp/.done`` marks that it did."""
    from aligner.train.run import RunError, run

    _stage(say, 2, f"training {recipe.name} for up to {minutes:g} min -> {exp}")
    if (exp / ".done").exists():
        say(f"      {exp} is trained (delete {exp / '.done'} to train on)")
        return
    try:
        result = run(recipe, data, exp, [f"train.max_minutes={minutes}"], resume=True, say=say)
    except RunError as err:
        raise DemoError(str(err)) from None
    if result.signal:
        raise DemoError(f"training was interrupted ({result.signal}); re-run the demo to go on")
    (exp / ".done").touch()


def chosen_checkpoint(exp: Path, say: Callable[[str], object] = print) -> Path:
    """The run's checkpoint (`aligner.inference.loading.resolve_checkpoint`: best.pt, the
    lowest validation loss, else the latest), saying which and why."""
    from aligner.checkpoint import list_checkpoints, load_checkpoint
    from aligner.inference.common import InferenceError
    from aligner.inference.loading import resolve_checkpoint

    folder = exp / "checkpoints"
    try:
        path = resolve_checkpoint(folder)
    except InferenceError:
        path = folder
    if not path.is_file():
        raise DemoError(f"no checkpoint in {folder}; delete {exp} and re-run")
    ckpts = list_checkpoints(folder)
    if path not in ckpts:  # best.pt
        step = load_checkpoint(path)["step"]
        last = f" (the last is step {int(ckpts[-1].stem.split('-')[1])})" if ckpts else ""
        say(f"using {path}: the lowest validation loss, at step {step}{last}")
    else:
        say(f"using {path}: the latest checkpoint (no best.pt: no validation yet)")
    return path


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
    raise DemoError("every demo sentence is in the corpus; give another corpus size")


def _synthesize(ckpt: Path, data: Path, out_dir: Path, say, vocoder: str | None) -> DemoRun:
    from aligner.inference.synthesis import Decoding, synthesize

    sentence = new_sentence(data)
    _stage(say, 3, f"synthesizing a sentence not in the corpus: {sentence!r}")
    wav, png = out_dir / "demo.wav", out_dir / "demo_alignment.png"
    result = synthesize(ckpt, sentence, wav, png, Decoding(vocoder=vocoder), force=True)
    for line in result.warnings:
        say(f"      warning: {line}")
    say(f"      wrote {wav} and {png} ({ckpt} at step {result.step})")
    return DemoRun(out_dir, ckpt, sentence, wav, png, out_dir / "evolution.gif")


def _evolution(exp: Path, run: DemoRun, say) -> None:
    """The GIF and strip of the logged alignments; skipped (said) when training stopped
    before its first validation logged any."""
    from aligner.train.evolution import EvolutionError, evolution_of

    _stage(say, 4, "alignment evolution during training")
    try:
        tag, steps, gif, png = evolution_of(exp, out=run.evolution_gif, force=True)
    except EvolutionError as err:
        say(f"      skipped: {err} (train longer: validation logs the alignments)")
        return
    say(f"      {tag}: {len(steps)} frames (steps {steps[0]}..{steps[-1]}) -> {gif}, {png}")


def _alignment_quality(ckpt: Path, data: Path, out_dir: Path, say) -> dict[str, Any] | None:
    """`aligner align` on the validation split, then its boundary errors against the
    reference timings eSpeak NG reported (None for a corpus without them)."""
    from aligner.data.manifest import read_manifest
    from aligner.inference.align import align_manifest
    from aligner.inference.alignment_score import score_alignments, table

    _stage(say, 5, "alignment quality on the validation split")
    valid, aligned = data / "valid.jsonl", out_dir / "valid_alignments"
    summary = align_manifest(ckpt, valid, aligned, png=False, force=True)
    say(summary.table())
    if not any(it.get("timings") for it in read_manifest(valid)[:1]):
        say(f"{data} has no reference timings (an older corpus): boundary errors skipped")
        return None
    say("      ... against the reference timings eSpeak NG reported")
    result = score_alignments(valid, aligned, out=out_dir / "alignment_score.json", force=True)
    say(table(result))
    return result
