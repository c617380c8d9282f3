"""A long recording's alignment put together (`aligner.inference.longform` finds the
pieces): one durations record for the whole recording with its ``mismatches``
(`aligner.inference.long_files` writes it, its TextGrid and ``summary.json``).

The whole recording's record has the fields of an utterance's
(`aligner.alignment.record`): ``tokens`` and ``frames`` run over every piece (a sentence's
tokens, ``<s>`` and ``</s>`` included; a gap between sentences one ``" "`` token), summing
to the recording's frames; ``words`` and ``phones`` in the recording's time. It adds
``sentences`` (each ``{"text", "start", "end"}``, seconds; None for a sentence the audio
does not hold) and ``mismatches``: ``{"kind", "start", "end", "text"}`` with ``kind`` one
of ``text not in the audio`` (a sentence; its span is the gap where it would be; the
words after the end of a recording that stops inside a sentence, at that end; the words
before the start of one that begins inside its first sentence, at that start; two words
or more of a sentence that its audio lacks, at the gap between the words beside them,
the sentence aligned again without them; a sentence most of whose words are far from what
its audio says, `not_said`, that audio then not in the text), ``audio not in the text``
(speech that no sentence holds, or steady sound such as music before
it: `aligner.inference.longform.steady_sound`), ``word unlike its audio`` (a word
the model finds far likelier elsewhere: a wrong word in the text or the audio) and ``word
the model cannot read`` (`aligner.inference.unreadable`: its span is the audio it stands
for). `aligner.inference.mismatches` finds them and aligns a sentence with a wrong word.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, NamedTuple

import numpy as np
import torch

from aligner.alignment.longform import attach_extra, hold_edge_words
from aligner.alignment.neighbours import keep_neighbours, longest_phones
from aligner.alignment.tiers import optional_tokens, word_runs
from aligner.audio.trim import PauseRule
from aligner.inference.common import InferenceError
from aligner.inference.left_out import drop_margin, leave_out, left_out_words, sentence_drop
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
    steady_sound,
)
from aligner.inference.mismatches import (
    as_filler,
    confined,
    edge_words,
    heard_part,
    mismatch,
    missing_text,
    not_said,
    phone_ids,
    read_instead,
    sentence_record,
    silent_words,
    unread_words,
    word_margin,
    wrong_words,
)
from aligner.inference.passed_over import found_in_extra
from aligner.inference.unreadable import readable_text
from aligner.text.normalize import has_words
from aligner.text.sentences import split_sentences

# characters: a longer sentence (text without sentence punctuation: a transcript, lyrics)
# is aligned in clauses of at most this many, so that the coarse search's window holds one
LONGEST_SENTENCE = 600
# seconds: the inside of a longer silence is left out of the mel statistics (a quarter of
# this kept at each end, as an utterance the model learnt from keeps some; Festival's 24
# wrong-word recordings without their wrong word: 9 words reported, against 22 with every
# frame counted and 22 with 2 s, half a second kept)
LONG_SILENCE = 1.0
SILENT_PEAK = 1e-4  # a recording whose loudest sample is below this (-80 dBFS) is silent
# seconds: audio the text does not hold, at most EDGE_RUN long and at most EDGE_PAUSE past a
# sentence's last word (or before its first) that is unlike its audio, is taken to be that
# word's (`hold_edge_words`)
EDGE_PAUSE, EDGE_RUN = 1.0, 2.5


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
    cfg = speech.mel_cfg
    sec = cfg.hop_length / cfg.sample_rate
    # a sentence of no words (a scene break ``* * *``, a lone ``...``) is nothing said
    sentences = [s for s in split_sentences(text, LONGEST_SENTENCE) if has_words(s)]
    if not sentences:
        raise InferenceError("its text has no words to align (give the words it says)")
    readable = readable_text(speech, sentences)
    tokens = _sentence_tokens(speech, readable.ids)
    if (max(float(wav.max()), -float(wav.min())) if wav.numel() else 0.0) < SILENT_PEAK:
        raise InferenceError("the recording is silent: there is no speech to align")
    mel = chunked_mel(speech, wav)
    total = len(mel)
    pauses = pause_rule.frames(wav, cfg.sample_rate, cfg.hop_length, total)
    sound = ~pauses if pauses is not None else np.ones(total, bool)
    counted = ordinary_frames(pauses, int(round(LONG_SILENCE / sec)))
    scorer = FrameScorer(speech, mel, counted)
    steady = steady_sound(scorer.mel[0].numpy(), sound, sec)
    if steady.any():  # music or a hum: normalized over the speech alone
        counted = ~steady if counted is None else counted & ~steady
        scorer = FrameScorer(speech, mel, counted)
    del mel
    spans, skipped, extra, passed, cut, begun = coarse_pass(
        speech, scorer, tokens, sound, settings, steady
    )
    spans, skipped, extra = found_in_extra(  # a sentence the audio lacks words of
        scorer,
        tokens,
        (spans, skipped, extra),
        ~sound | steady,
        settings.filler_margin,
        settings.word_margin,
    )
    last, heard, lacked = cut[0] if cut else -1, None, None
    if cut is not None:  # the recording stops inside this sentence: align what it holds
        heard = heard_part(speech, sentences[last], cut[1])
    if heard is not None:
        sentences = [*sentences[:last], heard[0], *sentences[last + 1 :]]
        read_instead(speech, readable, tokens, last, heard[2])
        if last in passed:  # words passed over that the text read now still holds
            n = len(tokens[last][1])
            passed[last] = [word for word in passed[last] if word[1] < n]
    if begun is not None and (heard is None or last != 0):  # it begins inside sentence 1
        whole = len(word_runs(optional_tokens(tokens[0][1])))
        lacked = heard_part(speech, sentences[0], whole - begun, begins=True)
    if lacked is not None:
        before = tokens[0][1]
        sentences = [lacked[0], *sentences[1:]]
        read_instead(speech, readable, tokens, 0, lacked[2])
        passed[0] = _after_head(passed.get(0, []), before, tokens[0][1])
    min_extra = int(settings.min_extra_seconds / sec)
    spans, extra = attach_extra(spans, extra, pauses, min_extra)
    if not spans:
        raise _found_nowhere(len(sentences))
    fine = _FinePass(
        speech, wav, name, readable.texts, tokens, pauses, pause_rule, window, readable.unread
    )
    rec, mismatches, metrics, edges, drops, unsaid = fine.run(
        spans, extra, passed, scorer, settings, find_drops=True
    )
    as_written = list(sentences)
    left_out = leave_out(speech, drops, sentences, readable, tokens, passed)
    if left_out:  # aligned again without the words their audio lacks
        rec, mismatches, metrics, edges, _, unsaid = fine.run(
            spans, extra, passed, scorer, settings
        )
    in_part = {last} if heard is not None else set()  # a cut sentence: aligned in part
    if lacked is not None:
        in_part.add(0)
    unsaid = [k for k in unsaid if k not in in_part]
    if unsaid:  # a sentence the text says in place of what its audio says: both reported
        if len(unsaid) == len(spans):
            raise _found_nowhere(len(sentences))
        for k in unsaid:
            extra = _audio_in_place(spans, extra, k, total)
            skipped.append(k)
            passed.pop(k, None)
            left_out.pop(k, None)
            sentences[k] = as_written[k]
        extra.sort()
        skipped.sort()
        rec, mismatches, metrics, edges, _, _ = fine.run(spans, extra, passed, scorer, settings)
    pause, run = int(round(EDGE_PAUSE / sec)), int(round(EDGE_RUN / sec))
    spans, extra, held = hold_edge_words(spans, extra, edges, pause, run, set(skipped))
    if held:  # a wrong first or last word beside a pause: held to the audio beyond it
        for k, words in held.items():  # in place of what the coarse search held it to
            firsts = {w[0] for w in words}
            passed[k] = [p for p in passed.get(k, []) if p[0] not in firsts] + words
        rec, mismatches, metrics, *_ = fine.run(spans, extra, passed, scorer, settings, held)
    longest = longest_phones(rec["phones"])
    for wrong in mismatches:  # a wrong word's neighbours keep their own sound
        span = keep_neighbours(rec["words"], rec["phones"], (wrong["start"], wrong["end"]), longest)
        wrong["start"], wrong["end"] = round(span[0], 3), round(span[1], 3)
    mismatches += [mismatch(1, s * sec, e * sec, "") for s, e in extra]
    mismatches += missing_text(skipped, sentences, spans, sec)
    mismatches += left_out_words(left_out, rec, total * sec)
    if heard is not None:
        mismatches.append(mismatch(0, total * sec, total * sec, heard[1]))
    if lacked is not None:
        mismatches.append(mismatch(0, 0.0, 0.0, lacked[1]))
    mismatches += silent_words(rec["words"], pauses, sec, mismatches)
    record = _record(name, rec, total, cfg, sentences, spans, mismatches)
    keys = metrics[0].keys() if metrics else ()
    mean = {k: round(float(np.mean([m[k] for m in metrics])), 6) for k in keys}
    notes = cut_notes(None if pauses is None else pauses | steady, int(round(CUT_EDGE / sec)))
    if heard is not None:
        notes = [n for n in notes if not n.startswith("it ends")]
        notes.append(
            f"it ends inside sentence {last + 1}, after {heard[0].split()[-1]!r}: its last "
            f"words ({heard[1][:40]!r}) are not in the audio"
        )
    if lacked is not None:
        notes = [n for n in notes if not n.startswith("it begins")]
        notes.append(
            f"it begins inside sentence 1, before {lacked[0].split()[0]!r}: its first "
            f"words ({lacked[1][-40:]!r}) are not in the audio"
        )
    if readable.left_out:
        notes.append(f"left out of its text, as no word: {' '.join(readable.left_out[:8])}")
    return LongAlignment(record, record["mismatches"], mean, notes)


def _audio_in_place(
    spans: dict[int, tuple[int, int]], extra: list[tuple[int, int]], k: int, total: int
) -> list[tuple[int, int]]:
    """`extra` (frames) with sentence `k`'s span taken out of `spans` (in place) and made
    one run with the audio the text does not hold between the sentences beside it: the
    audio that says something else in its place."""
    start, end = spans.pop(k)
    lo = max((b for j, (_, b) in spans.items() if j < k), default=0)
    hi = min((a for j, (a, _) in spans.items() if j > k), default=total)
    near = [run for run in extra if run[0] >= lo and run[1] <= hi]
    start, end = min([start, *(a for a, _ in near)]), max([end, *(b for _, b in near)])
    return [run for run in extra if run not in near] + [(start, end)]


def _found_nowhere(n: int) -> InferenceError:
    """The error of a recording in whose audio none of the `n` sentences of its text is."""
    return InferenceError(
        f"none of the {n} sentences of its text was found in its audio: does the text "
        "belong to this recording (and the model to its language)?"
    )


def _after_head(
    passed: list[tuple[int, int, int, int]], before: list[str], after: list[str]
) -> list[tuple[int, int, int, int]]:
    """The words passed over of a sentence whose first words were left out (`passed`, their
    tokens counted in its tokens `before`), counted in its tokens `after`, which end as
    `before` does; none where the text read now is not the end of the text read before."""
    shift = len(before) - len(after)
    if shift < 0 or before[shift:] != after:
        return []
    return [(a - shift, b - shift, s, e) for a, b, s, e in passed if a >= shift]


CUT_EDGE = 0.05  # seconds of sound, no pause, at a recording's edge: it may be cut there


def cut_notes(pauses: np.ndarray | None, edge: int) -> list[str]:
    """A note for each end of a recording that is sound up to its last `edge` frames
    (`pauses`: the pause frames, and any other frames that are no speech): a recording cut
    in the middle of a sentence forces that sentence's missing words into the audio it
    has, which no word score shows."""
    if pauses is None or len(pauses) < 2 * edge or edge < 1:
        return []
    ends = [("begins", pauses[:edge]), ("ends", pauses[-edge:])]
    return [
        f"it {which} in speech, with no pause: the recording may be cut in a sentence, whose "
        "words aligned there may not be in it"
        for which, frames in ends
        if not frames.any()
    ]


class Joined(NamedTuple):
    """What a fine pass gives (`_joined`): the recording's record, its mismatches, each
    sentence's metrics, the first and last words unlike their audio by sentence
    (`edge_words`), the runs of words the audio lacks by sentence (with ``find_drops``)
    and the sentences not said (`not_said`)."""

    record: dict[str, list]
    mismatches: list[dict[str, Any]]
    metrics: list[dict[str, float]]
    edges: dict[int, list]
    drops: dict[int, tuple[int, int]]
    unsaid: list[int]


@dataclasses.dataclass(frozen=True)
class _FinePass:
    """The fine pass over one recording (see `aligner.inference.longform`): each sentence
    of `spans` aligned in its piece, the pieces joined (`_joined`); `sentences` as the
    model reads them, `unread` the words it cannot (`aligner.inference.unreadable`)."""

    speech: Any
    wav: torch.Tensor
    name: str
    sentences: list[str]
    tokens: list[tuple[torch.Tensor, list[str]]]
    pauses: np.ndarray | None
    pause_rule: PauseRule
    window: WindowAligner
    unread: dict[int, dict[int, str]] = dataclasses.field(default_factory=dict)

    def run(
        self,
        spans: dict[int, tuple[int, int]],
        extra: list[tuple[int, int]],
        passed: dict[int, list[tuple[int, int, int, int]]],
        scorer: FrameScorer,
        settings: LongFormSettings,
        held: Collection[int] = (),
        find_drops: bool = False,
    ) -> Joined:
        """`_joined`'s record, mismatches, metrics, wrong edge words, (with `find_drops`)
        runs of words the audio lacks, and sentences not said, of the sentences at `spans`
        (frames) with the audio `extra` between them; the sentences `held` have their
        words `passed` over held to their audio whatever their scores."""
        cfg = self.speech.mel_cfg
        sec, hop, total = cfg.hop_length / cfg.sample_rate, cfg.hop_length, len(scorer)
        parts = pieces(
            spans, extra, self.sentences, total, self.pauses, round(1.0 / sec), round(0.2 / sec)
        )
        said = [part for part in parts if part.text is not None]
        for part in said:  # the search gives every phone a frame at least
            needed = int((~optional_tokens(self.tokens[part.index][1])).sum())
            if needed > part.end - part.start:
                raise InferenceError(
                    f"sentence {part.index + 1} ({self.sentences[part.index][:40]!r}) has "
                    f"{needed} phones but was found in {part.end - part.start} frames of "
                    "audio: the text says far more than the recording; check that they "
                    "belong together"
                )
        wav = self.wav
        wavs = [
            wav[part.start * hop : len(wav) if part.end == total else part.end * hop]
            for part in said
        ]
        names = [f"{self.name} sentence {part.index + 1}" for part in said]
        texts = [part.text for part in said]
        aligned = self.window(self.speech, wavs, texts, names, self.pause_rule)
        return _joined(
            self.speech,
            parts,
            aligned,
            passed,
            scorer,
            settings,
            sec,
            held,
            self.unread,
            self.pauses,
            find_drops,
        )


def ordinary_frames(pauses: np.ndarray | None, long: int) -> np.ndarray | None:
    """``(T,)`` bool: the frames of a recording but the inside of its silences longer than
    `long` frames (their first and last quarter of `long` kept, as an utterance keeps
    some silence at its edges); None without pauses (every frame)."""
    if pauses is None:
        return None
    keep = np.ones(len(pauses), bool)
    edge = max(1, long // 4)
    t = 0
    while t < len(pauses):
        if not pauses[t]:
            t += 1
            continue
        end = t
        while end < len(pauses) and pauses[end]:
            end += 1
        if end - t > long:
            keep[t + edge : end - edge] = False
        t = end
    return keep


def _joined(
    speech: Any,
    parts: list,
    aligned: list,
    passed: dict[int, list[tuple[int, int, int, int]]],
    scorer: FrameScorer,
    settings: LongFormSettings,
    sec: float,
    held: Collection[int] = (),
    unread: dict[int, dict[int, str]] | None = None,
    pauses: np.ndarray | None = None,
    find_drops: bool = False,
) -> Joined:
    """The pieces of a recording joined into one record's tokens, frames, words and phones
    (each sentence's alignment `aligned`, in order, shifted to its piece; a piece without
    text one filler token), the words unlike their audio, each sentence's metrics and its
    first and last word where they are unlike their audio (`edge_words`, by sentence). A
    sentence with a word unlike its audio, or one of `held`, is aligned again with the words
    the coarse search passed over (`passed`, by sentence) held to their audio
    (`confined`), then, with a word still unlike its audio, with the least like it scored
    as a filler (`as_filler`). The words the model cannot read (`unread`, by sentence:
    ``{word: the word}``) are scored as fillers from the start, never taken for words
    unlike their audio, labelled with their own text and reported. With `find_drops`, the
    run of words its audio lacks of each sentence that has no such word (`sentence_drop`
    over its piece's ``pauses``): ``{sentence: (first word, end word)}``; and the
    sentences that are not what their audio says (`not_said`)."""
    unread = unread or {}
    rec: dict[str, list] = {
        "tokens": [],
        "frames": [],
        "words": [],
        "phones": [],
        "sentence_words": [],
    }
    edges: dict[int, list[tuple[int, int, bool]]] = {}
    drops: dict[int, tuple[int, int]] = {}
    mismatches: list[dict[str, Any]] = []
    metrics: list[dict[str, float]] = []
    said = [part for part in parts if part.text is not None]
    scored = {}  # sentence -> (its alignment, record, log-probabilities, word scores)
    for part, utt in zip(said, aligned):
        lp, own = None, unread.get(part.index, {})
        ids = speech.encode_text(part.text) if settings.word_margin > 0 or own else None
        if settings.word_margin > 0:
            lp = scorer.log_probs(ids, part.start, part.end)
        if own:  # a stand-in takes the audio its sentence's tokens do not explain
            gain = scorer.unexplained(ids, phone_ids(speech), part.start, part.end)
            utt = as_filler(utt, own, settings.filler_margin, gain)
        one, scores = sentence_record(utt, lp, own)
        scored[part.index] = (utt, one, lp, scores)
    every = [score for *_, scores in scored.values() for score in scores]
    unsaid = [k for k, (*_, scores) in scored.items() if not_said(scores, every)]
    margin = word_margin(every, settings.word_margin)
    lacking = drop_margin(every)
    for part in parts:
        n = part.end - part.start
        if part.text is None:
            rec["tokens"].append(" ")
            rec["frames"].append(n)
            continue
        utt, one, lp, scores = scored[part.index]
        offset, end = part.start * sec, part.end * sec
        wrong = wrong_words(scores, one, offset, margin)
        own = unread.get(part.index, {})
        if find_drops and not own:  # words its audio lacks: it is aligned again without
            pause = None if pauses is None else pauses[part.start : part.end]
            run = sentence_drop(utt.tokens, lp, pause, lacking)
            if run is not None:
                drops[part.index] = run
        if wrong:
            edges[part.index] = edge_words(utt.tokens, scores, margin)
        if (wrong or part.index in held) and passed.get(part.index):
            utt = confined(utt, passed[part.index], part.start)
            one, scores = sentence_record(utt, lp, own)
            wrong = wrong_words(scores, one, offset, margin)
        if wrong:  # the word least like its audio (below the margin) as a filler
            filler = as_filler(utt, [int(np.argmin(scores))], settings.filler_margin)
            one, scores = sentence_record(filler, lp, own)
            wrong = wrong_words(scores, one, offset, margin)
        metrics.append(utt.metrics)
        mismatches += wrong + unread_words(one, own, offset)
        first = len(rec["words"])
        for tier in ("words", "phones"):
            rec[tier] += [
                [round(s + offset, 6), round(min(e + offset, end), 6), lab]
                for s, e, lab in one.get(tier, [])
                if s + offset < end
            ]
        rec["sentence_words"].append((part.index, first, len(rec["words"])))
        rec["tokens"] += one["tokens"]
        rec["frames"] += _fit(one["frames"], n)
    return Joined(rec, mismatches, metrics, edges, drops, unsaid)


def _record(
    name: str,
    rec: dict[str, list],
    total: int,
    cfg: Any,
    sentences: list[str],
    spans: dict[int, tuple[int, int]],
    mismatches: list[dict[str, Any]],
) -> dict[str, Any]:
    """The durations record of a whole recording (`aligner.alignment.record`'s, plus its
    ``sentences`` and its ``mismatches`` in time order). A sentence found spans its words
    (``words``: their indices ``[first, end)``), which the fine pass may have put a little
    before or after the coarse search's span (`attach_extra`, `hold_edge_words`)."""
    sec = cfg.hop_length / cfg.sample_rate
    own = {k: (a, b) for k, a, b in rec["sentence_words"] if b > a}
    words = rec["words"]
    frames = np.asarray(rec["frames"])
    starts = np.concatenate([[0], np.cumsum(frames)[:-1]])
    return {
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
            _sentence_span(s, k, spans, own, words, sec) for k, s in enumerate(sentences)
        ],
        "mismatches": sorted(mismatches, key=lambda m: (m["start"], m["kind"])),
    }


def _sentence_span(
    text: str,
    k: int,
    spans: dict[int, tuple[int, int]],
    own: dict[int, tuple[int, int]],
    words: list,
    sec: float,
) -> dict[str, Any]:
    """Sentence `k`'s entry: its text, and where found, the span of its words and their
    indices (the coarse span where it has none)."""
    if k not in spans:
        return {"text": text, "start": None, "end": None}
    if k not in own:
        return {"text": text, "start": spans[k][0] * sec, "end": spans[k][1] * sec}
    a, b = own[k]
    return {"text": text, "start": words[a][0], "end": words[b - 1][1], "words": [a, b]}


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
