"""Validation against reference timings: the truth curve (``valid/word_boundary_ms``,
``valid/phone_boundary_ms``) that TTS and alignment training log beside the focus rate,
and VC's (``valid/mapping_ms``: the source-to-target mapping at both voices' boundaries)."""

from __future__ import annotations

from typing import Any

import numpy as np

from aligner.alignment.intervals import Timings, boundary_errors, mapping_errors
from aligner.audio.features import MelConfig
from aligner.audio.io import load_audio
from aligner.audio.trim import PauseRule


class References:
    """The validation items' reference timings by id, and the pause frames of their audio
    (`PauseRule`, computed once per item): the truth curve groups tokens into words and
    phones the way `aligner align` does."""

    def __init__(
        self, items: list[dict[str, Any]], mel_cfg: MelConfig, rule: PauseRule = PauseRule()
    ) -> None:
        timed = [it for it in items if it.get("timings")]
        self.timings = {str(it["id"]): Timings.from_dict(it["timings"]) for it in timed}
        self.audio = {str(it["id"]): it.get("audio") for it in timed}
        self.mel_cfg, self.rule = mel_cfg, rule
        self._pauses: dict[str, np.ndarray | None] = {}

    def __contains__(self, uid: object) -> bool:
        return str(uid) in self.timings

    def get(self, uid: object) -> Timings | None:
        return self.timings.get(str(uid))

    def pauses(self, uid: object, n_frames: int) -> np.ndarray | None:
        """``(n_frames,)`` bool pause frames of the item's audio; None when its audio cannot
        be read or its frames are not the features' (a corpus that trims its audio)."""
        key = str(uid)
        if key not in self._pauses:
            cfg, path = self.mel_cfg, self.audio.get(key)
            try:
                wav = load_audio(path, cfg.sample_rate)[0] if path else None
            except (OSError, ValueError):
                wav = None
            self._pauses[key] = (
                None
                if wav is None
                else self.rule.frames(
                    wav, cfg.sample_rate, cfg.hop_length, cfg.num_frames(wav.numel())
                )
            )
        found = self._pauses[key]
        return found if found is not None and found.size == n_frames else None


class TruthErrors:
    """Absolute word and phone boundary errors (ms) gathered over a validation, and the
    items whose words or phones could not be paired with the reference."""

    def __init__(self) -> None:
        self.errors: dict[str, list[float]] = {"words": [], "phones": []}  # signed
        self.mapping: list[float] = []  # VC: signed errors of the source-to-target mapping
        self.unmatched = 0
        self.items = 0

    def add(self, reference: Any, predicted: dict[str, list[Any]]) -> None:
        self.items += 1
        for tier, errors in self.errors.items():
            if tier not in predicted or not reference.tier(tier):
                continue
            try:
                errors.extend(
                    1000 * e for e in boundary_errors(reference.tier(tier), predicted[tier])
                )
            except ValueError:  # another number of words or phones
                self.unmatched += 1

    def add_mapping(self, durations: Any, source_step: float, frame: float, pair: Any) -> None:
        """VC: the errors of the mapping that `durations` (target frames per encoder
        position, of `source_step` seconds) implies at the reference boundaries of a
        parallel pair ``(source Timings, target Timings)``: phones, else words
        (`aligner.alignment.intervals.mapping_errors`, as ``aligner align`` scores it)."""
        self.items += 1
        for tier in ("phones", "words"):
            try:
                errors = mapping_errors(durations, source_step, frame, *pair, tier)
            except ValueError:  # another number of phones in the two voices
                continue
            if errors:
                self.mapping.extend(1000 * e for e in errors)
                return
        self.unmatched += 1

    def means(self) -> dict[str, float]:
        """``word_boundary_ms``, ``phone_boundary_ms`` (mean absolute errors), their signed
        means ``word_bias_ms``, ``phone_bias_ms`` (negative: early), VC's ``mapping_ms`` and
        ``mapping_bias_ms``, and ``truth_unmatched``."""
        if not self.items:
            return {}
        out = {"truth_unmatched": float(self.unmatched)}
        tiers = [(self.errors["words"], "word_boundary"), (self.errors["phones"], "phone_boundary")]
        for errors, name in [*tiers, (self.mapping, "mapping")]:
            if errors:
                out[f"{name}_ms"] = sum(map(abs, errors)) / len(errors)
                out[f"{name.split('_')[0]}_bias_ms"] = sum(errors) / len(errors)
        return out


def timing_pairs(items: Any) -> dict[str, tuple[Timings, Timings]]:
    """Both voices' reference timings (``timings``, ``target_timings``) of the parallel
    items that have them, by item id: what `TruthErrors.add_mapping` scores against."""
    return {
        str(it["id"]): (Timings.from_dict(it["timings"]), Timings.from_dict(it["target_timings"]))
        for it in items
        if it.get("timings") and it.get("target_timings")
    }
