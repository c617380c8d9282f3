"""The scorer's pairing: the boundaries of a predicted tier against a reference's, in
milliseconds.

Within a tier, the labelled intervals (silences such as ``""``, ``sil``, ``sp`` are left
out when read) are paired in order, and each interval's start and end is one boundary:
its error is predicted minus reference. An item whose prediction is missing, lacks the
tier, or has another number of intervals is counted and named, never dropped silently.
Phone labels are not compared (tools spell phones differently); word labels are, case
and punctuation aside, and an item whose words differ is scored and named (``relabelled``):
the prediction may be of another text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aligner.alignment.intervals import Interval, Tiers, boundary_errors
from aligner.alignment.tiers import PUNCTUATION


@dataclass
class TierScore:
    """Boundary errors of one tier over all matched items."""

    errors: list[float] = field(default_factory=list)
    per_item: dict[str, float] = field(default_factory=dict)
    unmatched: list[dict[str, str]] = field(default_factory=list)
    relabelled: list[dict[str, str]] = field(default_factory=list)

    def add(
        self,
        uid: str,
        ref: list[Interval] | None,
        pred: Tiers | None,
        tier: str,
        missing: str = "no prediction",
    ) -> None:
        """Pair item `uid`'s predicted `tier` (from `pred`, None: no prediction, for the
        reason `missing`) with its reference intervals `ref` (None or empty: the reference
        has none; nothing counted)."""
        if not ref:
            return
        if pred is None:
            self.unmatched.append({"id": uid, "reason": missing})
        elif tier not in pred:
            has = ", ".join(repr(name) for name in pred) or "none"
            self.unmatched.append({"id": uid, "reason": f"no '{tier}' tier (its tiers: {has})"})
        elif len(pred[tier]) != len(ref):
            reason = f"{len(pred[tier])} {tier} predicted, {len(ref)} in the reference"
            self.unmatched.append({"id": uid, "reason": reason})
        else:
            errors = boundary_errors(ref, pred[tier])
            self.errors.extend(errors)
            if tier == "words":
                self._compare_labels(uid, ref, pred[tier])
            self.per_item[uid] = 1000 * float(np.mean(np.abs(errors)))

    def _compare_labels(self, uid: str, ref: list[Interval], pred: list[Interval]) -> None:
        """Name item `uid` in ``relabelled`` where a paired word's label differs (case and
        surrounding punctuation aside), with the first such pair."""
        for r, p in zip(ref, pred):
            if _word_key(r.label) != _word_key(p.label):
                n = sum(_word_key(a.label) != _word_key(b.label) for a, b in zip(ref, pred))
                self.relabelled.append(
                    {"id": uid, "words": str(n), "first": f"{p.label!r} for {r.label!r}"}
                )
                return

    def summary(self, worst: int = 5) -> dict[str, Any]:
        """Items and boundaries matched; mean, median and signed mean (bias) of the absolute
        errors in ms; % within 10, 20 and 50 ms; the `worst` items; the unmatched ones."""
        ms = 1000 * np.abs(np.array(self.errors)) if self.errors else np.zeros(0)
        out: dict[str, Any] = {"items": len(self.per_item), "boundaries": len(self.errors)}
        if len(ms):
            out.update(
                mean_ms=round(float(ms.mean()), 2),
                median_ms=round(float(np.median(ms)), 2),
                bias_ms=round(1000 * float(np.mean(self.errors)), 2),
                **{f"within_{k}ms": round(100 * float((ms <= k).mean()), 1) for k in (10, 20, 50)},
            )
        ranked = sorted(self.per_item.items(), key=lambda kv: -kv[1])[:worst]
        out["worst"] = [{"id": uid, "mean_ms": round(v, 2)} for uid, v in ranked]
        out["unmatched"] = self.unmatched
        if self.relabelled:
            out["relabelled"] = self.relabelled
        return out


_MARKS = "".join(PUNCTUATION) + "'[]{}‘’"  # around a word as tools write it


def _word_key(label: str) -> str:
    return label.strip(_MARKS).casefold()
