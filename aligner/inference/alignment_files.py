"""What ``aligner align`` (`aligner.inference.align`) writes per utterance and for the
run: the files of each alignment (the record, its TextGrid and durations are
`aligner.alignment.record`'s formats; the weights and a heatmap beside them), the core's
metrics, and the summary of suspect alignments.

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

from aligner.alignment.record import (
    RECORD_SUFFIX,
    Alignment,
    token_label,
    write_record_textgrid,
)
from aligner.attention import metrics
from aligner.attention.plot import save_alignment_png
from aligner.files import write_atomic
from aligner.inference.common import guessed_line, guessed_words


@dataclass(frozen=True)
class SuspectThresholds:
    """When an alignment is flagged as suspect.

    min_focus: mean focus rate (mean over decoder steps of the largest weight) below
        which the attention is too diffuse to trust (0.4: the "has aligned" bar of the
        free-running validation).
    max_skips: skipped tokens allowed (never the most attended token of a step and less
        than half a step's weight in total; ``metrics.skipped_tokens``); None: skips make
        nothing suspect (VC: source frames are rightly passed over where the source is
        slower than the target or pauses longer).
    max_repeats: repeated tokens allowed (attended again after the focus moved on;
        ``metrics.repeated_tokens``); None: repeats make nothing suspect.
    """

    min_focus: float = 0.4
    max_skips: int | None = 0
    max_repeats: int | None = 0

    def reasons(self, m: dict[str, float]) -> list[str]:
        """The reasons (short strings) why metrics `m` of one utterance are suspect."""
        out = []
        if m["focus_rate"] < self.min_focus:
            out.append(f"focus {m['focus_rate']:.2f} < {self.min_focus}")
        if self.max_skips is not None and m["skipped"] > self.max_skips:
            out.append(f"{m['skipped']:g} skipped")  # a long recording's: a mean per sentence
        if self.max_repeats is not None and m["repeated"] > self.max_repeats:
            out.append(f"{m['repeated']:g} repeated")
        return out


def utterance_metrics(
    alignments: torch.Tensor,
    dec_lengths: torch.Tensor,
    enc_lengths: torch.Tensor,
    required: torch.Tensor | None = None,
    r: int = 1,
) -> list[dict[str, float]]:
    """The core's alignment metrics per item: (B, S, N) with lengths (B,) -> B dicts with
    ``focus_rate``, ``diagonality``, ``entropy``, ``skipped``, ``repeated``, ``longest_hold``.
    ``required (B, N)``: the positions the skip count covers (default: all); ``r``: frames
    per decoder step."""
    values = metrics.alignment_metrics(alignments.float(), dec_lengths, enc_lengths, required, r)
    b = alignments.size(0)
    return [{k: round(float(v[i]), 6) for k, v in values.items()} for i in range(b)]


def write_utterance(
    alignment: Alignment, out_dir: Path, png: bool = True, force: bool = False
) -> dict[str, Any]:
    """Write ``ID.durations.json``, ``ID.TextGrid``, ``ID.npy`` (weights), ``ID.png`` and
    ``durations/ID.npy`` (the frames of each token, int64 ``(N,)``: what FastSpeech-style
    trainers read) into `out_dir` (existing files replaced only with `force`); returns
    the durations record (with the metrics under ``metrics``)."""
    utt = alignment.utt
    exts = (RECORD_SUFFIX, ".TextGrid", ".npy")
    paths = [out_dir / f"{utt.id}{ext}" for ext in exts] + [out_dir / "durations" / f"{utt.id}.npy"]
    for path in paths if not force else []:
        if path.exists():
            raise FileExistsError(f"{path} exists; pass --force to overwrite it")
    record = {**alignment.record, "metrics": dict(utt.metrics)}
    text = json.dumps(record, indent=1) + "\n"
    write_atomic(paths[0], lambda fh: fh.write(text), "w", encoding="utf-8")
    write_record_textgrid(record, paths[1])
    write_atomic(paths[2], lambda fh: np.save(fh, utt.weights.astype(np.float32)))
    write_atomic(paths[3], lambda fh: np.save(fh, np.asarray(record["frames"], dtype=np.int64)))
    if png:
        save_alignment_png(
            utt.weights,
            out_dir / f"{utt.id}.png",
            tokens=[token_label(t) for t in utt.tokens],
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
    guessed: list[str] = field(default_factory=list)  # words said by rules, not a dictionary

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
            **({"guessed_words": self.guessed} if self.guessed else {}),
        }

    def guessed_note(self) -> str:
        """One line naming the words the tokenizer said by rules (empty when none)."""
        return f"note: {guessed_line(self.guessed)}" if self.guessed else ""

    def take_guessed(self, speech: Any) -> None:
        """The words `speech`'s tokenizer said by rules (`guessed_words`)."""
        self.guessed = guessed_words(speech)

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
