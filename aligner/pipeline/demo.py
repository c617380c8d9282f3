"""`aligner demo` as one call, each stage a library function: the eSpeak NG corpus; the
alignment model trained for a few minutes and its durations of the train and valid
splits; a TTS recipe trained with its attention guided by those durations; a vocoder
trained on the corpus; a new sentence synthesized through it; the alignment's evolution
during training; and the alignment's quality against the reference timings.

Re-running continues where it stopped: the corpus is made once, each training resumes
from its latest checkpoint until it ends (``.done`` in its folder), and the outputs of
the later stages are written again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.checkpoint import CheckpointError, checkpoint_choice, list_checkpoints, read_checkpoint
from aligner.config import find_recipe
from aligner.data.manifest import read_manifest
from aligner.data.prepare.espeak import prepare_espeak
from aligner.data.report import BadItemsError
from aligner.evaluation.alignment import score_alignments, table
from aligner.inference.align import align_manifest
from aligner.inference.common import InferenceError
from aligner.inference.synthesis import Decoding, synthesize
from aligner.train.evolution import EvolutionError, evolution_of
from aligner.train.run import RunError, run

# the TTS recipe of each guide: the alignment model's durations (a light guide and
# scheduled sampling, the guided recipe's own keys over its base), or the recipe's diagonal
RECIPES = {
    "durations": Path("recipes/tts/tacotron_forward_small_guided.yaml"),
    "diagonal": Path("recipes/tts/tacotron_forward_small.yaml"),
}
ALIGN_RECIPE = Path("recipes/align/aligner.yaml")
VOCODER_RECIPE = Path("recipes/vocoder/vocos_small.yaml")
DEMO_SENTENCES = (
    "Seven quiet violins drifted above the harbour at dawn.",
    "A curious otter juggled three pebbles beside the frozen waterfall.",
    "Bright lanterns guided the weary travellers across the marsh.",
)
STAGES = 7


class DemoError(ValueError):
    """A stage failed for a reason the user can fix; the message is one line."""


@dataclass
class DemoPlan:
    """What the demo trains, and for how long.

    minutes: the TTS recipe's training budget. guide: ``durations`` (the alignment model
    trains for ``align_minutes`` first, and its durations guide the TTS attention) or
    ``diagonal`` (the recipe's own guide). vocoder: ``train`` (the small Vocos recipe on
    the corpus for ``vocoder_minutes``), or a ``--vocoder`` spec (``griffin-lim``,
    ``hifigan:DIR``, a vocoder experiment folder or checkpoint).
    """

    minutes: float = 18.0
    utterances: int = 1000
    recipe: str | Path | None = None
    guide: str = "durations"
    align_minutes: float = 3.0
    vocoder: str = "train"
    vocoder_minutes: float = 5.0

    def __post_init__(self) -> None:
        if self.guide not in ("durations", "diagonal"):
            raise DemoError(f"guide {self.guide!r}: use durations or diagonal")


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
    out_dir: str | Path, plan: DemoPlan | None = None, say: Callable[[str], object] = print
) -> DemoRun:
    """Run the demo's stages into `out_dir` (``data/``, ``exp/``, ``aligner/``,
    ``vocoder/`` and the outputs) as `plan` says (default: the small forward-attention TTS
    recipe guided by the alignment model's durations, ``RECIPES["durations"]``, and a
    trained vocoder);
    `say` prints each stage. DemoError (one line) when a stage fails."""
    plan = plan or DemoPlan()
    out_dir = Path(out_dir)
    recipe = find_recipe(plan.recipe or RECIPES[plan.guide])
    if not recipe.is_file():
        raise DemoError(f"recipe {recipe} not found; give one with --recipe")
    data, exp = out_dir / "data", out_dir / "exp"
    try:
        _corpus(data, plan.utterances, say)
        overrides = [f"train.max_minutes={plan.minutes}"]
        if plan.guide == "durations":
            _durations(data, out_dir / "aligner", plan.align_minutes, say)
        else:
            _stage(say, 2, "no alignment model: the recipe's diagonal guide (--guide diagonal)")
        _stage(say, 3, f"training {recipe.name} for up to {plan.minutes:g} min -> {exp}")
        _train(recipe, data, exp, overrides, say)
        vocoder = _vocoder(plan, data, out_dir / "vocoder", say)
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


def _train(recipe: Path, data: Path, exp: Path, overrides: list[str], say) -> None:
    """Train (or resume) until the run ends; ``exp/.done`` marks that it did."""
    if (exp / ".done").exists():
        say(f"      {exp} is trained (delete {exp / '.done'} to train on)")
        return
    try:
        result = run(recipe, data, exp, overrides, resume=True, say=say)
    except RunError as err:
        raise DemoError(str(err)) from None
    if result.signal:
        raise DemoError(f"training was interrupted ({result.signal}); re-run the demo to go on")
    (exp / ".done").touch()


def _durations(data: Path, exp: Path, minutes: float, say) -> None:
    """The alignment model trained on the corpus, then its durations of the train and
    valid splits into ``data/durations/{train,valid}`` (what guides the TTS attention)."""
    _stage(say, 2, f"the alignment model for up to {minutes:g} min -> {exp}, its durations")
    _train(find_recipe(ALIGN_RECIPE), data, exp, [f"train.max_minutes={minutes}"], say)
    ckpt = chosen_checkpoint(exp, say)
    for split in ("train", "valid"):
        folder = data / "durations" / split
        if (folder / "summary.json").is_file():
            say(f"      {folder} exists, kept")
            continue
        summary = align_manifest(ckpt, data / f"{split}.jsonl", folder, png=False, force=True)
        bad = f", {len(summary.bad)} not aligned (diagonal guide)" if summary.bad else ""
        say(f"      {split}: {len(summary.utterances)} utterances aligned{bad} -> {folder}")


def _vocoder(plan: DemoPlan, data: Path, exp: Path, say) -> str:
    """The ``--vocoder`` spec the sentence is played with: with ``train``, the small Vocos
    recipe trained on the corpus's audio (resumed until done) -> `exp`."""
    if plan.vocoder != "train":
        _stage(say, 4, f"no vocoder to train: --vocoder {plan.vocoder}")
        return plan.vocoder
    recipe = find_recipe(VOCODER_RECIPE)
    _stage(
        say,
        4,
        f"training the vocoder {recipe.name} for up to {plan.vocoder_minutes:g} min -> {exp}",
    )
    _train(recipe, data, exp, [f"train.max_minutes={plan.vocoder_minutes}"], say)
    return str(exp)


