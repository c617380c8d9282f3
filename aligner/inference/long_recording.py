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
words after the end of a recording that stops inside a sentence, at that end), ``audio
not in the text`` (speech that no sentence holds, or steady sound such as music before
it: `aligner.inference.longform.steady_sound`), ``word unlike its audio`` (a word
the model finds far likelier elsewhere: a wrong word in the text or the audio) and ``word
the model cannot read`` (`aligner.inference.unreadable`: its span is the audio it stands
for).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any

import numpy as np
import torch

from aligner.alignment.longform import attach_extra, hold_edge_words
from aligner.alignment.neighbours import keep_neighbours, longest_phones
from aligner.alignment.record import UtteranceAlignment, resolve
from aligner.alignment.tiers import optional_tokens, word_runs
from aligner.audio.trim import PauseRule
from aligner.inference.common import InferenceError
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
    word_scores,
)
from aligner.inference.unreadable import ReadableText, readable_text
from aligner.text.normalize import has_words
from aligner.text.sentences import split_sentences

KINDS = (
    "text not in the audio",
    "audio not in the text",
    "word unlike its audio",
    "word the model cannot read",
)
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
    spans, skipped, extra, passed, cut = coarse_pass(
        speech, scorer, tokens, sound, settings, steady
    )
    last, heard = cut[0] if cut else -1, None
    if cut is not None:  # the recording stops inside this sentence: align what it holds
        heard = _heard_part(speech, sentences[last], cut[1])
    if heard is not None:
        sentences = [*sentences[:last], heard[0], *sentences[last + 1 :]]
        _read_instead(speech, readable, tokens, last, heard[2])
        if last in passed:  # words passed over that the text read now still holds
            n = len(tokens[last][1])
            passed[last] = [word for word in passed[last] if word[1] < n]
    min_extra = int(settings.min_extra_seconds / sec)
    spans, extra = attach_extra(spans, extra, pauses, min_extra)
    if not spans:
        raise InferenceError(
            f"none of the {len(sentences)} sentences of its text was found in its "
            "audio: does the text belong to this recording (and the model to its language)?"
        )
    fine = _FinePass(
        speech, wav, name, readable.texts, tokens, pauses, pause_rule, window, readable.unread
    )
    rec, mismatches, metrics, edges = fine.run(spans, extra, passed, scorer, settings)
    pause, run = int(round(EDGE_PAUSE / sec)), int(round(EDGE_RUN / sec))
    spans, extra, held = hold_edge_words(spans, extra, edges, pause, run, set(skipped))
    if held:  # a wrong first or last word beside a pause: held to the audio beyond it
        for k, words in held.items():  # in place of what the coarse search held it to
            firsts = {w[0] for w in words}
            passed[k] = [p for p in passed.get(k, []) if p[0] not in firsts] + words
        rec, mismatches, metrics, _ = fine.run(spans, extra, passed, scorer, settings, held)
    longest = longest_phones(rec["phones"])
    for wrong in mismatches:  # a wrong word's neighbours keep their own sound
        span = keep_neighbours(rec["words"], rec["phones"], (wrong["start"], wrong["end"]), longest)
        wrong["start"], wrong["end"] = round(span[0], 3), round(span[1], 3)
    mismatches += [_mismatch(1, s * sec, e * sec, "") for s, e in extra]
    mismatches += _missing_text(skipped, sentences, spans, sec)
    if heard is not None:
        mismatches.append(_mismatch(0, total * sec, total * sec, heard[1]))
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
    if readable.left_out:
        notes.append(f"left out of its text, as no word: {' '.join(readable.left_out[:8])}")
    return LongAlignment(record, record["mismatches"], mean, notes)


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
    ) -> tuple[dict[str, list], list[dict[str, Any]], list[dict[str, float]], dict[int, list]]:
        """`_joined`'s record, mismatches, metrics and wrong edge words of the sentences
        found at `spans` (frames) with the audio `extra` between them; the sentences
        `held` have their words `passed` over held to their audio whatever their scores."""
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
            self.speech, parts, aligned, passed, scorer, settings, sec, held, self.unread
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
) -> tuple[dict[str, list], list[dict[str, Any]], list[dict[str, float]], dict[int, list]]:
    """The pieces of a recording joined into one record's tokens, frames, words and phones
    (each sentence's alignment `aligned`, in order, shifted to its piece; a piece without
    text one filler token), the words unlike their audio, each sentence's metrics and its
    first and last word where they are unlike their audio (`_edge_words`, by sentence). A
    sentence with a word unlike its audio, or one of `held`, is aligned again with the words
    the coarse search passed over (`passed`, by sentence) held to their audio
    (`_confined`), then, with a word still unlike its audio, with the least like it scored
    as a filler (`_as_filler`). The words the model cannot read (`unread`, by sentence:
    ``{word: the word}``) are scored as fillers from the start, never taken for words
    unlike their audio, labelled with their own text and reported."""
    unread = unread or {}
    rec: dict[str, list] = {
        "tokens": [],
        "frames": [],
        "words": [],
        "phones": [],
        "sentence_words": [],
    }
    edges: dict[int, list[tuple[int, int, bool]]] = {}
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
            gain = scorer.unexplained(ids, _phone_ids(speech), part.start, part.end)
            utt = _as_filler(utt, own, settings.filler_margin, gain)
        one, scores = _sentence(utt, lp, own)
        scored[part.index] = (utt, one, lp, scores)
    every = [score for *_, scores in scored.values() for score in scores]
    margin = word_margin(every, settings.word_margin)
    for part in parts:
        n = part.end - part.start
        if part.text is None:
            rec["tokens"].append(" ")
            rec["frames"].append(n)
            continue
        utt, one, lp, scores = scored[part.index]
        offset, end = part.start * sec, part.end * sec
        wrong = _wrong_words(scores, one, offset, margin)
        if wrong:
            edges[part.index] = _edge_words(utt.tokens, scores, margin)
        own = unread.get(part.index, {})
        if (wrong or part.index in held) and passed.get(part.index):
            utt = _confined(utt, passed[part.index], part.start)
            one, scores = _sentence(utt, lp, own)
            wrong = _wrong_words(scores, one, offset, margin)
        if wrong:  # the word least like its audio (below the margin) as a filler
            filler = _as_filler(utt, [int(np.argmin(scores))], settings.filler_margin)
            one, scores = _sentence(filler, lp, own)
            wrong = _wrong_words(scores, one, offset, margin)
        metrics.append(utt.metrics)
        mismatches += wrong + _unread_words(one, own, offset)
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
    return rec, mismatches, metrics, edges


