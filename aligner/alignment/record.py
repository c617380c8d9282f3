"""One utterance's alignment (`UtteranceAlignment`) and its files: the durations record
(``ID.durations.json``) and its TextGrid.

An alignment here is one utterance's attention matrix ``(S, N)`` (decoder steps x tokens)
with ``S = ceil(T / r)`` for ``T`` mel frames. Durations (mel frames per token, summing to
``T``) come from the core in one of two ways: ``search`` (what `aligner align` uses): the
weights spread to frames and the best monotonic path through them
(:mod:`aligner.attention.search`), at frame resolution, every word's token getting at
least one frame; ``argmax``: the number of decoder steps whose most attended token is each
token (:func:`aligner.attention.metrics.durations`) times ``r``, the last attended token
absorbing the padding of the final step. Seconds are ``frames * hop_length /
sample_rate``; words and phones are grouped from the tokens as `aligner.alignment.tiers`
describes. With the alignment model (``task: align``) the boundary between two phones that
meet lies below one frame, at its expected place under the alignment
(`aligner.attention.search.expected_edges`); the frames stay whole.

The durations record (``ID.durations.json``)::

    {"id", "method", "tokens": [N], "frames": [N], "start_seconds": [N], "seconds": [N],
     "total_frames", "total_seconds", "hop_length", "sample_rate", "r",
     "words": [[start, end, label], ...], "phones": [...], "metrics": {...}}

``frames`` sum to ``total_frames``; ``start_seconds`` and ``seconds`` count whole frames
(as duration models use); ``words`` and ``phones`` (absent for the source positions of a
VC model, ``phones`` absent for characters) are times in the audio
(`aligner.alignment.tiers.frame_bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.alignment.intervals import Interval
from aligner.alignment.lengths import token_lengths
from aligner.alignment.textgrid import write_textgrid
from aligner.alignment.tiers import frame_bounds, optional_tokens, separator_log_probs, token_tiers
from aligner.attention import metrics, search

SPACE_LABEL = "sp"
RECORD_SUFFIX = ".durations.json"


@dataclass
class UtteranceAlignment:
    """One utterance's alignment and what it takes to turn it into time.

    weights: (S, N) attention weights, S decoder steps, N tokens.
    tokens: the N token strings (as the model's symbol table spells them).
    n_frames: T, the true number of mel frames (S = ceil(T / r)).
    kind: what the tokens are: ``chars``, ``phonemes``, ``arpabet`` (TTS) or ``positions``
        (VC source positions).
    method: ``search`` or ``argmax`` durations (see the module docstring).
    text: the utterance's text (labels the words), if known.
    pauses: ``(T,)`` bool, the frames in a pause of the audio
        (`aligner.audio.trim.PauseRule`), if known: the words and phones tiers then
        put pauses where the audio is silent (`aligner.alignment.tiers`).
    separators_from_pauses: the word separators take the pause frames between two words
        and nothing else in the search (`aligner.alignment.tiers.separator_log_probs`): the
        alignment model's, which it does not learn; a Tacotron's keep their own weights.
    subframe: with ``search`` durations, the boundary between two tokens of words that
        meet lies at its expected place under the alignment
        (`aligner.attention.search.expected_edges`), not on the frame grid: the alignment
        model's (its tiers; the frames stay whole).
    usual_frames: each phone's usual length in frames (`aligner.alignment.lengths`: the
        alignment model's checkpoint has them): with `pauses`, a phone after a pause that
        is shorter starts earlier by what it lacks, within the silence; None: as timed.
    """

    id: str
    tokens: list[str]
    weights: np.ndarray
    n_frames: int
    r: int
    hop_length: int
    sample_rate: int
    metrics: dict[str, float] = field(default_factory=dict)
    kind: str = "chars"
    method: str = "argmax"
    text: str | None = None
    pauses: np.ndarray | None = None
    separators_from_pauses: bool = False
    subframe: bool = False
    usual_frames: dict[str, float] | None = None

    def __post_init__(self) -> None:
        steps, n = self.weights.shape
        if n != len(self.tokens):
            raise ValueError(f"{self.id}: {n} alignment columns but {len(self.tokens)} tokens")
        if steps != -(-self.n_frames // self.r):
            raise ValueError(
                f"{self.id}: {steps} decoder steps but {self.n_frames} frames at r={self.r}"
            )


def frame_durations(utt: UtteranceAlignment) -> np.ndarray:
    """Mel frames per token (N,) summing to ``n_frames``, by `utt.method`."""
    if utt.method == "search":
        optional = (
            optional_tokens(utt.tokens)
            if utt.kind != "positions"
            else np.ones(len(utt.tokens), bool)  # a VC target may be shorter than its source
        )
        cells = separator_log_probs(utt.tokens, utt.pauses) if utt.separators_from_pauses else None
        return search.frame_durations(utt.weights, utt.r, utt.n_frames, optional, cells)
    w = torch.as_tensor(np.asarray(utt.weights), dtype=torch.float32)[None]
    steps, n = w.shape[1:]
    d = metrics.durations(
        w, torch.tensor([steps]), torch.tensor([n]), utt.r, torch.tensor([utt.n_frames])
    )
    return d[0].numpy()


@dataclass(frozen=True)
class Alignment:
    """One utterance aligned: what went in (`utt`: tokens, weights, frame settings,
    metrics) and what the monotonic search made of it, ``record``: the durations record
    of the module docstring (frames per token, seconds, the words and phones tiers).
    Made by `resolve`; every file of it is written from it, computing nothing."""

    utt: UtteranceAlignment
    record: dict[str, Any]

    @property
    def id(self) -> str:
        return self.utt.id

    @property
    def frames(self) -> list[int]:
        """Mel frames per token, summing to the utterance's frames."""
        return self.record["frames"]

    @property
    def words(self) -> list[Interval]:
        """The words tier (start, end, label) in seconds; empty for VC source positions."""
        return [Interval(*row) for row in self.record.get("words", [])]

    @property
    def phones(self) -> list[Interval]:
        """The phones tier; empty for characters and VC source positions."""
        return [Interval(*row) for row in self.record.get("phones", [])]


def resolve(utt: UtteranceAlignment) -> Alignment:
    """The `Alignment` of `utt`: its durations by ``utt.method`` (the monotonic search, or
    the argmax) and the durations record (the module docstring): per token its frames,
    start and length in seconds, and the words and phones tiers."""
    return Alignment(utt, _record(utt))


def _record(utt: UtteranceAlignment) -> dict[str, Any]:
    frames = frame_durations(utt)
    sec = utt.hop_length / utt.sample_rate
    starts = np.concatenate([[0], np.cumsum(frames)[:-1]])
    edges = None
    if utt.subframe and utt.method == "search" and utt.kind != "positions":
        weights = search.spread_to_frames(utt.weights, utt.r, utt.n_frames)
        log_probs = np.log(np.clip(weights, 1e-8, None))
        edges = search.expected_edges(log_probs, frames, ~optional_tokens(utt.tokens))
    usual = token_lengths(utt.tokens, utt.usual_frames)
    tiers = token_tiers(
        utt.tokens, frames.tolist(), sec, utt.kind, utt.text, utt.pauses, edges, usual
    )
    return {
        "id": utt.id,
        "method": utt.method,
        "tokens": list(utt.tokens),
        "frames": frames.tolist(),
        "start_seconds": [round(float(s) * sec, 6) for s in starts],
        "seconds": [round(float(f) * sec, 6) for f in frames],
        "total_frames": int(utt.n_frames),
        "total_seconds": round(utt.n_frames * sec, 6),
        "hop_length": utt.hop_length,
        "sample_rate": utt.sample_rate,
        "r": utt.r,
        **{name: [list(a) for a in tier] for name, tier in tiers.items()},
    }


def token_label(token: str) -> str:
    """A token as a TextGrid or a plot labels it: whitespace becomes ``sp``."""
    return SPACE_LABEL if not token.strip() else token


def token_intervals(record: dict[str, Any]) -> list[Interval]:
    """The ``tokens`` tier of a durations record: every token with frames, in the audio's
    time (`frame_bounds`); boundaries from integer frame counts, each converted once, so
    that neighbouring intervals share the very same float."""
    sec = record["hop_length"] / record["sample_rate"]
    bounds = [round(float(b), 6) for b in frame_bounds(record["frames"], sec)]
    return [
        Interval(bounds[i], bounds[i + 1], token_label(tok))
        for i, (tok, n) in enumerate(zip(record["tokens"], record["frames"]))
        if n > 0
    ]


def write_record_textgrid(record: dict[str, Any], path: str | Path) -> None:
    """The TextGrid of a durations record: the tiers ``words`` and ``phones`` (where the
    record has them) and ``tokens`` (every token, whitespace labelled ``sp``, tokens with
    zero frames (skipped) without an interval)."""
    tiers = {
        name: [Interval(*row) for row in record[name]]
        for name in ("words", "phones")
        if name in record
    }
    tiers["tokens"] = token_intervals(record)
    write_textgrid(tiers, record["total_seconds"], path)
