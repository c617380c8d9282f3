"""`aligner synthesize` and `aligner convert` as library calls: text or audio in, WAV files
(and an alignment heatmap) out.

    speech = load_speech_model("exp/tts/checkpoints/best.pt", "tts")
    wave, results = synthesize_text(speech, "Hello there. How are you?")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from aligner.inference.common import InferenceError
from aligner.inference.speech import Generated, SpeechModel, load_speech_model

AUDIO_EXTS = (".wav", ".flac", ".ogg", ".mp3")


@dataclass(frozen=True)
class Decoding:
    """Free-running decoding options: sentences (or files) decoded at once, the length
    limit in output frames per input step, the monotonic window (back, front) and the
    Griffin-Lim iterations."""

    batch_size: int = 8
    max_length_ratio: float = 10.0
    window: tuple[int, int] | None = None
    griffin_lim_iters: int = 60
    seed: int = 0


@dataclass
class SpeechRun:
    """What `synthesize` / `convert` produced: the output files, the names (sentences or
    ids) whose decoding reached the length limit, and the decoded utterances."""

    outputs: list[Path]
    results: list[Generated]
    names: list[str]
    step: int
    warnings: list[str] = field(default_factory=list)

    @property
    def frames(self) -> int:
        return sum(len(r.mel) for r in self.results)


def length_warnings(names: Sequence[str], results: Sequence[Generated], ratio: float) -> list[str]:
    """One line for each output cut at the length limit instead of its predicted end."""
    out = []
    for i, (name, r) in enumerate(zip(names, results)):
        if r.hit_max:
            short = name if len(name) <= 60 else name[:57] + "..."
            out.append(
                f"sentence {i + 1} ({short!r}) reached --max-length-ratio {ratio:g} without "
                "predicting its end; the output is cut there (check the text or the model)"
            )
    return out


def synthesize_text(
    speech: SpeechModel, text: str, decoding: Decoding = Decoding(), pause: float = 0.25
) -> tuple[torch.Tensor, list[Generated], list[str]]:
    """Text -> (waveform (L,) at the model's sample rate, one `Generated` per sentence,
    the sentences): split into sentences, decoded in batches, vocoded, joined with
    `pause` seconds of silence."""
    from aligner.audio.io import join_waves
    from aligner.text.sentences import split_sentences

    sentences = split_sentences(text)
    if not sentences:
        raise InferenceError("the text is empty: give some words to say")
    ids = [speech.encode_text(s, f"sentence {i + 1}") for i, s in enumerate(sentences)]
    d = decoding
    results = speech.generate(ids, d.batch_size, d.max_length_ratio, d.window)
    waves = [speech.vocode(r.mel, d.griffin_lim_iters) for r in results]
    return join_waves(waves, speech.mel_cfg.sample_rate, pause), results, sentences


def refuse_existing(paths: Sequence[Path | None], force: bool) -> None:
    for path in paths:
        if path is not None and path.exists() and not force:
            raise InferenceError(f"{path} exists; pass --force to overwrite it")


def synthesize(
    checkpoint: Path,
    text: str,
    out: Path,
    alignment: Path | None = None,
    decoding: Decoding = Decoding(),
    pause: float = 0.25,
    device: str = "cpu",
    force: bool = False,
) -> SpeechRun:
    """Synthesize `text` with a TTS checkpoint into the WAV `out` (and the alignment
    heatmap PNG `alignment`, sentences one after another)."""
    from aligner.audio.io import save_audio

    refuse_existing([out, alignment], force)
    torch.manual_seed(decoding.seed)  # the prenet keeps dropout on at inference
    speech = load_speech_model(checkpoint, "tts", device)
    wave, results, sentences = synthesize_text(speech, text, decoding, pause)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_audio(out, wave, speech.mel_cfg.sample_rate)
    if alignment is not None:
        _save_png(torch.block_diag(*[r.alignment.float() for r in results]), alignment, force)
    warnings = length_warnings(sentences, results, decoding.max_length_ratio)
    return SpeechRun([out], results, sentences, speech.step, warnings)


def _save_png(weights: Any, path: Path, force: bool) -> None:
    from aligner.attention.plot import save_alignment_png

    save_alignment_png(weights, path, force=force)


def conversion_inputs(src: Path) -> tuple[list[dict], bool]:
    """(items with ``id`` and ``audio``, several?) for an audio file, a folder of audio
    files or a JSON Lines manifest."""
    from aligner.data.manifest import read_manifest

    if not src.exists():
        raise InferenceError(f"--in {src} does not exist")
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.suffix.lower() in AUDIO_EXTS)
        if not files:
            raise InferenceError(f"--in {src} holds no audio files ({', '.join(AUDIO_EXTS)})")
        return [{"id": p.stem, "audio": str(p)} for p in files], True
    if src.suffix in (".jsonl", ".json"):
        items = read_manifest(src)
        missing = [str(i.get("id", n)) for n, i in enumerate(items) if "audio" not in i]
        if missing:
            raise InferenceError(f"{src}: items without 'audio': {', '.join(missing[:5])}")
        return items, True
    return [{"id": src.stem, "audio": str(src)}], False


def convert(
    checkpoint: Path,
    src: Path,
    out: Path,
    alignment: Path | None = None,
    decoding: Decoding = Decoding(max_length_ratio=3.0),
    device: str = "cpu",
    force: bool = False,
    on_item: Callable[[], None] | None = None,
) -> SpeechRun:
    """Convert one audio file (to the WAV `out`), or a folder or manifest of them (into the
    folder `out`, with a ``manifest.jsonl`` of the results), with a VC checkpoint."""
    from aligner.audio.io import load_audio, save_audio
    from aligner.data.manifest import write_manifest

    items, many = conversion_inputs(src)
    if many and alignment is not None:
        raise InferenceError("--alignment needs a single input file; omit it for folders")
    outs = [out / f"{it['id']}.wav" for it in items] if many else [out]
    refuse_existing([*outs, alignment, out / "manifest.jsonl" if many else None], force)
    torch.manual_seed(decoding.seed)
    speech = load_speech_model(checkpoint, "vc", device)
    sr = speech.mel_cfg.sample_rate
    mels = [speech.source_mel(load_audio(it["audio"], sr)[0]) for it in items]
    d = decoding
    results = speech.generate(mels, d.batch_size, d.max_length_ratio, d.window)
    for r, path in zip(results, outs):
        path.parent.mkdir(parents=True, exist_ok=True)
        save_audio(path, speech.vocode(r.mel, d.griffin_lim_iters), sr)
        if on_item is not None:
            on_item()
    if alignment is not None:
        _save_png(results[0].alignment, alignment, force)
    if many:
        converted = [
            {**it, "audio": str(p), "source_audio": it["audio"]} for it, p in zip(items, outs)
        ]
        write_manifest(out / "manifest.jsonl", converted)
    names = [str(it["id"]) for it in items]
    warnings = length_warnings(names, results, d.max_length_ratio)
    return SpeechRun(outs, results, names, speech.step, warnings)
