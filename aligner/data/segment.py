"""A long recording and its alignment -> an utterance corpus (``aligner segment``): how
LJSpeech was cut from LibriVox chapters.

The words of the alignment (`aligner align --long-form`'s record: ``words`` in the
recording's time, its ``sentences`` and ``mismatches``) are grouped into *phrases*: runs
of words with no pause of ``min_pause`` seconds between them. Consecutive phrases are
packed into utterances of at most ``max_seconds``; the audio is cut in the middle of the
pauses between them (at most ``pad`` seconds of silence kept on each side). An
utterance never holds a word that a mismatch of the alignment touches (or abuts, within
20 ms: a word said without a pause before unexplained audio may be the wrong word's
first half), nor crosses a mismatch: those spans are left out, and so is a phrase longer than ``max_seconds`` (no
pause to cut at) and an utterance shorter than ``min_seconds``; each is listed with its
span and reason. Each utterance's text is the text's own words (with their punctuation)
when the record's words can be matched to the sentences' words, else the record's labels.

Written: ``wavs/ID.wav`` (the recording's sample rate), ``{train,valid,test}.jsonl``
(``id, audio, text, speaker, duration, recording, recording_start, recording_end,
aligned_words``: the alignment's words in the utterance's time, not reference timings)
and ``summary.json`` (figures and the spans left out): `aligner train` reads it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.data.prepare.common import PrepareSummary, check_outputs, split_items, write_corpus

ABUTS = 0.02  # s: a word this close to a mismatch, with no pause between, is touched by it


@dataclass(frozen=True)
class SegmentRules:
    """Seconds: the shortest and longest utterance, the shortest pause to cut at, the most
    silence kept at each edge."""

    min_seconds: float = 1.0
    max_seconds: float = 15.0
    min_pause: float = 0.2
    pad: float = 0.15

    def check(self) -> None:
        if not 0 < self.min_seconds < self.max_seconds:
            raise ValueError(
                f"need 0 < --min-seconds < --max-seconds, got {self.min_seconds} and {self.max_seconds}"
            )
        if self.min_pause <= 0 or self.pad < 0:
            raise ValueError("--min-pause must be above 0 and --pad at least 0")


def _labels(record: dict[str, Any]) -> list[str]:
    """The text's own spelling of each word of `record` (punctuation kept), where the
    whitespace-separated words of its aligned sentences match its words in number."""
    said = [s["text"] for s in record.get("sentences", []) if s.get("start") is not None]
    written = [w for s in said for w in s.split()]
    words = record["words"]
    return written if len(written) == len(words) else [w[2] for w in words]


def phrases(record: dict[str, Any], rules: SegmentRules) -> tuple[list[list[int]], list[dict]]:
    """``(phrases, left_out)``: runs of word indices with no long pause inside and no word a
    mismatch touches, an empty run where a mismatch lies between two (no utterance spans
    it); `left_out`: the mismatches' spans and reasons."""
    words = record["words"]
    bad = [(m["start"], m["end"]) for m in record.get("mismatches", [])]
    left = [
        {"start": m["start"], "end": m["end"], "reason": f"{m['kind']}: {m['text']}"}
        for m in record.get("mismatches", [])
    ]

    def touched(i: int) -> bool:  # or abuts one: no pause tells where the bad stretch began
        s, e = words[i][0], words[i][1]
        return any(bs < e + ABUTS and be > s - ABUTS for bs, be in bad)

    def crossed(i: int, j: int) -> bool:  # a mismatch between two words
        return any(words[i][1] - 0.05 <= bs and be <= words[j][0] + 0.05 for bs, be in bad)

    out: list[list[int]] = []
    for i in range(len(words)):
        if touched(i) or (i and crossed(i - 1, i)):
            out.append([])
            if touched(i):
                continue
        pause = words[i][0] - words[i - 1][1] if i else 0.0
        if not out or not out[-1] or pause >= rules.min_pause:
            out.append([i])
        else:
            out[-1].append(i)
    return out, left


