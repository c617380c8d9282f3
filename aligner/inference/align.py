"""Alignment of recordings with their source by any family whose role aligns
(`aligner.families`): a Tacotron TTS or VC model (teacher-forced attention) or the
alignment model (its monotonic path).

- `align(model, audio, source) -> Alignment`: one recording (the public call);
- `align_manifest`: ``aligner align``, every item of a manifest, written per utterance
  (durations JSON, TextGrid, weights, heatmap; `aligner.inference.alignment_files`,
  from each `Alignment`) with a summary."""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.alignment.intervals import Timings, mapping_errors
from aligner.alignment.record import Alignment, UtteranceAlignment, resolve
from aligner.alignment.tiers import PUNCTUATION, optional_tokens
from aligner.audio.io import load_audio
from aligner.audio.trim import PauseRule
from aligner.data.manifest import BadLine, manifest_items
from aligner.files import write_atomic
from aligner.inference.alignment_files import (
    Summary,
    SuspectThresholds,
    utterance_metrics,
    write_utterance,
)
from aligner.inference.common import (
    InferenceError,
    check_output_folder,
    output_names,
)
from aligner.inference.duration_models import DurationDecoding
from aligner.inference.loading import load_speech_model
from aligner.inference.speech import SpeechModel
from aligner.text.cleaners import get_cleaner
from aligner.text.normalize import drop_footnote_marks


def _features(
    speech: SpeechModel, item: dict[str, Any], where: str, pauses: PauseRule
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray | None]:
    """(source (N,) ids or (S, M) mel, normalized target mel (T, M), the pause frames
    ``(T,)`` of a text item or None) of one manifest item."""
    missing = [k for k in speech.needs if not item.get(k)]
    if missing:
        raise InferenceError(
            f"{where}: no {' or '.join(missing)}; each item needs {' and '.join(speech.needs)}"
        )
    source = speech.source(item, where)
    if speech.has_text and optional_tokens(speech.symbols.decode(source.tolist())).all():
        raise InferenceError(f"{where}: its text has no words to align ({item['text']!r})")
    cfg = speech.mel_cfg
    wav = load_audio(item[speech.target_key], cfg.sample_rate)[0]
    target = speech.target_mel(wav)
    if not speech.has_text:
        return source, target, None
    required = int((~optional_tokens(speech.symbols.decode(source.tolist()))).sum())
    if required > target.size(0):
        raise InferenceError(
            f"{where}: its audio ({target.size(0)} frames, "
            f"{len(wav) / cfg.sample_rate:.2f} s) is too short for its text ({required} "
            "tokens, each needs a frame): check that the audio and the text belong together"
        )
    return source, target, pauses.frames(wav, cfg.sample_rate, cfg.hop_length, target.size(0))


def align(
    speech: SpeechModel,
    audio: str | Path,
    source: str | Path,
    name: str = "utterance",
    durations: str = "search",
    pauses: PauseRule = PauseRule(),
) -> Alignment:
    """The alignment of the recording `audio` with its `source`: the text it says for a
    model that reads text, the source speaker's recording for one that reads mels (VC).
    `speech`: a model whose role aligns (`load_speech_model(path, "align")`).
    `durations`: ``search`` (frames) or ``argmax`` (multiples of r). InferenceError (one
    line) for a model that cannot align, an unreadable recording or a text with no words.
    """
    if not speech.role.aligns:
        raise InferenceError(f"{speech.path}: this model does not align recordings")
    key = "text" if speech.has_text else "audio"
    item = {"id": name, key: str(source), speech.target_key: str(audio)}
    src, target, pause = _features(speech, item, str(audio), pauses)
    weights = speech.teacher_force([src], [target])[0]
    return resolve(_utterance(speech, item, name, src, len(target), weights, durations, pause))


