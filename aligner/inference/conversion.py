"""`aligner convert` as a library call: one audio file, a folder or a manifest of them in,
converted WAV files out.

A batch finishes every good item: an input that cannot be read is named (id and reason)
in the run's ``bad`` list and in ``OUT/summary.json``, and the others are converted.
A long recording is converted in pieces cut at its silences (at most
`MAX_PIECE_SECONDS` each), so memory is bounded by a piece, not by the file.

    run = convert("exp/vc/checkpoints/best.pt", Path("in/"), Path("out/"))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from aligner.attention.plot import save_alignment_panels
from aligner.audio.io import load_audio, save_audio
from aligner.audio.trim import split_at_silences
from aligner.data.manifest import (
    ManifestError,
    read_manifest,
    read_manifest_items,
    write_manifest,
)
from aligner.files import write_atomic
from aligner.inference.common import (
    AUDIO_SUFFIXES,
    InferenceError,
    check_audio_out,
    output_names,
    unused_window,
)
from aligner.inference.loading import load_speech_model
from aligner.inference.speech import MelSpeechModel
from aligner.inference.synthesis import (
    Decoding,
    SpeechRun,
    check_outputs,
    length_warnings,
    make_folders,
    mel_paths,
    pace_of,
    refuse_existing,
    save_mel_config,
    write_mel,
)
from aligner.inference.vocoders import load_vocoder

MAX_PIECE_SECONDS = 20.0


def conversion_inputs(src: Path, bad: list[str] | None = None) -> tuple[list[dict], bool]:
    """(items with ``id`` and ``audio``, several?) for an audio file, a folder of audio
    files or a JSON Lines manifest. Items without ``audio`` stay in the list (they are
    reported as bad, the others converted). `bad`: a batch's list, which gets the
    manifest's lines that are no item (``FILE:LINE: reason``) instead of an error for
    them; an error all the same when no line is an item."""
    if not src.exists():
        raise InferenceError(f"--in {src} does not exist")
    if src.is_dir():
        files = sorted(p for p in src.iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
        if not files:
            raise InferenceError(f"--in {src} holds no audio files ({', '.join(AUDIO_SUFFIXES)})")
        return [{"id": p.stem, "audio": str(p)} for p in files], True
    if src.suffix in (".jsonl", ".json"):
        try:
            items = read_manifest(src) if bad is None else _good_items(src, bad)
        except (ManifestError, ValueError) as err:
            raise InferenceError(str(err).splitlines()[0]) from None
        if not items and not bad:
            raise InferenceError(f"--in {src} holds no items; give a manifest with some")
        return [{**it, "id": str(it.get("id", n))} for n, it in enumerate(items, 1)], True
    return [{"id": src.stem, "audio": str(src)}], False


def _good_items(src: Path, bad: list[str]) -> list[dict]:
    """The items of the manifest `src`; its bad lines go to `bad` (ManifestError when no
    line is an item)."""
    items, lines = read_manifest_items(src)
    if lines and not items:
        raise ManifestError(f"{lines[0].where}: {lines[0].reason} (no item can be read)")
    bad.extend(f"{line.where}: {line.reason}" for line in lines)
    return items


def conversion_outputs(items: list[dict], src: Path, out: Path, many: bool) -> list[Path]:
    """The WAV each item is written to, inside `out`; InferenceError before any work when
    `out` is the wrong kind of path or two items would write the same file."""
    if many:
        if out.exists() and not out.is_dir():
            raise InferenceError(f"--out {out} is a file; give a folder for several inputs")
        check_audio_out(out, many, "several inputs")
        return [out / f"{name}.wav" for name in output_names([i["id"] for i in items], str(src))]
    if out.is_dir():
        raise InferenceError(f"--out {out} is a folder; give a file name (OUT.wav) for one input")
    check_audio_out(out, many, "several inputs")
    return [out]


@dataclass
class _Pending:
    """An item being converted: its output, the pieces still to come, the waves so far."""

    index: int
    path: Path
    pieces: int
    mel_path: Path | None = None
    waves: list[torch.Tensor] = field(default_factory=list)
    mels: list[torch.Tensor] = field(default_factory=list)
    alignments: list[torch.Tensor] = field(default_factory=list)
    hit_max: bool = False


class _Converter:
    """Pieces of several items decoded `batch_size` at a time; an item is written as soon
    as its last piece is vocoded."""

    def __init__(self, speech: MelSpeechModel, decoding: Decoding, keep_alignments: bool) -> None:
        self.speech, self.decoding, self.keep = speech, decoding, keep_alignments
        self.vocoder = load_vocoder(
            decoding.vocoder,
            speech.mel_cfg,
            griffin_lim_iters=decoding.griffin_lim_iters,
            device=speech.device,
        )
        self.pace = pace_of(speech, decoding)
        self.queue: list[tuple[_Pending, torch.Tensor]] = []
        self.done: list[_Pending] = []

    def add(self, item: _Pending, mels: list[torch.Tensor]) -> None:
        self.queue += [(item, m) for m in mels]
        while len(self.queue) >= self.decoding.batch_size:
            self.flush(self.decoding.batch_size)

    def flush(self, size: int | None = None) -> None:
        group, self.queue = self.queue[:size], self.queue[len(self.queue[:size]) :]
        if not group:
            return
        d = self.decoding
        results = self.speech.generate(
            [m for _, m in group], d.batch_size, d.max_length_ratio, d.window, **self.pace
        )
        for (item, _), r in zip(group, results):
            item.waves.append(self.vocoder(r.mel))
            item.hit_max |= r.hit_max
            if item.mel_path is not None:
                item.mels.append(r.mel)
            if self.keep:
                item.alignments.append(r.alignment.float())
            if len(item.waves) == item.pieces:
                self._write(item)

    def _write(self, item: _Pending) -> None:
        save_audio(item.path, torch.cat(item.waves), self.vocoder.features.sample_rate)
        if item.mel_path is not None:
            write_mel(item.mel_path, torch.cat(item.mels))
        item.waves, item.mels = [], []
        self.done.append(item)


def _source_pieces(speech: MelSpeechModel, audio: str, max_seconds: float) -> list[torch.Tensor]:
    """Normalized source mels (S, M) of a recording's pieces (cut at silences)."""
    sr = speech.mel_cfg.sample_rate
    wav, _ = load_audio(audio, sr, min_samples=speech.mel_cfg.win_length)
    return [speech.source_mel(wav[a:b]) for a, b in split_at_silences(wav, sr, max_seconds)]