def chosen_checkpoint(exp: Path, say: Callable[[str], object] = print) -> Path:
    """The run's checkpoint (`aligner.checkpoint.checkpoint_choice`: best.pt, the lowest
    validation loss, else the latest), saying which and why."""
    folder = exp / "checkpoints"
    try:
        path, why = checkpoint_choice(folder)
        step = read_checkpoint(path)[1]["step"]
    except CheckpointError:
        raise DemoError(f"no usable checkpoint in {folder}; delete {exp} and re-run") from None
    if why == "best":
        ckpts = list_checkpoints(folder)
        last = f" (the last is step {int(ckpts[-1].stem.split('-')[1])})" if ckpts else ""
        say(f"using {path}: the lowest validation loss, at step {step}{last}")
    else:
        say(f"using {path}: the latest checkpoint (no best.pt: no validation yet)")
    return path


def new_sentence(data: Path) -> str:
    """The first demo sentence whose text is in none of the corpus manifests."""
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
    sentence = new_sentence(data)
    _stage(say, 5, f"synthesizing a sentence not in the corpus: {sentence!r}")
    wav, png = out_dir / "demo.wav", out_dir / "demo_alignment.png"
    result = synthesize(ckpt, sentence, wav, png, Decoding(vocoder=vocoder), force=True)
    for line in result.warnings:
        say(f"      warning: {line}")
    say(f"      wrote {wav} and {png} ({ckpt} at step {result.step})")
    played = f" --vocoder {vocoder}" if vocoder and vocoder != "griffin-lim" else ""
    say(f"      more: aligner synthesize --checkpoint {ckpt.parent.parent}{played} --text ...")
    return DemoRun(out_dir, ckpt, sentence, wav, png, out_dir / "evolution.gif")


def _evolution(exp: Path, run: DemoRun, say) -> None:
    """The GIF and strip of the logged alignments; skipped (said) when training stopped
    before its first validation logged any."""
    _stage(say, 6, "alignment evolution during training")
    try:
        tag, steps, gif, png = evolution_of(exp, out=run.evolution_gif, force=True)
    except EvolutionError as err:
        say(f"      skipped: {err} (train longer: validation logs the alignments)")
        return
    say(f"      {tag}: {len(steps)} frames (steps {steps[0]}..{steps[-1]}) -> {gif}, {png}")


def _alignment_quality(ckpt: Path, data: Path, out_dir: Path, say) -> dict[str, Any] | None:
    """`aligner align` on the validation split, then its boundary errors against the
    reference timings eSpeak NG reported (None for a corpus without them)."""
    _stage(say, 7, "alignment quality on the validation split")
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