def _utterance(
    speech: SpeechModel,
    item: dict[str, Any],
    name: str,
    source: torch.Tensor,
    n_frames: int,
    weights: torch.Tensor,
    method: str,
    pauses: np.ndarray | None = None,
) -> UtteranceAlignment:
    """One item's alignment `weights (S, N)` with its tokens (TTS: the symbols; VC: source
    positions) and the core's metrics (TTS: skips counted over text tokens only); ``pauses
    (T,)``: the pause frames of its audio (`PauseRule`), for the tiers."""
    required, kind = None, "positions"
    if speech.has_text:
        tokens = speech.symbols.decode(source.tolist())
        required = torch.from_numpy(~optional_tokens(tokens))[None]  # sounds only
        kind = speech.tokenizer.kind
    else:
        tokens = [str(i) for i in range(weights.shape[1])]
    steps, n = weights.shape
    m = utterance_metrics(
        weights[None], torch.tensor([steps]), torch.tensor([n]), required, speech.r
    )
    cfg = speech.mel_cfg
    return UtteranceAlignment(
        name,
        tokens,
        weights.numpy(),
        n_frames,
        speech.r,
        cfg.hop_length,
        cfg.sample_rate,
        m[0],
        kind,
        method,
        _label_text(speech, item.get("text"), tokens) if kind != "positions" else None,
        pauses,
        speech.role.hard_alignment,
        speech.role.hard_alignment,
        usual_frames=getattr(speech, "usual_frames", None),
    )


def _label_text(speech: SpeechModel, text: str | None, tokens: list[str]) -> str | None:
    """The text whose words label the tiers' words: the item's own, or where a number or
    abbreviation makes it say other words (``$3.50``: five), the tokenizer's cleaned text
    when its words are as many as the tokens' (else the tiers label them with their
    tokens)."""
    if not text:
        return text
    text = drop_footnote_marks(text)  # not said: no word of the tiers
    skip = optional_tokens(tokens)
    said = sum(1 for i in range(len(tokens)) if not skip[i] and (i == 0 or skip[i - 1]))
    if len(text.split()) == said:
        return text
    cleaner = getattr(speech.tokenizer, "cleaner", None)
    if cleaner is None:
        return text
    cleaned = " ".join(re.split(r"[\s/-]+", get_cleaner(cleaner)(text))).strip()
    return _as_written(text, cleaned) if len(cleaned.split()) == said else text


def _as_written(text: str, cleaned: str) -> str:
    """`cleaned` (the cleaner's words: lower case, numbers said) with each word that is
    one of `text`'s, case and punctuation aside, as `text` writes it (``$3 A boy`` ->
    ``three dollars A boy``, not ``a boy``)."""

    def key(word: str) -> str:
        return word.strip("".join(PUNCTUATION) + "'[]").casefold()

    written, said = text.split(), cleaned.split()
    matcher = difflib.SequenceMatcher(None, [key(w) for w in written], [key(w) for w in said])
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            said[block.b + k] = written[block.a + k]
    return " ".join(said)


def _mapping_ms(speech: SpeechModel, item: dict[str, Any], frames: list[int]) -> dict:
    """VC with reference timings of both voices: the mean absolute error (ms) of the
    source-to-target mapping the alignment implies at the phone boundaries (the word
    boundaries when the two voices' phones differ in number): ``mapping_ms``, and
    ``mapping_tier``. Empty for TTS or without timings."""
    if speech.has_text or not (item.get("timings") and item.get("target_timings")):
        return {}
    cfg = speech.mel_cfg
    frame = cfg.hop_length / cfg.sample_rate
    step = frame * getattr(speech.model.encoder, "reduction", 1)
    source, target = Timings.from_dict(item["timings"]), Timings.from_dict(item["target_timings"])
    for tier in ("phones", "words"):
        try:
            errors = mapping_errors(frames, step, frame, source, target, tier)
        except ValueError:
            continue
        if errors:
            return {
                "mapping_ms": round(1000 * float(np.mean(np.abs(errors))), 3),
                "mapping_tier": tier,
            }
    return {}