def _edge_words(
    tokens: list[str], scores: list[float], margin: float
) -> list[tuple[int, int, bool]]:
    """``[(first token, last token, last word?)]`` (tokens counted without ``<s>``) of a
    sentence's first and last word where it is unlike its audio (``scores``, `word_scores`
    of the words of `tokens`, below ``-margin``); a sentence of one word lists it twice."""
    shift = 1 if tokens and tokens[0] == "<s>" else 0
    runs = word_runs(optional_tokens(tokens))
    ends = [(0, False), (len(runs) - 1, True)] if runs else []
    return [
        (runs[j][0] - shift, runs[j][1] - shift, at_end)
        for j, at_end in ends
        if scores[j] < -margin
    ]


WORD_SPREAD = 7.0  # a word unlike its audio: this many times the recording's median evidence


def word_margin(scores: list[float], floor: float) -> float:
    """The nats of evidence against a word past which it is unlike its audio: `floor`
    (``word_margin``), or `WORD_SPREAD` times the median over the recording's words
    (`scores`: `word_scores` of every sentence) where that is more. Noise or another
    microphone raises every word's score alike (white noise at 20 dB SNR: the median from
    15 to 43 nats on eSpeak NG), and a fixed margin then reported one word in ten; on
    clean speech the median is about 15 and the floor decides."""
    if floor <= 0 or not scores:
        return floor
    return max(floor, WORD_SPREAD * float(np.median(-np.asarray(scores))))


def _sentence(
    utt: UtteranceAlignment, log_probs: np.ndarray | None, unread: Collection[int] = ()
) -> tuple[dict[str, Any], list[float]]:
    """One sentence's durations record (its piece's time) and its words' `word_scores`
    (none without the model's `log_probs` of its piece; 0 for the words `unread`: they
    stand for words the model cannot read, and are no evidence)."""
    one = resolve(utt).record
    if log_probs is None:
        return one, []
    scores = word_scores(log_probs, utt.tokens, one["frames"])
    return one, [0.0 if j in unread else s for j, s in enumerate(scores)]


def _unread_words(
    one: dict[str, Any], unread: dict[int, str], offset: float
) -> list[dict[str, Any]]:
    """The words of one sentence (record `one`, its piece from `offset` seconds) that the
    model cannot read (``{word: its text}``): labelled in place with their text, and each
    a mismatch spanning the audio it took."""
    out = []
    words = one.get("words", [])
    for j, text in sorted(unread.items()):
        if j < len(words):
            words[j][2] = text
            out.append(_mismatch(3, words[j][0] + offset, words[j][1] + offset, text))
    return out


def _phone_ids(speech: Any) -> torch.Tensor:
    """``(P,)`` the ids of every token of the model's table that is a sound (no
    separator, punctuation or special)."""
    table = speech.symbols.symbols
    return torch.tensor(np.flatnonzero(~optional_tokens(table)), dtype=torch.long)


