"""A long recording and its alignment -> an utterance corpus (``aligner segment``): how
LJSpeech was cut from LibriVox chapters.

The words of the alignment (`aligner align --long-form`'s record: ``words`` in the
recording's time, its ``sentences`` and ``mismatches``) are grouped into *phrases*: runs
of words with no pause of ``min_pause`` seconds between them. Consecutive phrases are
packed into utterances of at most ``max_seconds``; the audio is cut in the middle of the
pauses between them (at most ``pad`` seconds of silence kept on each side). An
utterance never holds a word that a mismatch of the alignment touches (or abuts, within
20 ms: a word said without a pause before unexplained audio may be the wrong word's
first half; a whole sentence the audio lacks touches none), nor crosses a mismatch:
those spans are left out, and so is a phrase longer than ``max_seconds`` (no pause to
cut at) and an utterance shorter than ``min_seconds``; each is listed with its span and
reason. Each utterance's text is the text's own words (with their punctuation), sentence
by sentence; a sentence whose aligned words are not its written ones one for one (a
number said as several words) goes whole into one utterance or into none.

Written: ``wavs/ID.wav`` (the recording's sample rate), ``{train,valid,test}.jsonl``
(``id, audio, text, speaker, duration, recording, recording_start, recording_end,
aligned_words``: the alignment's words in the utterance's time, not reference timings)
and ``summary.json`` (figures and the spans left out): `aligner train` reads it as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.audio.io import load_audio, write_audio_array
from aligner.data.manifest import BadLine
from aligner.data.prepare.common import (
    PrepareSummary,
    check_outputs,
    empty_split_warnings,
    split_items,
    write_corpus,
)
from aligner.files import make_folder

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


@dataclass
class Labels:
    """Each word's text (None: its sentence's words do not match the text's one for one,
    as when a number is said as several words) and, for such a sentence, its text and its
    words (`sentence_labels`)."""

    words: list[str | None]
    whole: dict[int, tuple[str, list[int]]]  # first word -> (sentence text, its words)

    def _sentence(self, i: int) -> list[int]:
        """The words of the sentence that unlabelled word `i` belongs to."""
        return next(ws for ws in (w for _, w in self.whole.values()) if i in ws)

    def trimmed(self, group: list[int]) -> list[int]:
        """`group` without the words at either end that belong to a sentence it holds only
        part of and that `text` cannot give its words' text."""
        inside = set(group)

        def partial(i: int) -> bool:
            return self.words[i] is None and not inside.issuperset(self._sentence(i))

        lo, hi = 0, len(group)
        while lo < hi and partial(group[lo]):
            lo += 1
        while hi > lo and partial(group[hi - 1]):
            hi -= 1
        return group[lo:hi]

    def text(self, group: list[int]) -> str | None:
        """The text of the words of `group`; None where it holds part of a sentence whose
        words cannot be given their text one by one."""
        inside, out = set(group), []
        for i in group:
            label = self.words[i]
            if label is not None:
                out.append(label)
            elif not inside.issuperset(self._sentence(i)):
                return None
            elif i in self.whole:  # the sentence's first word stands for all of it
                out.append(self.whole[i][0])
        return " ".join(out)


def sentence_labels(record: dict[str, Any]) -> Labels:
    """The text's own spelling of each word of `record` (punctuation kept), sentence by
    sentence: a sentence whose whitespace-separated words match its aligned words in number
    gives them their text; another (``$3.50``: "three dollars and fifty cents") is given
    its text whole, to an utterance that holds all of it."""
    words = record["words"]
    said = [s for s in record.get("sentences", []) if s.get("start") is not None]
    written = [w for s in said for w in s["text"].split()]
    if len(written) == len(words):  # every sentence's words are its text's
        return Labels(list(written), {})
    labels: list[str | None] = [w[2] for w in words]
    whole: dict[int, tuple[str, list[int]]] = {}
    for sentence in said:
        members = _members(sentence, words)
        own = sentence["text"].split()
        if not members:
            continue
        if len(own) == len(members):
            for i, label in zip(members, own):
                labels[i] = label
        else:
            for i in members:
                labels[i] = None
            whole[members[0]] = (" ".join(own), members)
    return Labels(labels, whole)


def _members(sentence: dict[str, Any], words: list) -> list[int]:
    """The indices of a sentence's words: the record's ``words`` range where it gives one
    (a word may start before the span the search found the sentence in), else the words
    whose middle lies in its span."""
    span = sentence.get("words")
    if isinstance(span, list) and len(span) == 2 and 0 <= span[0] <= span[1] <= len(words):
        return list(range(span[0], span[1]))
    lo, hi = sentence["start"] - 0.01, sentence["end"] + 0.01
    return [i for i, w in enumerate(words) if lo <= (w[0] + w[1]) / 2 <= hi]