def align_manifest(
    checkpoint: str | Path,
    manifest: str | Path,
    out_dir: str | Path,
    batch_size: int = 8,
    min_focus: float = 0.4,
    png: bool = True,
    device: str = "cpu",
    force: bool = False,
    chunk: int = 64,
    durations: str = "search",
    pauses: PauseRule = PauseRule(),
    audio_key: str = "audio",
) -> Summary:
    """Alignment of every item of `manifest` with a TTS or VC checkpoint (teacher-forced)
    or an alignment model's (its soft alignment, one row per frame: ``r = 1``).

    `out_dir` is refused when it is a file, or holds files and not `force`. Per item
    (files named after its id, confined to `out_dir`): durations JSON,
    TextGrid, weights .npy, heatmap PNG; then ``summary.json``. An item that cannot be
    aligned (no audio, unreadable audio, no text) is listed with its reason in
    ``Summary.bad`` and the others are aligned. TTS aligns tokens with frames; VC source
    positions (after the encoder's time reduction) with the target's frames. Items go `chunk` at a time: memory does not grow with the manifest. `durations`:
    ``search`` (frames) or ``argmax`` (multiples of r), see `aligner.alignment.record`.
    `audio_key`: which recording of each item is aligned (``target_audio``: the target
    voice of a parallel corpus, with an alignment model); an item without it is bad.
    """
    if durations not in ("search", "argmax"):
        raise InferenceError(f"durations must be search or argmax, got {durations!r}")
    from tqdm import tqdm

    out = Path(out_dir)
    check_output_folder(out, force)
    lines: list[BadLine] = []
    items = manifest_items(Path(manifest), "--in", bad=lines)
    if not items and lines:
        raise InferenceError(f"{lines[0].where}: {lines[0].reason} (no item can be read)")
    if audio_key != "audio":  # the other recording stands in for the item's audio
        items = [{**it, "audio": it.get(audio_key)} for it in items]
    names = output_names([it["id"] for it in items], str(manifest))
    speech = load_speech_model(checkpoint, "align", device)
    out.mkdir(parents=True, exist_ok=True)
    repeats = 0 if speech.role.repeats_suspect else None
    skips = 0 if speech.role.skips_suspect else None
    summary = Summary(SuspectThresholds(min_focus, max_skips=skips, max_repeats=repeats))
    for line in lines:
        summary.add_bad(line.where, line.reason)
    with tqdm(total=len(items), desc="aligning", unit="utt") as bar:
        for note in long_item_notes(items) + own_timing_note(speech, checkpoint):
            bar.write(note)
        for start in range(0, len(items), chunk):
            part = _readable(speech, items[start : start + chunk], manifest, summary, pauses)
            sources, targets = [f[0] for _, f in part], [f[1] for _, f in part]
            weights = speech.teacher_force(sources, targets, batch_size)
            for (k, (source, target, pause)), w in zip(part, weights):
                it = items[start + k]
                aligned = resolve(
                    _utterance(
                        speech, it, names[start + k], source, len(target), w, durations, pause
                    )
                )
                write_utterance(aligned, out, png=png, force=force)
                mapping = _mapping_ms(speech, it, aligned.frames)
                summary.add(it["id"], {**aligned.utt.metrics, **mapping})
            bar.update(len(items[start : start + chunk]))
    summary.take_guessed(speech)
    text = json.dumps(summary.to_dict(), indent=1) + "\n"
    write_atomic(out / "summary.json", lambda fh: fh.write(text), "w", encoding="utf-8")
    return summary


def own_timing_note(speech: SpeechModel, checkpoint: str | Path) -> list[str]:
    """A note where the model times a recording without reading it (a duration model:
    its predicted durations fitted to the recording's length, so noise and speech of one
    length give one timing, and its focus is 1 by construction)."""
    if not isinstance(speech, DurationDecoding):
        return []
    return [
        f"note: {checkpoint} is a duration model: what it writes is its own timing of each "
        "text (its predicted durations fitted to the recording's length), not read from the "
        "audio, and its focus and suspects say nothing of the audio; to time recordings, "
        "align with an alignment model (recipes/align/aligner.yaml)"
    ]


LONG_ITEM_SECONDS = 120.0  # an utterance longer than this is a recording for --long-form


def long_item_notes(items: list[dict], key: str = "audio") -> list[str]:
    """A note for each item whose audio lasts over `LONG_ITEM_SECONDS` (read from its
    header): aligned as one utterance its time and memory grow with the square of its
    length, where ``--long-form`` aligns a recording with its whole text window by
    window."""
    import soundfile

    notes = []
    for it in items:
        try:
            seconds = soundfile.info(str(it.get(key))).duration
        except (RuntimeError, TypeError, OSError):
            continue
        if seconds > LONG_ITEM_SECONDS:
            notes.append(
                f"note: {it['id']} is {seconds / 60:.1f} min long; aligned as one utterance its "
                "time and memory grow with the square of its length: `aligner align "
                "--long-form` aligns a recording with its whole text in far less"
            )
    return notes


def _readable(
    speech: SpeechModel, part: list[dict], manifest: str | Path, summary: Summary, pauses: PauseRule
) -> list:
    """[(index in `part`, (source, target, pauses))] of the items whose features can be
    made (`_features`); each other one goes to ``summary.bad`` with its reason."""
    out = []
    for k, it in enumerate(part):
        try:
            out.append((k, _features(speech, it, f"{manifest} item {it['id']}", pauses)))
        except (InferenceError, ValueError) as err:  # AudioError is a ValueError
            summary.add_bad(it["id"], str(err))
    return out
