"""A long recording's alignment put together and written (`aligner.inference.longform`
finds the pieces): one durations record and TextGrid for the whole recording, its
``mismatches`` (also a TextGrid tier), and ``summary.json``.

The whole recording's record has the fields of an utterance's
(`aligner.alignment.record`): ``tokens`` and ``frames`` run over every piece (a sentence's
tokens, ``<s>`` and ``</s>`` included; a gap between sentences one ``" "`` token), summing
to the recording's frames; ``words`` and ``phones`` in the recording's time. It adds
``sentences`` (each ``{"text", "start", "end"}``, seconds; None for a sentence the audio
does not hold) and ``mismatches``: ``{"kind", "start", "end", "text"}`` with ``kind`` one
of ``text not in the audio`` (a sentence; its span is the gap where it would be), ``audio
not in the text`` (speech that no sentence holds) and ``word unlike its audio`` (a word
the model finds far likelier elsewhere: a wrong word in the text or the audio).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.alignment.intervals import Interval
from aligner.alignment.record import durations_record
from aligner.alignment.textgrid import write_textgrid
from aligner.audio.trim import PauseRule
from aligner.files import write_atomic
from aligner.inference.alignment_files import Summary, SuspectThresholds
from aligner.inference.longform import (
    FrameScorer,
    LongAlignment,
    LongFormSettings,
    WindowAligner,
    _sentence_tokens,
    align_windows,
    chunked_mel,
    coarse_pass,
    pieces,
    word_scores,
)

KINDS = ("text not in the audio", "audio not in the text", "word unlike its audio")


def align_long(
    speech: Any,
    wav: torch.Tensor,
    text: str,
    name: str,
    pause_rule: PauseRule = PauseRule(),
    settings: LongFormSettings = LongFormSettings(),
    window: WindowAligner = align_windows,
) -> LongAlignment:
    """The alignment of recording `wav` with its whole `text` (see the module docstrings)."""
    from aligner.inference.common import InferenceError
    from aligner.text.sentences import raw_sentences

    cfg = speech.mel_cfg
    sec = cfg.hop_length / cfg.sample_rate
    sentences = raw_sentences(text)
    if not sentences:
        raise InferenceError(f"{name}: its text has no sentences to align")
    tokens = _sentence_tokens(speech, sentences)
    mel = chunked_mel(speech, wav)
    total = len(mel)
    pauses = pause_rule.frames(wav, cfg.sample_rate, cfg.hop_length, total)
    sound = ~pauses if pauses is not None else np.ones(total, bool)
    scorer = FrameScorer(speech, mel)
    del mel
    spans, skipped, extra = coarse_pass(speech, scorer, tokens, sound, settings)
    if not spans:
        raise InferenceError(
            f"none of the {len(sentences)} sentences of its text was found in its "
            "audio: does the text belong to this recording (and the model to its language)?"
        )
    parts = pieces(spans, extra, sentences, total, pauses, int(round(1.0 / sec)))
    rec: dict[str, Any] = {"tokens": [], "frames": [], "words": [], "phones": []}
    mismatches = [_mismatch(1, s * sec, e * sec, "") for s, e in extra]
    metrics: list[dict[str, float]] = []
    said = [part for part in parts if part.text is not None]
    wavs = [
        wav[
            part.start * cfg.hop_length : len(wav)
            if part.end == total
            else part.end * cfg.hop_length
        ]
        for part in said
    ]
    names = [f"{name} sentence {part.index + 1}" for part in said]
    aligned = iter(window(speech, wavs, [part.text for part in said], names, pause_rule))
    for part in parts:
        n = part.end - part.start
        if part.text is None:
            rec["tokens"].append(" ")
            rec["frames"].append(n)
            continue
        utt = next(aligned)
        one = durations_record(utt)
        metrics.append(utt.metrics)
        offset, end = part.start * sec, part.end * sec
        for tier in ("words", "phones"):
            rec[tier] += [
                [round(s + offset, 6), round(min(e + offset, end), 6), lab]
                for s, e, lab in one.get(tier, [])
                if s + offset < end
            ]
        rec["tokens"] += one["tokens"]
        rec["frames"] += _fit(one["frames"], n)
        if settings.word_margin > 0:
            lp = scorer.log_probs(speech.encode_text(part.text), part.start, part.end)
            mismatches += _wrong_words(lp, utt.tokens, one, offset, settings.word_margin)
    mismatches += _missing_text(skipped, sentences, spans, sec)
    frames = np.asarray(rec["frames"])
    starts = np.concatenate([[0], np.cumsum(frames)[:-1]])
    record = {
        "id": name,
        "method": "search",
        "tokens": rec["tokens"],
        "frames": frames.tolist(),
        "start_seconds": [round(float(s) * sec, 6) for s in starts],
        "seconds": [round(float(f) * sec, 6) for f in frames],
        "total_frames": int(total),
        "total_seconds": round(total * sec, 6),
        "hop_length": cfg.hop_length,
        "sample_rate": cfg.sample_rate,
        "r": 1,
        "words": rec["words"],
        "phones": rec["phones"],
        "sentences": [
            {"text": s, "start": spans[k][0] * sec if k in spans else None,
             "end": spans[k][1] * sec if k in spans else None}
            for k, s in enumerate(sentences)
        ],
        "mismatches": sorted(mismatches, key=lambda m: (m["start"], m["kind"])),
    }  # fmt: skip
    keys = metrics[0].keys() if metrics else ()
    mean = {k: round(float(np.mean([m[k] for m in metrics])), 6) for k in keys}
    return LongAlignment(record, record["mismatches"], mean)


def _mismatch(kind: int, start: float, end: float, text: str) -> dict[str, Any]:
    return {"kind": KINDS[kind], "start": round(start, 3), "end": round(end, 3), "text": text}


def _fit(frames: list[int], n: int) -> list[int]:
    """`frames` made to sum to `n` (a piece's mel has a frame more than its share: the
    frame centred on its end), taken from or given to its last tokens."""
    out = list(frames)
    diff = sum(out) - n
    j = len(out) - 1
    while diff > 0 and j >= 0:
        take = min(diff, out[j])
        out[j] -= take
        diff -= take
        j -= 1
    if diff < 0:
        out[-1] -= diff
    return out


def _wrong_words(
    log_probs: np.ndarray, tokens: list[str], one: dict[str, Any], offset: float, margin: float
) -> list[dict[str, Any]]:
    """The words of one sentence whose frames the model finds `margin` nats (summed)
    likelier on other tokens (`word_scores`; its log-probabilities without the prior)."""
    scores = word_scores(log_probs, tokens, one["frames"])
    return [
        {**_mismatch(2, s + offset, e + offset, label), "score": round(score, 2)}
        for (s, e, label), score in zip(one.get("words", []), scores)
        if score < -margin
    ]


def _missing_text(
    skipped: list[int], sentences: list[str], spans: dict[int, tuple[int, int]], sec: float
) -> list[dict[str, Any]]:
    """A mismatch per sentence the audio does not hold, spanning the gap between the
    sentences aligned before and after it."""
    out = []
    for k in skipped:
        before = [spans[j][1] for j in spans if j < k]
        after = [spans[j][0] for j in spans if j > k]
        start = max(before, default=0) * sec
        end = min(after, default=max(before, default=0)) * sec
        out.append(_mismatch(0, start, max(start, end), sentences[k]))
    return out


def write_long(result: LongAlignment, out_dir: Path, force: bool = False) -> None:
    """``ID.durations.json``, ``ID.TextGrid`` (words, phones, mismatches) and
    ``durations/ID.npy`` of one long recording (existing files replaced only with `force`);
    the TextGrid has no tokens tier (the phones and the record's tokens say it)."""
    from aligner.alignment.record import RECORD_SUFFIX

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
) -> Summary:
    """Each item (``id``, ``audio``, ``text``: a whole recording and its text) aligned by
    `align_long` and written by `write_long` into `out_dir`, then ``summary.json`` (the
    metrics of each, its ``mismatches``); an item that cannot be aligned is listed as bad."""
    from aligner.audio.io import load_audio
    from aligner.inference.common import InferenceError, check_output_folder, output_names
    from aligner.inference.loading import load_speech_model

    out = Path(out_dir)
    check_output_folder(out, force)
    speech = load_speech_model(checkpoint, None, device)
    if speech.task != "align":
        raise InferenceError(
            f"{checkpoint}: long recordings are aligned with an alignment model (task align), "
            f"not a {speech.task} checkpoint"
        )
    out.mkdir(parents=True, exist_ok=True)
    summary = Summary(SuspectThresholds(max_repeats=None))
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
            summary.add_bad(item["id"], str(err))
            continue
        write_long(result, out, force)
        summary.add(item["id"], {**result.metrics, "mismatches": len(result.mismatches)})
        found += [{"id": item["id"], **m} for m in result.mismatches]
    body = {**summary.to_dict(), "mismatches": found}
    text = json.dumps(body, indent=1, ensure_ascii=False) + "\n"
    write_atomic(out / "summary.json", lambda fh: fh.write(text), "w", encoding="utf-8")
    return summary