def phrases(record: dict[str, Any], rules: SegmentRules) -> tuple[list[list[int]], list[dict]]:
    """``(phrases, left_out)``: runs of word indices with no long pause inside and no word a
    mismatch touches, an empty run where a mismatch lies between two (no utterance spans
    it); `left_out`: the mismatches' spans and reasons."""
    words = record["words"]
    bad = [(m["start"], m["end"]) for m in record.get("mismatches", [])]
    # a whole sentence the audio lacks: its span is the gap between the words beside it,
    # which it leaves whole (they are no part of it), though no utterance crosses it
    unheard = {s["text"] for s in record.get("sentences", []) if s.get("start") is None}
    heard = [
        (m["start"], m["end"])
        for m in record.get("mismatches", [])
        if not (m["kind"] == "text not in the audio" and m["text"] in unheard)
    ]
    left = [
        {"start": m["start"], "end": m["end"], "reason": f"{m['kind']}: {m['text']}"}
        for m in record.get("mismatches", [])
    ]

    def touched(i: int) -> bool:  # or abuts one: no pause tells where the bad stretch began
        s, e = words[i][0], words[i][1]
        return any(bs < e + ABUTS and be > s - ABUTS for bs, be in heard)

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
        out.append((*bounds(words, group, rules, total), group))
    return out, sorted(left, key=lambda s: s["start"])


LENGTH_SLACK = 0.1  # s: a record and its audio may differ by a frame or two, not more


def _check_length(audio: Path, seconds: float, record: dict[str, Any]) -> None:
    """ValueError when `audio` is not as long as the recording `record` aligned."""
    total = float(record["total_seconds"])
    if abs(seconds - total) > LENGTH_SLACK:
        raise ValueError(
            f"{audio} is {seconds:.2f} s long, but its alignment covers {total:.2f} s: "
            "give the recording that was aligned"
        )


def bounds(words: list, group: list[int], rules: SegmentRules, total: float) -> tuple[float, float]:
    """Where the utterance of the words `group` is cut: at most ``pad`` seconds of silence
    before and after it, never past the middle of the pause beside it."""
    start, end = words[group[0]][0], words[group[-1]][1]
    before = words[group[0] - 1][1] if group[0] > 0 else 0.0
    after = words[group[-1] + 1][0] if group[-1] + 1 < len(words) else total
    lo = max(start - rules.pad, (before + start) / 2, 0.0)
    return lo, min(end + rules.pad, (end + after) / 2, total)


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
    bad: Sequence[BadLine] = (),
) -> PrepareSummary:
    """Cut each ``(name, audio, record)`` into utterances in `out_dir` (see the module
    docstring); a recording whose audio cannot be read or is not as long as its record
    says is a bad item, as is each of `bad` (what could not be paired with a record)."""
    rules.check()
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    summary = PrepareSummary("segment", out_dir)
    items, left_out, seconds = [], [], 0.0
    for line in bad:
        summary.bad.add(line.where, line.reason)
    readable = 0
    for name, audio, record in pairs:
        try:  # mono at its own rate; empty, truncated or non-audio files named
            samples, rate = load_audio(audio, min_samples=0)
            wav = samples.numpy()
            _check_length(audio, len(wav) / rate, record)
        except (OSError, RuntimeError, ValueError) as err:  # AudioError is a ValueError
            summary.bad.add(name, str(err).splitlines()[0] if str(err) else type(err).__name__)
            continue
        readable += 1
        labels = sentence_labels(record)
        cuts, left = utterances(record, rules)
        left_out += [{"recording": name, **s} for s in left]
        for n, (lo, hi, group) in enumerate(cuts):
            text = labels.text(group)
            kept = labels.trimmed(group) if text is None else group
            if text is None and kept:
                lo2, hi2 = bounds(record["words"], kept, rules, float(record["total_seconds"]))
                if hi2 - lo2 >= rules.min_seconds:
                    lo, hi, group, text = lo2, hi2, kept, labels.text(kept)
            if text is None:
                left_out.append({
                    "recording": name, "start": round(lo, 4), "end": round(hi, 4),
                    "reason": "part of a sentence whose words the alignment says differently "
                    "from its text (a number or abbreviation as several words); its text "
                    "goes only with the whole sentence (a larger --max-seconds)",
                })  # fmt: skip
                continue
            uid = f"{name}_{n:05d}"
            path = out_dir / "wavs" / f"{uid}.wav"
            make_folder(path.parent)  # not for a run that cuts nothing
            write_audio_array(path, wav[int(lo * rate) : int(hi * rate)], rate)  # full disk: 1 line
            timed = [
                [round(record["words"][i][0] - lo, 5), round(record["words"][i][1] - lo, 5), record["words"][i][2]]
                for i in group
            ]  # fmt: skip
            items.append({
                "id": uid, "audio": str(path), "text": text,
                "speaker": speaker or name, "duration": round(hi - lo, 4),
                "recording": name, "recording_start": round(lo, 4), "recording_end": round(hi, 4),
                "aligned_words": timed,
            })  # fmt: skip
            seconds += hi - lo
    if not items and not readable:
        first = f": first {summary.bad.items[0]}" if summary.bad else ""
        raise ValueError(f"no recording could be cut ({len(summary.bad)} bad){first}")
    if not items:
        first = f" ({summary.bad.items[0]})" if summary.bad else ""
        if not first and left_out:  # why the first span was left out
            s = left_out[0]
            first = f" ({s['recording']} {s['start']:.2f}-{s['end']:.2f} s: {s['reason']})"
        raise ValueError(
            "no utterance within the length range: see --min-seconds, --max-seconds, "
            "--min-pause" + first
        )
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
    splits = split_items(items, seed=seed)
    summary.warnings += empty_split_warnings(splits, "utterance(s)")
    return write_corpus(out_dir, splits, summary)
