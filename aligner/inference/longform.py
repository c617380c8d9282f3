"""``aligner align --long-form``: a long recording (minutes to an hour) with its whole text,
in memory that grows with the length, not its square.

Two passes. The *coarse* pass finds each sentence's span: the audio is read window by
window (``window_seconds``), each window with the sentences that may be spoken in it, the
alignment model's log-probabilities of those tokens (without its prior: the window's text
and audio end at different places) and the search of `aligner.alignment.longform`,
which may pass a sentence over (text the audio does not hold), give audio to its filler
(audio the text does not hold) or, inside a sentence, to a word filler (a wrong word);
its path may end inside the last sentence (a recording that stops in it) and, in the
first window, begin inside the first. The sentences that end in the first ``commit``
share of the window are kept; the next window starts where the last of them ends (an
anchor). The *fine* pass aligns each sentence as an utterance, with the audio from the middle of the
pause before it to the middle of the pause after (`align_window`, the one per-window
call: any function of the same signature can stand in), and its times are shifted into
the recording. Sentences and audio that do not match are reported with their spans
(``mismatches``), never stretched over; so is a word whose frames the model finds far
likelier on other tokens (``word_margin``: nats summed over its frames, `word_scores`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch
from scipy.special import logsumexp

from aligner.alignment.longform import (
    SentenceGraph,
    coarse_search,
    cut_between,
    filler_runs,
    passed_words,
    sentence_spans,
    words_missed,
    words_reached,
)
from aligner.alignment.record import UtteranceAlignment
from aligner.alignment.tiers import optional_tokens, word_runs
from aligner.audio.trim import PauseRule
from aligner.inference.align import _utterance
from aligner.inference.common import InferenceError
from aligner.models.alignment import utterance_normalize


@dataclass(frozen=True)
class LongFormSettings:
    """The search's settings (seconds and log-probabilities, see the module docstring)."""

    window_seconds: float = 30.0
    commit: float = 0.7
    filler_margin: float = 2.0
    skip_penalty: float = -40.0
    word_penalty: float = -10.0
    min_extra_seconds: float = 0.5
    word_margin: float = 100.0
    coarse_step: int = 2


@dataclass
class Piece:
    """One part of the recording: frames ``[start, end)``, a sentence (``text``) or a gap."""

    start: int
    end: int
    text: str | None = None
    index: int | None = None


@dataclass
class LongAlignment:
    """A long recording's alignment: its durations record (words, phones, tokens over the
    whole recording), the mismatches, the mean metrics of its sentences, and notes."""

    record: dict[str, Any]
    mismatches: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # for the user: a cut end, symbols left out


class CoarsePass(NamedTuple):
    """What `coarse_pass` finds in a whole recording (frames; a word's tokens counted from
    its sentence's first, without ``<s>``): ``spans`` ``{sentence: (start, end)}``, the
    sentences ``skipped`` (passed over), the ``extra`` audio ``[(start, end)]`` that no
    sentence holds, the words ``passed`` over ``{sentence: [(first token, last token,
    start, end)]}``, ``cut`` ``(sentence, words)`` where the recording ends inside a
    sentence before its last word (`words_reached`: the words of it the audio holds, the
    last perhaps cut) and ``begun``: how many words of the first sentence the audio lacks
    where it begins inside that sentence (`words_missed`), else None."""

    spans: dict[int, tuple[int, int]]
    skipped: list[int]
    extra: list[tuple[int, int]]
    passed: dict[int, list[tuple[int, int, int, int]]]
    cut: tuple[int, int] | None
    begun: int | None


WindowAligner = Callable[
    [Any, list[torch.Tensor], list[str], list[str], PauseRule], list[UtteranceAlignment]
]


def align_windows(
    speech: Any, wavs: list[torch.Tensor], texts: list[str], names: list[str], pauses: PauseRule
) -> list[UtteranceAlignment]:
    """Windows aligned as `aligner align` aligns utterances (each audio in `wavs` with its
    text in `texts`; batches of 8): the model with its prior, the monotonic search, the
    pause tiers."""
    cfg = speech.mel_cfg
    sources = [speech.encode_text(text, name) for text, name in zip(texts, names)]
    targets = [speech.target_mel(wav) for wav in wavs]
    weights = speech.teacher_force(sources, targets, 8)
    out = []
    for wav, text, name, source, target, w in zip(wavs, texts, names, sources, targets, weights):
        pause = pauses.frames(wav, cfg.sample_rate, cfg.hop_length, target.size(0))
        out.append(
            _utterance(speech, {"text": text}, name, source, len(target), w, "search", pause)
        )
    return out


