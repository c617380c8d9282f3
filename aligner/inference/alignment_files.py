"""Export teacher-forced alignments: durations JSON, Praat TextGrids, heatmaps, metrics.

Written by ``aligner align`` (`aligner.inference.align`). An alignment here is one utterance's attention matrix
``(S, N)`` (decoder steps x tokens) with ``S = ceil(T / r)`` for ``T`` mel frames.

Durations (mel frames per token, summing to ``T``) come from the core in one of two ways:
``search`` (what `aligner align` uses): the weights spread to frames and the best monotonic
path through them (:mod:`aligner.attention.search`), at frame resolution, every word's
token getting at least one frame; ``argmax``: the number of decoder steps whose most
attended token is each token (:func:`aligner.attention.metrics.durations`) times ``r``,
the last attended token absorbing the padding of the final step. Seconds are
``frames * hop_length / sample_rate``; words and phones are grouped from the tokens as
`aligner.text.tiers` describes. With the alignment model (``task: align``) the boundary
between two phones that meet lies below one frame, at its expected place under the
alignment (`aligner.attention.search.expected_edges`); the frames stay whole.

An alignment is *suspect* when the core's metrics find skipped or repeated tokens or a
focus rate below a threshold; see :class:`SuspectThresholds`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.attention import metrics, search
from aligner.files import save_by_name, write_atomic
from aligner.text.tiers import frame_bounds, optional_tokens, separator_log_probs, token_tiers

SPACE_LABEL = "sp"


@dataclass(frozen=True)
class SuspectThresholds:
    """When an alignment is flagged as suspect.

    min_focus: mean focus rate (mean over decoder steps of the largest weight) below
        which the attention is too diffuse to trust (0.4: issue 4's "has aligned" bar).
    max_skips: skipped tokens allowed (never the most attended token of a step and less
        than half a step's weight in total; ``metrics.skipped_tokens``).
    max_repeats: repeated tokens allowed (attended again after the focus moved on;
        ``metrics.repeated_tokens``); None: repeats make nothing suspect.
    """

    min_focus: float = 0.4
    max_skips: int = 0
    max_repeats: int | None = 0

    def reasons(self, m: dict[str, float]) -> list[str]:
        """The reasons (short strings) why metrics `m` of one utterance are suspect."""
        out = []
        if m["focus_rate"] < self.min_focus:
            out.append(f"focus {m['focus_rate']:.2f} < {self.min_focus}")
        if m["skipped"] > self.max_skips:
            out.append(f"{int(m['skipped'])} skipped")
        if self.max_repeats is not None and m["repeated"] > self.max_repeats:
            out.append(f"{int(m['repeated'])} repeated")
        return out


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
        put pauses where the audio is silent (`aligner.text.tiers`).
    separators_from_pauses: the word separators take the pause frames between two words
        and nothing else in the search (`aligner.text.tiers.separator_log_probs`): the
        alignment model's, which it does not learn; a Tacotron's keep their own weights.
    subframe: with ``search`` durations, the boundary between two tokens of words that
        meet lies at its expected place under the alignment
        (`aligner.attention.search.expected_edges`), not on the frame grid: the alignment
        model's (its tiers; the frames stay whole).
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


def durations_record(utt: UtteranceAlignment) -> dict[str, Any]:
    """The durations JSON of one utterance: per token its frames, start and length in seconds.

    Seconds are ``frames * hop_length / sample_rate``; frames sum to ``n_frames`` and
    seconds to ``total_seconds``.
    """
    frames = frame_durations(utt)
    sec = utt.hop_length / utt.sample_rate
    starts = np.concatenate([[0], np.cumsum(frames)[:-1]])
    edges = None
    if utt.subframe and utt.method == "search" and utt.kind != "positions":
        weights = search.spread_to_frames(utt.weights, utt.r, utt.n_frames)
        log_probs = np.log(np.clip(weights, 1e-8, None))
        edges = search.expected_edges(log_probs, frames, ~optional_tokens(utt.tokens))
    tiers = token_tiers(utt.tokens, frames.tolist(), sec, utt.kind, utt.text, utt.pauses, edges)
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


def _label(token: str) -> str:
    return SPACE_LABEL if not token.strip() else token


def write_textgrid(record: dict[str, Any], path: str | Path) -> None:
    """A Praat TextGrid (praatio) with the interval tiers ``words`` and ``phones`` (where the
    record has them) and ``tokens``: every token, whitespace labelled ``sp``, tokens with
    zero frames (skipped) without an interval. Its times are times in the audio
    (`aligner.text.tiers.frame_bounds`); the record's ``start_seconds`` and ``seconds``
    count whole frames (``frames * hop_length / sample_rate``), as duration models use."""
    from praatio import textgrid

    # boundaries from integer frame counts, each converted once: neighbouring intervals
    # share the very same float (start + duration rounded separately can overlap by 1e-6);
    # times in the audio, half a frame before the first frame of each token (frame_bounds)
    sec = record["hop_length"] / record["sample_rate"]
    bounds = [round(float(b), 6) for b in frame_bounds(record["frames"], sec)]
    intervals = [
        (bounds[i], bounds[i + 1], _label(tok))
        for i, (tok, n) in enumerate(zip(record["tokens"], record["frames"]))
        if n > 0
    ]
    end = record["total_seconds"]
    tg = textgrid.Textgrid(0.0, end)
    for name in ("words", "phones"):
        if name in record:
            entries = [(s, e, label) for s, e, label in record[name] if e > s]
            tg.addTier(textgrid.IntervalTier(name, entries, 0.0, end))
    tg.addTier(textgrid.IntervalTier("tokens", intervals, 0.0, end))
    save_by_name(
        path,
        lambda tmp: tg.save(
            str(tmp), format="long_textgrid", includeBlankSpaces=True, reportingMode="error"
        ),
    )


def utterance_metrics(
    alignments: torch.Tensor,
    dec_lengths: torch.Tensor,
    enc_lengths: torch.Tensor,
    required: torch.Tensor | None = None,
) -> list[dict[str, float]]:
    """The core's alignment metrics per item: (B, S, N) with lengths (B,) -> B dicts with
    ``focus_rate``, ``diagonality``, ``entropy``, ``skipped``, ``repeated``, ``longest_hold``.
    ``required (B, N)``: the positions the skip count covers (default: all)."""
    values = metrics.alignment_metrics(alignments.float(), dec_lengths, enc_lengths, required)
    b = alignments.size(0)
    return [{k: round(float(v[i]), 6) for k, v in values.items()} for i in range(b)]


def write_utterance(
    utt: UtteranceAlignment, out_dir: Path, png: bool = True, force: bool = False
) -> dict[str, Any]:
    """Write ``ID.durations.json``, ``ID.TextGrid``, ``ID.npy`` (weights), ``ID.png`` and
    ``durations/ID.npy`` (the frames of each token, int64 ``(N,)``: what FastSpeech-style
    trainers read) into `out_dir` (existing files replaced only with `force`); returns
    the durations record (with the metrics under ``metrics``)."""
    from aligner.attention.plot import save_alignment_png

    exts = (".durations.json", ".TextGrid", ".npy")
    paths = [out_dir / f"{utt.id}{ext}" for ext in exts] + [out_dir / "durations" / f"{utt.id}.npy"]
    for path in paths if not force else []:
        if path.exists():
            raise FileExistsError(f"{path} exists; pass --force to overwrite it")
    record = durations_record(utt)
    record["metrics"] = dict(utt.metrics)
    text = json.dumps(record, indent=1) + "\n"
    write_atomic(paths[0], lambda fh: fh.write(text), "w", encoding="utf-8")
    write_textgrid(record, paths[1])
    write_atomic(paths[2], lambda fh: np.save(fh, utt.weights.astype(np.float32)))
    write_atomic(paths[3], lambda fh: np.save(fh, np.asarray(record["frames"], dtype=np.int64)))
    if png:
        save_alignment_png(
            utt.weights,
            out_dir / f"{utt.id}.png",
            tokens=[_label(t) for t in utt.tokens],
            title=utt.text or utt.id,
            force=force,
            r=utt.r,
            hop_length=utt.hop_length,
            sample_rate=utt.sample_rate,
        )
    return record


@dataclass
class Summary:
    """Metrics of every utterance and which ones are suspect."""

    thresholds: SuspectThresholds
    utterances: list[dict[str, Any]] = field(default_factory=list)
    bad: list[dict[str, str]] = field(default_factory=list)

    def add(self, utt_id: str, m: dict[str, float]) -> None:
        self.utterances.append({"id": utt_id, **m, "suspect": self.thresholds.reasons(m)})

    def add_bad(self, utt_id: str, reason: str) -> None:
        """An item that could not be aligned (it has no files), with the reason."""
        self.bad.append({"id": utt_id, "reason": reason})

    @property
    def suspects(self) -> list[dict[str, Any]]:
        return [u for u in self.utterances if u["suspect"]]

    def means(self) -> dict[str, float]:
        """The mean of each metric over the utterances that have it (``mapping_ms``, for
        instance, only where the corpus has reference timings of both voices)."""
        keys = ("focus_rate", "diagonality", "entropy", "skipped", "repeated", "mapping_ms")
        out = {}
        for k in keys:
            values = [u[k] for u in self.utterances if k in u]
            if values or k != "mapping_ms":
                out[k] = round(sum(values) / max(len(values), 1), 6)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "utterances": len(self.utterances),
            "suspect": len(self.suspects),
            "thresholds": asdict(self.thresholds),
            "mean": self.means(),
            "items": self.utterances,
            "bad": len(self.bad),
            "bad_items": self.bad,
        }

    def table(self, limit: int = 20) -> str:
        """A plain-text table: the means, then up to `limit` suspect utterances."""
        lines = [
            f"{len(self.utterances)} utterances, {len(self.suspects)} suspect"
            + (f", {len(self.bad)} bad (not aligned)" if self.bad else "")
        ]
        mean = self.means()
        lines.append("mean: " + "  ".join(f"{k} {v:.3f}" for k, v in mean.items()))
        if self.suspects:
            lines.append(f"{'id':<24} {'focus':>6} {'diag':>6} {'skips':>5} {'reps':>5}  reason")
        for u in self.suspects[:limit]:
            lines.append(
                f"{u['id'][:24]:<24} {u['focus_rate']:6.3f} {u['diagonality']:6.3f} "
                f"{int(u['skipped']):5d} {int(u['repeated']):5d}  {'; '.join(u['suspect'])}"
            )
        if len(self.suspects) > limit:
            lines.append(f"... and {len(self.suspects) - limit} more (see summary.json)")
        return "\n".join(lines)