def convert(
    checkpoint: Path,
    src: Path,
    out: Path,
    alignment: Path | None = None,
    decoding: Decoding = Decoding(max_length_ratio=3.0),
    device: str = "cpu",
    force: bool = False,
    save_mel: Path | None = None,
    max_piece_seconds: float = MAX_PIECE_SECONDS,
) -> SpeechRun:
    """Convert one audio file (to the WAV `out`), or a folder or manifest of them (into the
    folder `out`, with ``manifest.jsonl`` of the converted items and ``summary.json``
    counting good and bad ones), with a VC checkpoint. Every output is checked before
    the model is loaded; bad inputs are listed in ``SpeechRun.bad``. `save_mel`: a
    folder for the predicted mels (``NAME.npy``, as the WAV's name)."""
    bad: list[str] = []
    items, many = conversion_inputs(src, bad)
    if many and alignment is not None:
        raise InferenceError("--alignment needs a single input file; omit it for folders")
    outs = conversion_outputs(items, src, out, many)
    extra = [out / "manifest.jsonl", out / "summary.json"] if many else []
    mels = mel_paths(save_mel, [p.stem for p in outs])
    refuse_existing([*outs, alignment, *extra, *mels], force)
    check_outputs([*outs, alignment, *extra, *mels], [alignment] if alignment else [])
    make_folders([alignment, *mels, *outs, *extra])  # the side outputs first
    torch.manual_seed(decoding.seed)
    speech = load_speech_model(checkpoint, "convert", device, decoding.precision)
    converter = _Converter(speech, decoding, alignment is not None)
    for index, (item, path) in enumerate(zip(items, outs)):
        mel_path = mels[index] if mels else None
        if not item.get("audio"):
            bad.append(f"{item['id']}: no 'audio' in the manifest item")
            continue
        try:
            pieces = _source_pieces(speech, item["audio"], max_piece_seconds)
        except (InferenceError, ValueError) as err:  # AudioError is a ValueError
            if not many:
                raise InferenceError(str(err)) from None
            bad.append(f"{item['id']}: {err}")
            continue
        converter.add(_Pending(index, path, len(pieces), mel_path), pieces)
    converter.flush()
    if mels:
        save_mel_config(save_mel, speech)
    done = sorted(converter.done, key=lambda p: p.index)
    if alignment is not None and done:
        _save_alignments(speech, done[0].alignments, alignment, force)
    if many:
        _write_batch_files(out, [items[p.index] for p in done], [p.path for p in done], bad)
    names = [str(items[p.index]["id"]) for p in done]
    warnings = length_warnings(names, done, decoding.max_length_ratio, "input")
    window = speech.decoding_window(decoding.window)
    warnings += unused_window(decoding.window, window)
    return SpeechRun([p.path for p in done], [], names, speech.step, warnings, bad, window)


def _save_alignments(
    speech: MelSpeechModel, alignments: list[torch.Tensor], path: Path, force: bool
) -> None:
    """One panel per piece of the recording (a short one has one)."""
    titles = [f"piece {k}" for k in range(1, len(alignments) + 1)] if len(alignments) > 1 else None
    cfg = speech.mel_cfg
    save_alignment_panels(
        alignments,
        path,
        titles=titles,
        force=force,
        r=speech.r,
        hop_length=cfg.hop_length,
        sample_rate=cfg.sample_rate,
    )


def _write_batch_files(out: Path, items: list[dict], paths: list[Path], bad: list[str]) -> None:
    """``manifest.jsonl`` of the converted items and ``summary.json`` (counts, bad items)."""
    out.mkdir(parents=True, exist_ok=True)
    converted = [
        {**it, "audio": str(p), "source_audio": it["audio"]} for it, p in zip(items, paths)
    ]
    write_manifest(out / "manifest.jsonl", converted)
    summary = {"converted": len(items), "bad": len(bad), "bad_items": bad}
    text = json.dumps(summary, indent=1) + "\n"
    write_atomic(out / "summary.json", lambda fh: fh.write(text), "w", encoding="utf-8")
