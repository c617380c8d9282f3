"""`aligner synthesize` as a library call: text in, a WAV file (and an alignment heatmap)
out; what it shares with `aligner convert` (`aligner.inference.conversion`).

    speech = load_speech_model("exp/tts/checkpoints/best.pt", "synthesize")
    wave, results = synthesize_text(speech, "Hello there. How are you?")
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from aligner.attention.plot import image_format, panel_paths, save_alignment_panels
from aligner.audio.io import join_waves, save_audio
from aligner.files import output_error, write_atomic
from aligner.inference.common import (
    RECIPE_WINDOW,
    InferenceError,
    guessed_line,
    guessed_words,
    unused_window,
)
from aligner.inference.loading import load_speech_model
from aligner.inference.speech import Generated
from aligner.inference.tacotron import TTSModel
from aligner.inference.vocoders import load_vocoder
from aligner.text.normalize import has_words, normalize_and_split


@dataclass(frozen=True)
class Decoding:
    """Free-running decoding options: sentences (or files) decoded at once, the length
    limit in output frames per input step, the monotonic window (back, front; None: none;
    ``RECIPE_WINDOW``: the recipe's, `aligner.inference.tacotron.FreeRunning.generate`),
    the Griffin-Lim iterations, the vocoder (`aligner.models.vocoders.base`: None or
    ``griffin-lim``, ``hifigan:DIR``, a trained vocoder's experiment folder or checkpoint),
    the decoder's precision (``fp32``, ``fp16``, ``int8``:
    `aligner.models.tacotron.precision`) and the speaking rate ``pace`` of a model whose
    role is ``paced`` (it predicts its durations; 2 says it twice as fast)."""

    batch_size: int = 16
    max_length_ratio: float = 10.0
    window: tuple[int, int] | str | None = RECIPE_WINDOW
    griffin_lim_iters: int = 60
    seed: int = 0
    vocoder: str | None = None
    precision: str = "fp32"
    pace: float = 1.0

    def __post_init__(self) -> None:
        """InferenceError naming the first option out of its range (NaN included)."""
        for name, low in (("max_length_ratio", 0.0), ("pace", 0.0)):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > low):
                raise InferenceError(f"{name} must be a positive number, got {value}")
        for name in ("batch_size", "griffin_lim_iters"):
            if getattr(self, name) < 1:
                raise InferenceError(f"{name} must be at least 1, got {getattr(self, name)}")


@dataclass
class SpeechRun:
    """What `synthesize` / `convert` produced: the output files, the names (sentences or
    ids) whose decoding reached the length limit, the decoded utterances, and the
    monotonic window they were decoded under (None: none)."""

    outputs: list[Path]
    results: list[Generated]
    names: list[str]
    step: int
    warnings: list[str] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    window: tuple[int, int] | None = None

    @property
    def frames(self) -> int:
        return sum(len(r.mel) for r in self.results)


def length_warnings(
    names: Sequence[str], results: Sequence[Generated], ratio: float, what: str = "sentence"
) -> list[str]:
    """One line for each output cut at the length limit instead of its predicted end
    (`what`: a ``sentence`` of a text, or an ``input`` of a conversion)."""
    out = []
    for i, (name, r) in enumerate(zip(names, results)):
        if r.hit_max:
            short = name if len(name) <= 60 else name[:57] + "..."
            out.append(
                f"{what} {i + 1} ({short!r}) reached --max-length-ratio {ratio:g} without "
                "predicting its end; the output is cut there (check the text or the model)"
            )
    return out


def split_text(speech: TTSModel, text: str) -> list[str]:
    """The sentences `synthesize_text` says: split where sentences end (not after
    abbreviations), then normalized for the model's cleaner (numbers, times, units and
    abbreviations spelled out; `aligner.text.normalize`). A sentence of punctuation or
    symbols alone (``...`` between paragraphs, ``***``, an emoji) has nothing to say and is
    left out: decoded, it would be noise. InferenceError for a text without any words."""
    sentences = normalize_and_split(text, cleaner=speech.tokenizer.cleaner)
    if not sentences:
        raise InferenceError("the text is empty: give some words to say")
    said = [s for s in sentences if has_words(s)]
    if not said:
        short = text.strip() if len(text.strip()) <= 40 else text.strip()[:37] + "..."
        raise InferenceError(
            f"the text has no words, only punctuation or symbols ({short!r}): give some "
            "words to say"
        )
    return said


def synthesize_text(
    speech: TTSModel,
    text: str | Sequence[str],
    decoding: Decoding = Decoding(),
    pause: float = 0.25,
) -> tuple[torch.Tensor, list[Generated], list[str]]:
    """Text (or its sentences from `split_text`) -> (waveform (L,) at the model's sample
    rate, one `Generated` per sentence, the sentences): decoded in batches, vocoded,
    joined with `pause` seconds of silence."""
    sentences = split_text(speech, text) if isinstance(text, str) else list(text)
    ids = encode_sentences(speech, sentences)
    d = decoding
    vocoder = load_vocoder(
        d.vocoder, speech.mel_cfg, griffin_lim_iters=d.griffin_lim_iters, device=speech.device
    )
    results = speech.generate(ids, d.batch_size, d.max_length_ratio, d.window, **pace_of(speech, d))
    waves = [vocoder(r.mel) for r in results]
    return join_waves(waves, vocoder.features.sample_rate, pause), results, sentences


def encode_sentences(speech: TTSModel, sentences: Sequence[str]) -> list[torch.Tensor]:
    """Each sentence's token ids; one InferenceError naming every sentence that cannot be
    said (its number, its start, the symbols the model lacks), not the first alone."""
    ids, bad = [], []
    for i, sentence in enumerate(sentences):
        short = sentence if len(sentence) <= 40 else sentence[:37] + "..."
        try:
            ids.append(speech.encode_text(sentence, f"sentence {i + 1} ({short!r})"))
        except InferenceError as err:
            bad.append(str(err))
    if len(bad) == 1:
        raise InferenceError(bad[0])
    if bad:
        advice = "; the model's symbol table"  # said once, after the list
        tail = next((b[b.index(advice) :] for b in bad if advice in b), "")
        listed = [b.split(advice)[0] for b in bad[:5]]
        more = f"; and {len(bad) - 5} more" if len(bad) > 5 else ""
        head = f"{len(bad)} of {len(sentences)} sentences cannot be said: "
        raise InferenceError(head + "; ".join(listed) + more + tail)
    return ids


def pace_of(speech: Any, decoding: Decoding) -> dict[str, float]:
    """``generate``'s ``pace`` argument: none at 1, else the rate for a model whose role is
    ``paced``; InferenceError for any other model."""
    if decoding.pace == 1.0:
        return {}
    if not speech.role.paced:
        raise InferenceError(
            f"{speech.path}: --pace is for a model that predicts its durations (fastpitch, "
            "fastvc); this one's timing comes from its attention"
        )
    return {"pace": decoding.pace}


def refuse_existing(paths: Sequence[Path | None], force: bool) -> None:
    """InferenceError for the first path that exists (without `force`) or is a folder."""
    for path in paths:
        if path is None:
            continue
        if path.is_dir():
            raise InferenceError(f"{path} is a folder; name a file to write")
        if path.exists() and not force:
            raise InferenceError(f"{path} exists; pass --force to overwrite it")


def check_outputs(paths: Sequence[Path | None], images: Sequence[Path] = ()) -> None:
    """InferenceError before any work where two outputs are one file (``--out a.wav
    --alignment a.wav``, ``--out`` inside ``--save-mel``) or an image's suffix names no
    format matplotlib writes (the heatmap failed after the audio was written)."""
    seen: dict[Path, Path] = {}
    for path in (p for p in paths if p is not None):
        key = path.resolve()
        if key in seen:
            raise InferenceError(
                f"two outputs would be written to {path} (--out, --alignment, --save-mel): "
                "give each its own name"
            )
        seen[key] = path
    for image in images:
        try:
            image_format(image)
        except ValueError as err:
            raise InferenceError(str(err)) from None


def make_folders(paths: Sequence[Path | None]) -> None:
    """The folder of each output, made before any decoding: a folder that cannot be made
    (no space, read-only, /proc) stops the command before it writes anything."""
    for path in paths:
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as err:  # a file in the way, /proc, a full disk: named
                raise InferenceError(str(output_error(err, path) or err)) from None


def mel_paths(folder: Path | None, names: Sequence[str]) -> list[Path]:
    """``FOLDER/NAME.npy`` for each name, plus ``FOLDER/mel_config.json``; [] without a
    folder. InferenceError when `folder` is a file."""
    if folder is None:
        return []
    if folder.exists() and not folder.is_dir():
        raise InferenceError(f"--save-mel {folder} is a file; give a folder")
    return [folder / f"{n}.npy" for n in names] + [folder / "mel_config.json"]


def stale_mels(folder: Path | None, written: Sequence[Path]) -> list[str]:
    """A warning where `folder` holds mels this run did not write (``sentence-5.npy`` of
    an earlier, longer text, kept under ``--force``): `aligner vocode FOLDER` would say them."""
    if folder is None:
        return []
    others = sorted(set(folder.glob("*.npy")) - set(written))
    if not others:
        return []
    named = ", ".join(p.name for p in others[:3]) + (" ..." if len(others) > 3 else "")
    return [f"--save-mel {folder} also holds {len(others)} mel(s) of another run ({named})"]


def write_mel(path: Path, mel: torch.Tensor) -> None:
    """One predicted log-mel ``(T, n_mels)`` float32 (natural log, not normalized)."""
    import numpy as np

    write_atomic(path, lambda fh: np.save(fh, mel.float().numpy()))


def save_mel_config(folder: Path, speech: TTSModel) -> None:
    """The feature settings of the saved mels (``mel_config.json``), for a vocoder."""
    import json

    settings = {**speech.mel_cfg.to_dict(), "layout": "frames x n_mels", "log": "natural"}
    text = json.dumps(settings, indent=1) + "\n"
    write_atomic(folder / "mel_config.json", lambda fh: fh.write(text), "w", encoding="utf-8")


def synthesize(
    checkpoint: Path,
    text: str,
    out: Path,
    alignment: Path | None = None,
    decoding: Decoding = Decoding(),
    pause: float = 0.25,
    device: str = "cpu",
    force: bool = False,
    save_mel: Path | None = None,
) -> SpeechRun:
    """Synthesize `text` with a TTS checkpoint into the WAV `out` (the alignment heatmap
    PNG `alignment`: one panel per sentence; the predicted mels ``sentence-K.npy`` in the
    folder `save_mel`). Every output is checked before decoding starts."""
    refuse_existing([out], force)
    torch.manual_seed(decoding.seed)  # the prenet keeps dropout on at inference
    speech = load_speech_model(checkpoint, "synthesize", device, decoding.precision)
    sentences = split_text(speech, text)
    mels = mel_paths(save_mel, [f"sentence-{k}" for k in range(1, len(sentences) + 1)])
    pngs = panel_paths(alignment, len(sentences)) if alignment is not None else []
    refuse_existing([*pngs, *mels], force)
    check_outputs([out, *pngs, *mels], pngs)
    make_folders([*pngs, *mels, out])  # the side outputs first
    wave, results, sentences = synthesize_text(speech, sentences, decoding, pause)
    save_audio(out, wave, speech.mel_cfg.sample_rate)
    if alignment is not None:
        _save_panels(speech, sentences, results, alignment, force)
    for path, r in zip(mels, results):
        write_mel(path, r.mel)
    if mels:
        save_mel_config(mels[-1].parent, speech)
    warnings = length_warnings(sentences, results, decoding.max_length_ratio)
    warnings += stale_mels(save_mel, mels)
    window = speech.decoding_window(decoding.window)
    warnings += unused_window(decoding.window, window)
    if guessed := guessed_words(speech):
        warnings.append(guessed_line(guessed))
    return SpeechRun([out], results, sentences, speech.step, warnings, window=window)


def _save_panels(
    speech: TTSModel, sentences: list[str], results: list[Generated], path: Path, force: bool
) -> None:
    """One alignment panel per sentence, its tokens on the vertical axis, seconds across."""
    tokens = [speech.symbols.decode(speech.encode_text(s).tolist()) for s in sentences]
    cfg = speech.mel_cfg
    save_alignment_panels(
        [r.alignment.float() for r in results],
        path,
        tokens,
        sentences,
        force,
        r=speech.r,
        hop_length=cfg.hop_length,
        sample_rate=cfg.sample_rate,
    )