def chunked_mel(speech: Any, wav: torch.Tensor, seconds: float = 60.0) -> torch.Tensor:
    """`speech.target_mel` of a long `wav`, `seconds` of audio at a time (its STFT would
    hold the whole recording at once): each chunk with the samples its edge frames see, so
    that the frames are those of the whole."""
    cfg = speech.mel_cfg
    hop = cfg.hop_length
    total = len(wav) // hop + 1
    step = max(1, int(seconds * cfg.sample_rate / hop))
    context = -(-cfg.n_fft // hop)  # frames of samples either side that a frame reads
    parts = []
    for c0 in range(0, total, step):
        c1 = min(total, c0 + step)
        lo = max(0, c0 - context)
        mel = speech.target_mel(wav[lo * hop : min(len(wav), (c1 + context) * hop)])
        parts.append(mel[c0 - lo : c0 - lo + (c1 - c0)])
    return torch.cat(parts)


def _sentence_tokens(
    speech: Any, encoded: list[torch.Tensor]
) -> list[tuple[torch.Tensor, list[str]]]:
    """Each sentence's token ids without ``<s>``/``</s>`` and its token strings, from
    `encoded` (`encode_text`'s ids of each sentence)."""
    out = []
    for ids in encoded:
        keep = [i for i in ids.tolist() if i not in (speech.symbols.bos_id, speech.symbols.eos_id)]
        out.append((torch.tensor(keep, dtype=torch.long), speech.symbols.decode(keep)))
    return out


class FrameScorer:
    """The alignment model's log-probabilities of any tokens at any frames of one
    recording, without its prior: the recording's mel is normalized once (its bins over
    the frames of `counted` ``(T,)`` bool, default all: a long recording leaves out the
    inside of its long silences, which would otherwise weigh in as no utterance the model
    learnt from does); the mel encoder runs over the frames asked for and the few beside
    them that its convolutions see, so that memory holds the mel, not the encoder's
    channels for the whole recording (the model's queries see a frame of context; its
    keys, one token each, none)."""

    @torch.no_grad()
    def __init__(self, speech: Any, mel: torch.Tensor, counted: np.ndarray | None = None) -> None:
        self.model = model = speech.model
        self.device = speech.device
        x = mel[None]
        if model.config.mel_norm == "utterance":
            mask = torch.ones(x.shape[:2], dtype=torch.bool)
            kept = None if counted is None else torch.from_numpy(counted)[None]
            x = utterance_normalize(x, mask, counted=kept)
        self.mel = x  # (1, T, M)
        self.context = sum(k // 2 for k in model.config.mel_kernels)

    def __len__(self) -> int:
        return self.mel.size(1)

    @torch.no_grad()
    def queries(self, start: int, end: int) -> torch.Tensor:
        """``(1, end - start, channels)``: the mel encoder's output at those frames, as over
        the whole recording."""
        lo, hi = max(0, start - self.context), min(len(self), end + self.context)
        x = self.mel[:, lo:hi].to(self.device)
        mask = torch.ones(x.shape[:2], dtype=torch.bool, device=self.device)
        return self.model.mel_encoder(x, mask)[:, start - lo : end - lo]

    def scores(self, ids: torch.Tensor, start: int, end: int) -> torch.Tensor:
        """``(end - start, N)`` the model's scores (logits) of token `ids` ``(N,)`` at
        those frames."""
        return self._scores(ids, self.queries(start, end))

    @torch.no_grad()
    def _scores(self, ids: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        """``(T, N)`` scores of token `ids` ``(N,)`` against `queries` ``(1, T, C)``."""
        model = self.model
        tokens = ids[None].to(self.device)
        mask = torch.ones(tokens.shape, dtype=torch.bool, device=self.device)
        keys = model.attention.project_keys(model.text_encoder(model.embedding(tokens), mask))
        return model.attention.score(queries, keys).float()[0].cpu()

    def log_probs(self, ids: torch.Tensor, start: int, end: int) -> np.ndarray:
        """``(end - start, N)`` log-probabilities of token `ids` ``(N,)`` at those frames."""
        return torch.log_softmax(self.scores(ids, start, end), dim=1).numpy()

    def unexplained(
        self, ids: torch.Tensor, phones: torch.Tensor, start: int, end: int
    ) -> np.ndarray:
        """``(end - start,)`` nats by which the likeliest of all the model's `phones` beats
        the likeliest of `ids` at each frame (0 where one of `ids` is as likely): the
        audio that a text's tokens do not explain, as a phone loop would (the filler model
        of keyword spotting)."""
        queries = self.queries(start, end)  # one pass of the mel encoder for both
        own = self._scores(ids, queries).max(1).values
        best = self._scores(phones, queries).max(1).values
        return (best - own).clamp(min=0).numpy()


def _window_path(
    lp: np.ndarray,
    graph: SentenceGraph,
    silent: np.ndarray,
    settings: LongFormSettings,
    free_start: bool = False,
) -> np.ndarray:
    """`coarse_search` over a window's frames taken ``coarse_step`` at a time (the log of
    each token's mean probability over them; silent when all are), the path given back
    frame by frame. The mean of the log-probabilities instead sank a phone one frame
    long to a tenth of its score: on the eSpeak NG 5-minute test recording a sentence of
    short phones (`The dark mainers ...`) cost more than passing it over, and was reported
    missing."""
    step, n = settings.coarse_step, len(lp) // settings.coarse_step * settings.coarse_step
    if step > 1 and n >= step:
        steps = lp[:n].reshape(-1, step, lp.shape[1])  # the log of the mean probability
        lp = logsumexp(steps, axis=1) - np.log(step)
        silent_steps = silent[:n].reshape(-1, step).all(1)
    else:
        step, n, silent_steps = 1, len(lp), silent
    path = coarse_search(
        lp,
        graph,
        settings.filler_margin,
        settings.skip_penalty,
        silent_steps,
        settings.word_penalty,
        free_start,
    )
    return np.concatenate([np.repeat(path, step), np.full(len(silent) - n, path[-1])])


def coarse_pass(
    speech: Any,
    scorer: FrameScorer,
    tokens: list[tuple[torch.Tensor, list[str]]],
    sound: np.ndarray,
    settings: LongFormSettings,
    unlike_speech: np.ndarray | None = None,
) -> CoarsePass:
    """The sentences of the whole recording found window by window (see the module
    docstring and `CoarsePass`); the first window's search may begin inside the first
    sentence, the last's end inside its last. ``unlike_speech (T,)`` bool: frames of
    sound that are no speech (`steady_sound`), which the filler between sentences takes
    at no margin, as it takes a pause."""
    cfg = speech.mel_cfg
    total = len(scorer)
    base = max(50, int(settings.window_seconds * cfg.sample_rate / cfg.hop_length))
    rate = sum(len(ids) for ids, _ in tokens) / max(total, 1)
    spans: dict[int, tuple[int, int]] = {}
    skipped: list[int] = []
    extra: list[tuple[int, int]] = []
    passed: dict[int, list[tuple[int, int, int, int]]] = {}
    cut = begun = None
    min_extra = int(settings.min_extra_seconds * cfg.sample_rate / cfg.hop_length)
    a, s0, width = 0, 0, base
    while s0 < len(tokens) and a < total:
        b = min(total, a + width)
        final = b == total
        s1, count = s0, 0
        while s1 < len(tokens) and (final or count < 1.6 * rate * width + 20 or s1 == s0):
            count += len(tokens[s1][0])
            s1 += 1
        window = tokens[s0:s1]
        graph = SentenceGraph.build([optional_tokens(t) for _, t in window])
        ids = torch.cat([ids for ids, _ in window])
        free = ~sound[a:b] if unlike_speech is None else ~sound[a:b] | unlike_speech[a:b]
        first = a == 0 and s0 == 0
        path = _window_path(scorer.log_probs(ids, a, b), graph, free, settings, first)
        limit = b - a if final else int(settings.commit * width)
        kept, pending = [], []
        for span in sentence_spans(path, graph, final):
            if span.start is None:
                pending.append(span.index)
            elif span.end <= limit:
                kept += [*pending, span.index]
                pending = []
                spans[s0 + span.index] = (a + span.start, a + span.end)
            else:
                break
        if first and 0 in spans:
            begun = words_missed(path, graph)
        if final:
            kept += pending
            reached = words_reached(path, graph)
            if reached is not None and s0 + reached[0] in spans:
                cut = (s0 + reached[0], reached[1])
        skipped += [s0 + k for k in kept if s0 + k not in spans]
        for k, j, t0, t1 in passed_words(path, graph):
            if k in kept and s0 + k in spans:
                first, last = (state - graph.first[k] for state in graph.words[k][j])
                passed.setdefault(s0 + k, []).append((int(first), int(last), a + t0, a + t1))
        done = max((spans[s0 + k][1] for k in kept if s0 + k in spans), default=None)
        if final:
            done = b
        elif done is None and graph.between[path[:limit]].mean() > 0.9:
            done = a + _before_straddler(graph.between[path[:limit]])  # audio the text lacks
        elif done is None:  # a sentence longer than the window's first part: a wider one
            if width >= 4 * base:
                sec = cfg.hop_length / cfg.sample_rate
                raise InferenceError(
                    f"no sentence found in the {width * sec:.0f} s from {a * sec:.1f} s on: "
                    "does the text belong to this recording?"
                )
            width *= 2
            continue
        extra += [
            (a + s, a + e)
            for s, e in filler_runs(path[: done - a], graph, sound[a:done], min_extra)
        ]
        s0 += len(kept)
        a, width = done, base
    skipped += list(range(s0, len(tokens)))
    voiced = np.flatnonzero(sound[a:]) if a < total else np.zeros(0, int)
    if len(voiced) >= min_extra:  # the text ended before the speech did
        extra.append((a + int(voiced[0]), a + int(voiced[-1]) + 1))
    return CoarsePass(spans, sorted(set(skipped)), extra, passed, cut, begun)


def steady_sound(
    mel: np.ndarray, sound: np.ndarray, frame_seconds: float, ratio: float = 0.5
) -> np.ndarray:
    """``(T,)`` bool: frames of sound (``sound (T,)``) whose spectrum changes less than
    `ratio` times as fast as the recording's sound does at its median: the spectral flux
    (the RMS change of the log-mel ``mel (T, M)`` over 35 ms) averaged over the sound
    within half a second either side. A sustained tone or a steady noise (music before a
    chapter, a hum) changes a fifth to a quarter as fast as speech, whose phones follow one
    another; on the test recordings no second of speech fell below 0.6 of its median. An
    alignment model that learnt from speech may still score such sound as a phone."""
    sound = np.asarray(sound, bool)
    if not sound.any():
        return np.zeros(len(sound), bool)
    lag = max(1, int(round(0.035 / frame_seconds)))
    x = np.asarray(mel, np.float64)
    flux = np.zeros(len(x))
    flux[lag:] = np.sqrt(((x[lag:] - x[:-lag]) ** 2).mean(1))
    half = max(1, int(round(0.5 / frame_seconds)))
    around = _window_sums(flux * sound, half)
    count = _window_sums(sound.astype(float), half)
    rate = around / np.maximum(count, 1.0)
    return sound & (rate < ratio * float(np.median(rate[sound])))


def _window_sums(values: np.ndarray, half: int) -> np.ndarray:
    """``(T,)``: the sum of `values` ``(T,)`` over frames ``t - half .. t + half`` (those
    that exist), for a recording shorter than the window too."""
    total = np.concatenate([[0.0], np.cumsum(values)])
    t = np.arange(len(values))
    return total[np.minimum(t + half + 1, len(values))] - total[np.maximum(t - half, 0)]


def _before_straddler(between: np.ndarray) -> int:
    """Where a window's committed part, audio the text does not hold (``between (L,)``
    bool per frame), ends: at its end, or where the speech that runs past it begins (a
    sentence after a long silence that straddles the commit point is the next window's
    to find whole)."""
    if between[-1]:
        return len(between)
    start = len(between) - int(np.argmax(between[::-1]))
    return start if start > 0 else len(between)


def pieces(
    spans: dict[int, tuple[int, int]],
    extra: list[tuple[int, int]],
    sentences: list[str],
    total: int,
    pauses: np.ndarray | None,
    pad: int,
    edge: int = 0,
) -> list[Piece]:
    """The recording tiled into pieces: each aligned sentence from the middle of the pause
    before it to the middle of the pause after (`cut_between`; at most `pad` frames of
    its coarse span, and with `pauses`, at most `edge` pause frames before its first
    speech frame and after its last, as an utterance holds: more silence before a
    sentence goes to its first word), the rest gaps."""
    parts = sorted([(s, e, k) for k, (s, e) in spans.items()] + [(s, e, None) for s, e in extra])
    cuts = [0]
    for (_, e0, _), (s1, _, _) in zip(parts, parts[1:]):
        cuts.append(max(cuts[-1], cut_between(e0, s1, pauses)))
    cuts.append(total)
    out: list[Piece] = []
    for (s, e, k), left, right in zip(parts, cuts, cuts[1:]):
        if k is None:
            continue
        lo, hi = max(left, s - pad), min(right, e + pad)
        if pauses is not None and edge > 0:
            speech = np.flatnonzero(~np.asarray(pauses[lo:hi], bool))
            if speech.size:
                lo, hi = (
                    max(lo, lo + int(speech[0]) - edge),
                    min(hi, lo + int(speech[-1]) + 1 + edge),
                )
        out.append(Piece(lo, hi, sentences[k], k))
    tiled, at = [], 0
    for piece in out:
        if piece.start > at:
            tiled.append(Piece(at, piece.start))
        tiled.append(piece)
        at = piece.end
    if at < total:
        tiled.append(Piece(at, total))
    return tiled


def word_scores(log_probs: np.ndarray, tokens: list[str], frames: list[int]) -> list[float]:
    """Per word (a run of required tokens) the sum over its frames of its token's
    log-probability minus the best token's (nats of evidence against the word: 0 where the
    model finds no likelier token; a sum, so that a short word the speaker swallowed
    weighs less than a long word that is not there)."""
    owner = np.repeat(np.arange(len(frames)), frames)[: len(log_probs)]
    gap = log_probs[np.arange(len(owner)), owner] - log_probs[: len(owner)].max(1)
    runs = word_runs(optional_tokens(tokens))
    return [float(gap[(owner >= a) & (owner <= b)].sum()) for a, b in runs]