def utterances(
    record: dict[str, Any], rules: SegmentRules
) -> tuple[list[tuple[float, float, list[int]]], list[dict]]:
    """``([(start s, end s, word indices)], left_out)``: the utterances to cut (see the
    module docstring) and every span left out with its reason."""
    words, total = record["words"], record["total_seconds"]
    groups, left = phrases(record, rules)
    packed: list[list[int]] = []
    for group in groups:
        if not group:  # a mismatch: no utterance spans it
            packed.append([])
            continue
        length = words[group[-1]][1] - words[group[0]][0]
        if length > rules.max_seconds:
            left.append(_span(words, group, "no pause to cut at within --max-seconds"))
            packed.append([])
            continue
        joinable = packed and packed[-1] and words[packed[-1][-1]][1] <= words[group[0]][0]
        if joinable and words[group[-1]][1] - words[packed[-1][0]][0] <= rules.max_seconds:
            if _adjacent(packed[-1], group):
                packed[-1] = packed[-1] + group
                continue
        packed.append(list(group))
    out = []
    for group in (p for p in packed if p):
        start, end = words[group[0]][0], words[group[-1]][1]
        if end - start < rules.min_seconds:
            left.append(_span(words, group, "shorter than --min-seconds"))
            continue
        before = words[group[0] - 1][1] if group[0] > 0 else 0.0
        after = words[group[-1] + 1][0] if group[-1] + 1 < len(words) else total
        lo = max(start - rules.pad, (before + start) / 2, 0.0)
        hi = min(end + rules.pad, (end + after) / 2, total)
        out.append((lo, hi, group))
    return out, sorted(left, key=lambda s: s["start"])


def _adjacent(a: list[int], b: list[int]) -> bool:
    """Whether phrase `b` follows phrase `a` with no word left out between them."""
    return b[0] == a[-1] + 1


def _span(words: list, group: list[int], reason: str) -> dict[str, Any]:
    return {"start": words[group[0]][0], "end": words[group[-1]][1], "reason": reason}


def segment_recordings(
    pairs: list[tuple[str, Path, dict[str, Any]]],
    out_dir: Path,
    rules: SegmentRules = SegmentRules(),
    speaker: str | None = None,
    seed: int = 0,
    force: bool = False,
) -> PrepareSummary:
    """Cut each ``(name, audio, record)`` into utterances in `out_dir` (see the module
    docstring)."""
    import soundfile

    rules.check()
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    (out_dir / "wavs").mkdir(parents=True, exist_ok=True)
    summary = PrepareSummary("segment", out_dir)
    items, left_out, seconds = [], [], 0.0
    for name, audio, record in pairs:
        wav, rate = soundfile.read(str(audio), dtype="float32", always_2d=False)
        labels = _labels(record)
        cuts, left = utterances(record, rules)
        left_out += [{"recording": name, **s} for s in left]
        for n, (lo, hi, group) in enumerate(cuts):
            uid = f"{name}_{n:05d}"
            path = out_dir / "wavs" / f"{uid}.wav"
            soundfile.write(str(path), wav[int(lo * rate) : int(hi * rate)], rate)
            timed = [
                [round(record["words"][i][0] - lo, 5), round(record["words"][i][1] - lo, 5), record["words"][i][2]]
                for i in group
            ]  # fmt: skip
            items.append({
                "id": uid, "audio": str(path), "text": " ".join(labels[i] for i in group),
                "speaker": speaker or name, "duration": round(hi - lo, 4),
                "recording": name, "recording_start": round(lo, 4), "recording_end": round(hi, 4),
                "aligned_words": timed,
            })  # fmt: skip
            seconds += hi - lo
    if not items:
        raise ValueError("no utterance within the length range: see --min-seconds, --max-seconds")
    summary.figures = {
        "recordings": len(pairs),
        "utterances": len(items),
        "hours": round(seconds / 3600, 4),
        "seconds": f"{min(i['duration'] for i in items):.2f}-{max(i['duration'] for i in items):.2f}",
        "left_out": len(left_out),
    }
    summary.warnings += [
        f"{s['recording']} {s['start']:.2f}-{s['end']:.2f} s left out: {s['reason']}"
        for s in left_out
    ]
    return write_corpus(out_dir, split_items(items, seed=seed), summary)