def _as_filler(
    utt: UtteranceAlignment,
    words: Collection[int],
    margin: float,
    gain: np.ndarray | None = None,
) -> UtteranceAlignment:
    """`utt` with the tokens of its `words` (indices of its runs of required tokens) weighted as
    the coarse search's filler is scored: at every frame the likeliest token's weight,
    `margin` nats down. A word unlike its audio then takes the frames that no neighbour
    explains better, and its neighbours keep theirs: aligned on its own tokens, a wrong
    word's audio went to whichever of it and its neighbour the model found less unlikely
    there (`tires` for `intelligence`: `higher` before it took the first half). On 32
    wrong words, 5-minute recordings of eSpeak NG and three Festival voices, the largest
    move of a word beside them fell from a median of 23.2 to 12.4 ms (7 to 6 over 50 ms;
    1 nat: 15.9 ms, 4 nats: 13.2), the recordings without them unchanged. `gain` ``(T,)``:
    nats added to that weight at each frame (`FrameScorer.unexplained`: audio the
    sentence's own tokens do not explain goes to the filler)."""
    weights = np.array(utt.weights, copy=True)
    level = weights.max(1) * np.exp(-margin)
    if gain is not None:
        extra = np.zeros(len(weights))
        extra[: min(len(gain), len(weights))] = gain[: len(weights)]
        level = level * np.exp(np.minimum(extra, 30.0))
    runs = word_runs(optional_tokens(utt.tokens))
    for word in words:
        first, last = runs[word]
        weights[:, first : last + 1] = level[:, None]
    return dataclasses.replace(utt, weights=weights)


CONFINE_FRAMES = 2  # how far the coarse search's frames may be off: its step


def _confined(
    utt: UtteranceAlignment, passed: list[tuple[int, int, int, int]], start: int
) -> UtteranceAlignment:
    """`utt` (a sentence aligned from frame `start` of the recording) with each word the
    coarse search passed over (``passed``: ``(first token, last token, start, end)``,
    tokens counted without ``<s>``, frames of the recording) kept to the audio it stands
    for, and that audio to it: its tokens lose their weight outside those frames, every
    other token inside them (`CONFINE_FRAMES` either side left free). Aligned as an
    utterance, a sentence with a wrong word stretched a neighbour over the wrong word's
    audio wherever the model found that audio no likelier on the wrong word's tokens."""
    if not passed or utt.r != 1:
        return utt
    weights = np.array(utt.weights, copy=True)
    shift = 1 if utt.tokens and utt.tokens[0] == "<s>" else 0
    optional = optional_tokens(utt.tokens)  # pauses stay free
    m = CONFINE_FRAMES
    for first, last, a, b in passed:
        own = np.zeros(weights.shape[1], bool)
        own[first + shift : last + shift + 1] = True
        a, b = a - start, b - start
        weights[max(0, a + m) : max(0, b - m), ~own & ~optional] = 0.0
        weights[: max(0, a - m), own] = 0.0
        weights[max(0, b + m) :, own] = 0.0
    return dataclasses.replace(utt, weights=weights)


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


SILENT_WORD = 3  # frames of silence inside a word, its edge frames aside, to report it


def silent_words(
    words: list, pauses: np.ndarray | None, sec: float, found: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """A ``text not in the audio`` mismatch for each word aligned to silence alone (every
    frame of it but one at each edge a pause frame of ``pauses (T,)``, `SILENT_WORD` of
    them at least) that no mismatch of
    `found` covers: a heading in the text that the reader left out was put in the silence
    before the chapter's first words, and nothing said it was not there."""
    if pauses is None:
        return []
    out = []
    for start, end, text in words:
        a, b = int(round(start / sec)) + 1, int(round(end / sec)) - 1
        if b - a < SILENT_WORD or not pauses[a:b].all():
            continue
        if any(m["start"] <= start + 1e-3 and end - 1e-3 <= m["end"] for m in found):
            continue
        out.append(_mismatch(0, start, end, text))
    return out


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
    scores: list[float], one: dict[str, Any], offset: float, margin: float
) -> list[dict[str, Any]]:
    """The words of one sentence (record `one`) whose frames the model finds `margin` nats
    (summed) likelier on other tokens (`scores`: `word_scores` of its words)."""
    return [
        {**_mismatch(2, s + offset, e + offset, label), "score": round(score, 2)}
        for (s, e, label), score in zip(one.get("words", []), scores)
        if score < -margin
    ]


def _heard_part(speech: Any, sentence: str, reached: int) -> tuple[str, str, ReadableText] | None:
    """``(the words of `sentence` a recording holds, the rest, those words as the model
    reads them)`` where it ends inside the sentence after `reached` of the words the model
    reads (the coarse search's `words_reached`): the most of its first written words that
    the model reads as no more than `reached` words (a number it reads as several words
    counts as all of them); None where that is none or all of them."""
    words = sentence.split()
    for m in range(len(words) - 1, 0, -1):
        head = " ".join(words[:m])
        try:
            part = readable_text(speech, [head])
        except ValueError:  # the model cannot read these words alone
            continue
        tokens = speech.symbols.decode(part.ids[0].tolist())
        if len(word_runs(optional_tokens(tokens))) <= reached:
            return head, " ".join(words[m:]), part
    return None


def _read_instead(
    speech: Any,
    readable: ReadableText,
    tokens: list[tuple[torch.Tensor, list[str]]],
    k: int,
    part: ReadableText,
) -> None:
    """Sentence `k` of `readable` (`readable_text`'s) and of `tokens` replaced, in place,
    by the one sentence of `part` (`readable_text`'s too)."""
    readable.texts[k], readable.ids[k] = part.texts[0], part.ids[0]
    readable.unread.pop(k, None)
    if 0 in part.unread:
        readable.unread[k] = part.unread[0]
    tokens[k] = _sentence_tokens(speech, part.ids)[0]


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
