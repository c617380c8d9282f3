"""A long recording's files and the recordings to read: `write_long` (the record, the
TextGrid, the durations of one recording), `align_long_items` (every recording of a
manifest, or one, aligned and written, with ``summary.json``), `long_items` (what
``aligner align --long-form`` reads) and `recordings_to_cut` (what ``aligner segment``
reads). The record's format: `aligner.inference.long_recording`."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from aligner.alignment.intervals import Interval
from aligner.alignment.record import RECORD_SUFFIX
from aligner.alignment.textgrid import write_textgrid
from aligner.audio.io import load_audio
from aligner.audio.trim import PauseRule
from aligner.data.manifest import BadLine, manifest_items
from aligner.files import write_atomic
from aligner.inference.alignment_files import Summary, SuspectThresholds
from aligner.inference.common import (
    InferenceError,
    check_output_folder,
    output_names,
    read_text_file,
    safe_name,
)
from aligner.inference.loading import load_speech_model
from aligner.inference.long_recording import align_long
from aligner.inference.longform import LongAlignment, LongFormSettings


def write_long(result: LongAlignment, out_dir: Path, force: bool = False) -> None:
    """``ID.durations.json``, ``ID.TextGrid`` (words, phones, mismatches) and
    ``durations/ID.npy`` of one long recording (existing files replaced only with `force`);
    the TextGrid has no tokens tier (the phones and the record's tokens say it)."""
    rec = result.record
    paths = [out_dir / f"{rec['id']}{RECORD_SUFFIX}", out_dir / f"{rec['id']}.TextGrid"]
    paths.append(out_dir / "durations" / f"{rec['id']}.npy")
    for path in paths if not force else []:
        if path.exists():
            raise FileExistsError(f"{path} exists; pass --force to overwrite it")
    text = json.dumps({**rec, "metrics": result.metrics}, indent=1, ensure_ascii=False) + "\n"
    write_atomic(paths[0], lambda fh: fh.write(text), "w", encoding="utf-8")
    tiers = {name: [Interval(*row) for row in rec[name]] for name in ("words", "phones")}
    tiers["mismatches"] = _merged(
        [
            _within(m["start"], m["end"], rec["total_seconds"], f"{m['kind']}: {m['text']}")
            for m in rec["mismatches"]
        ]
    )
    write_textgrid(tiers, rec["total_seconds"], paths[1])
    paths[2].parent.mkdir(parents=True, exist_ok=True)
    frames = np.asarray(rec["frames"], dtype=np.int64)
    write_atomic(paths[2], lambda fh: np.save(fh, frames))


def _within(start: float, end: float, total: float, label: str) -> Interval:
    """An interval of at least a millisecond (a sentence the audio lacks has no length)
    inside ``[0, total]``."""
    start = min(max(start, 0.0), total - 0.001)
    return Interval(start, min(max(end, start + 0.001), total), label)


def _merged(intervals: list[Interval]) -> list[Interval]:
    """`intervals` in time order with those that overlap merged (labels joined by `` | ``):
    a TextGrid tier's intervals may not overlap."""
    out: list[Interval] = []
    for iv in sorted(intervals, key=lambda iv: iv.start):
        if out and iv.start < out[-1].end:
            last = out[-1]
            out[-1] = Interval(last.start, max(last.end, iv.end), f"{last.label} | {iv.label}")
        else:
            out.append(iv)
    return out


def align_long_items(
    checkpoint: str | Path,
    items: list[dict[str, Any]],
    out_dir: str | Path,
    force: bool = False,
    device: str = "cpu",
    pauses: PauseRule = PauseRule(),
    settings: LongFormSettings = LongFormSettings(),
    bad_lines: Sequence[BadLine] = (),
) -> Summary:
    """Each item (``id``, ``audio``, ``text``: a whole recording and its text) aligned by
    `align_long` and written by `write_long` into `out_dir`, then ``summary.json`` (the
    metrics of each, its ``mismatches``); an item that cannot be aligned is listed as bad,
    and so is each of the manifest's `bad_lines` (`long_items`)."""
    out = Path(out_dir)
    check_output_folder(out, force)
    speech = load_speech_model(checkpoint, "align", device)
    if not speech.role.hard_alignment:
        raise InferenceError(
            f"{checkpoint}: long recordings are aligned with an alignment model (family "
            "forward_sum, recipes/align/aligner.yaml), not with a model that aligns by attention"
        )
    out.mkdir(parents=True, exist_ok=True)
    # a long recording's skips are a mean over sentences whose search kept every token:
    # its focus flags it; what the text and audio disagree on is in its mismatches
    summary = Summary(SuspectThresholds(max_skips=None, max_repeats=None))
    for line in bad_lines:
        summary.add_bad(line.where, line.reason)
    names = output_names([it["id"] for it in items], str(out))
    found: list[dict[str, Any]] = []
    for item, name in zip(items, names):
        try:
            if not item.get("text") or not item.get("audio"):
                raise InferenceError(f"item {item['id']}: give both audio and text")
            began, cpu = time.perf_counter(), time.process_time()
            wav = load_audio(item["audio"], speech.mel_cfg.sample_rate)[0]
            result = align_long(speech, wav, item["text"], name, pauses, settings)
            taken = time.perf_counter() - began
            result.metrics["seconds_taken"] = round(taken, 2)
            result.metrics["cpu_seconds"] = round(time.process_time() - cpu, 2)
            result.metrics["real_time_factor"] = round(
                len(wav) / speech.mel_cfg.sample_rate / taken, 1
            )
        except (InferenceError, ValueError) as err:
            summary.add_bad(item["id"], str(err) + _narrowband(item.get("audio"), speech.mel_cfg))
            continue
        write_long(result, out, force)
        row: dict[str, Any] = {**result.metrics, "mismatches": len(result.mismatches)}
        notes = list(result.notes)
        if result.mismatches and (note := _narrowband(item["audio"], speech.mel_cfg)):
            notes.append(note.strip(" ()").removeprefix("note: "))  # the band may be at fault
        if notes:
            row["note"] = "; ".join(notes)
        summary.add(item["id"], row)
        found += [{"id": item["id"], **m} for m in result.mismatches]
    summary.take_guessed(speech)
    body = {**summary.to_dict(), "mismatches": found}
    text = json.dumps(body, indent=1, ensure_ascii=False) + "\n"
    write_atomic(out / "summary.json", lambda fh: fh.write(text), "w", encoding="utf-8")
    return summary


def _narrowband(audio: str | None, cfg: Any) -> str:
    """A note for a recording whose sample rate cannot hold the band the model hears (8 kHz
    telephone audio for a model of mels up to 8 kHz); else nothing."""
    import soundfile

    try:
        rate = soundfile.info(str(audio)).samplerate
    except (RuntimeError, TypeError, OSError):
        return ""
    top = cfg.f_max or cfg.sample_rate / 2
    if rate / 2 >= 0.9 * top:
        return ""
    return (
        f" (note: its audio is {rate} Hz, so it holds nothing above {rate // 2} Hz, and the "
        f"model learnt from sound up to {top:.0f} Hz: align it with a model trained on audio "
        "of its band)"
    )


def long_items(
    manifest: Path | None,
    audio: Path | None,
    text: Path | None,
    bad: list[BadLine] | None = None,
) -> list[dict[str, Any]]:
    """The recordings to align: a manifest's items, or one recording (`audio`) with its text
    file (`text`, UTF-8), named after the audio file. `bad`: gets the manifest's lines that
    are no item (`aligner.data.manifest.read_manifest_items`), which are then no error; an
    item without audio or text is `align_long_items`' to report."""
    if manifest is not None:
        if audio is not None or text is not None:
            raise InferenceError("give a manifest (--in) or --audio and --text, not both")
        keys = () if bad is not None else ("audio", "text")
        return manifest_items(Path(manifest), "--in", keys, bad=bad)
    if audio is None or text is None:
        raise InferenceError("give --audio FILE and --text FILE (or a manifest with --in)")
    if not Path(audio).is_file():
        raise InferenceError(f"--audio {audio} does not exist")
    words = read_text_file(Path(text), "--text")
    if not words.strip():
        raise InferenceError(f"--text {text} is empty: give the recording's whole text")
    return [{"id": Path(audio).stem, "audio": str(audio), "text": words}]


def recordings_to_cut(
    manifest: Path | None,
    alignments: Path | None,
    audio: Path | None,
    alignment: Path | None,
    bad: list[BadLine] | None = None,
) -> list[tuple[str, Path, dict[str, Any]]]:
    """``(name, audio, record)`` of each recording: a manifest's items (``id``, ``audio``)
    with their records in `alignments` (``ID.durations.json``), or one `audio` file with
    its `alignment` record; ValueError (one line) for what is missing. With a manifest,
    `bad` gets each line that is no item, item without audio and recording without a
    readable record (the others are cut)."""
    if manifest is not None:
        if audio is not None or alignment is not None:
            raise ValueError("give a manifest (--in) or --audio and --alignment, not both")
        if alignments is None:
            raise ValueError("--in needs --alignments DIR (what aligner align --long-form wrote)")
        if not Path(alignments).is_dir():
            raise ValueError(
                f"--alignments {alignments} does not exist: give the folder that aligner "
                "align --long-form wrote"
            )
        bad = [] if bad is None else bad
        found = []
        for item in manifest_items(Path(manifest), "--in", bad=bad):
            path = Path(alignments) / f"{safe_name(item['id'])}.durations.json"
            try:
                if not item.get("audio"):
                    raise ValueError("no audio")
                found.append((safe_name(item["id"]), Path(item["audio"]), _record(path)))
            except ValueError as err:
                bad.append(BadLine(str(item["id"]), str(err)))
        if not found:
            first = f": first {bad[0].where}: {bad[0].reason}" if bad else ""
            raise ValueError(f"--in {manifest}: no recording to cut{first}")
        return found
    if audio is None or alignment is None:
        raise ValueError("give --audio FILE and --alignment FILE (or --in and --alignments)")
    for path, option in ((audio, "--audio"), (alignment, "--alignment")):
        if not Path(path).is_file():
            raise ValueError(f"{option} {path} does not exist{_written_as(Path(path))}")
    return [(safe_name(Path(audio).stem), Path(audio), _record(Path(alignment)))]


def _written_as(path: Path) -> str:
    """A hint for a record path that does not exist but whose `safe_name` does (``aligner
    align`` names ``My Chapter.wav``'s record ``My_Chapter.durations.json``); else ''."""
    if not path.name.endswith(RECORD_SUFFIX):
        return ""
    stem = path.name[: -len(RECORD_SUFFIX)]
    written = path.with_name(safe_name(stem) + RECORD_SUFFIX)
    if written == path or not written.is_file():
        return ""
    return f"; aligner align wrote its record as {written}"


def _record(path: Path) -> dict[str, Any]:
    """The long-form durations record at `path`; ValueError naming it when it is missing,
    not JSON or no such record."""
    if not path.is_file():
        raise ValueError(f"no {path}; align it with aligner align --long-form")
    try:
        record = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path} is no durations record (not JSON: {err})") from None
    if not isinstance(record, dict) or "words" not in record or "total_seconds" not in record:
        raise ValueError(f"{path} is no durations record (no words)")
    problem = _record_problem(record)
    if problem:
        raise ValueError(
            f"{path} is no durations record ({problem}); give the ID.durations.json that "
            "aligner align --long-form wrote"
        )
    return record


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _record_problem(record: dict[str, Any]) -> str:
    """What makes `record` no long-form durations record that `aligner segment` can cut
    (its words in time order within the recording, its mismatches and sentences with
    their times), or ''."""
    total = record["total_seconds"]
    if not _number(total) or total <= 0:
        return f"total_seconds is {total!r}"
    words = record["words"]
    if not isinstance(words, list) or not words:
        return "its words are no list of [start, end, word]"
    last = 0.0
    for k, word in enumerate(words, 1):
        if not (isinstance(word, list) and len(word) == 3 and isinstance(word[2], str)):
            return f"word {k} is {word!r}, not [start, end, word]"
        start, end = word[0], word[1]
        if not (_number(start) and _number(end) and last - 1e-3 <= start <= end):
            return f"word {k} {word!r} is not in time order"
        if end > total + 0.05:
            return f"word {k} {word!r} ends after the recording's {total} s"
        last = start
    for key, fields in (("mismatches", ("start", "end", "kind", "text")), ("sentences", ("text",))):
        rows = record.get(key, [])
        if not isinstance(rows, list) or not all(
            isinstance(r, dict) and all(f in r for f in fields) for r in rows
        ):
            return f"{key} is no list of objects with {', '.join(fields)}"
    for m in record.get("mismatches", []):
        if not (_number(m["start"]) and _number(m["end"]) and m["start"] <= m["end"]):
            return f"mismatch {m!r} has no start and end in seconds"
    for s in record.get("sentences", []):
        if not isinstance(s["text"], str) or not all(
            s.get(k) is None or _number(s[k]) for k in ("start", "end")
        ):
            return f"sentence {s!r} has no text or times in seconds"
    return ""