def long_items(
    manifest: Path | None, audio: Path | None, text: Path | None
) -> list[dict[str, Any]]:
    """The recordings to align: a manifest's items, or one recording (`audio`) with its text
    file (`text`, UTF-8), named after the audio file."""
    from aligner.inference.common import InferenceError, manifest_items, read_text_file

    if manifest is not None:
        if audio is not None or text is not None:
            raise InferenceError("give a manifest (--in) or --audio and --text, not both")
        return manifest_items(Path(manifest), "--in", ("audio", "text"))
    if audio is None or text is None:
        raise InferenceError("give --audio FILE and --text FILE (or a manifest with --in)")
    if not Path(audio).is_file():
        raise InferenceError(f"--audio {audio} does not exist")
    return [
        {"id": Path(audio).stem, "audio": str(audio), "text": read_text_file(Path(text), "--text")}
    ]


def recordings_to_cut(
    manifest: Path | None, alignments: Path | None, audio: Path | None, alignment: Path | None
) -> list[tuple[str, Path, dict[str, Any]]]:
    """``(name, audio, record)`` of each recording: a manifest's items (``id``, ``audio``)
    with their records in `alignments` (``ID.durations.json``), or one `audio` file with
    its `alignment` record; ValueError (one line) for what is missing."""
    from aligner.inference.common import manifest_items, safe_name

    if manifest is not None:
        if alignments is None:
            raise ValueError("--in needs --alignments DIR (what aligner align --long-form wrote)")
        found = []
        for item in manifest_items(Path(manifest), "--in", ("audio",)):
            path = Path(alignments) / f"{safe_name(item['id'])}.durations.json"
            if not path.is_file():
                raise ValueError(
                    f"{item['id']}: no {path}; align it with aligner align --long-form"
                )
            found.append(
                (safe_name(item["id"]), Path(item["audio"]), json.loads(path.read_text("utf-8")))
            )
        return found
    if audio is None or alignment is None:
        raise ValueError("give --audio FILE and --alignment FILE (or --in and --alignments)")
    for path, option in ((audio, "--audio"), (alignment, "--alignment")):
        if not Path(path).is_file():
            raise ValueError(f"{option} {path} does not exist")
    record = json.loads(Path(alignment).read_text("utf-8"))
    if "words" not in record or "total_seconds" not in record:
        raise ValueError(f"--alignment {alignment} is no durations record (no words)")
    return [(safe_name(Path(audio).stem), Path(audio), record)]
