"""The targets a FastPitch trains on (`aligner.tasks.fastpitch`): each item's frames per
token from the alignment model's records or another tool's TextGrids (``data.durations``,
read as the Tacotron's guide reads them: `aligner.tasks.guides`), its per-token pitch (the
mean log-F0 of the token's voiced frames, `aligner.data.pitch`, normalized over the
training items) and energy (the mean of the token's normalized log-mel).

An item without durations cannot train a duration model: it is left out and counted.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.data import Dataset

from aligner.config import ConfigError
from aligner.data.collate import collate_tts, pad
from aligner.data.pitch import PitchCache, token_means


def required_durations(
    found: dict[int, torch.Tensor], total: int, split: str
) -> dict[int, torch.Tensor]:
    """`found` (`aligner.tasks.guides.dataset_durations` of a split of `total` items), the
    items without durations counted in one line (a duration model learns from durations
    only); ConfigError when no item has them."""
    if len(found) < total:
        print(
            f"note: {total - len(found)} of {total} {split} items have no durations and are "
            "left out (a duration model learns from durations only)",
            file=sys.stderr,
        )
    if not found:
        raise ConfigError(
            f"data.durations: no {split} item has durations; give the folders `aligner align "
            "--checkpoint ALIGNMENT_MODEL` wrote for the train and valid manifests"
        )
    return found


@dataclass
class PitchStats:
    """Mean and standard deviation of the per-token log-F0 of voiced tokens (training)."""

    mean: float = 0.0
    std: float = 1.0

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "std": self.std}


class FastPitchDataset(Dataset):
    """The items of a `TTSDataset` that have durations, each ``{"id", "tokens" (N,), "mel"
    (T, M) normalized, "durations" (N,) whole frames, "duration_targets" (N,) float (what
    the durations learn: `targets`, by item index as `durations`, else the whole frames),
    "pitch" (N,) normalized log-F0 (0: unvoiced), "energy" (N,)}``."""

    def __init__(
        self,
        base: Any,
        durations: dict[int, torch.Tensor],
        pitch: PitchCache | None,
        targets: dict[int, torch.Tensor] | None = None,
    ):
        keep = sorted(durations)
        base.keep(keep)
        self.base, self.pitch_cache = base, pitch
        self.durations = [durations[i] for i in keep]
        given = targets or {}
        self.targets = [given.get(i, durations[i]).float() for i in keep]
        self.items, self.lengths = base.items, base.lengths
        self.stats = PitchStats()

    def __len__(self) -> int:
        return len(self.base)

    def log_f0(self, index: int) -> torch.Tensor:
        """Per-token mean log-F0 (N,) of item `index` (0 for an unvoiced token)."""
        if self.pitch_cache is None:
            return torch.zeros(len(self.durations[index]))
        f0 = self.pitch_cache.get(self.items[index]["audio"])
        frames = int(self.durations[index].sum())
        f0 = torch.nn.functional.pad(f0[:frames], (0, max(0, frames - len(f0))))
        log = torch.where(f0 > 0, torch.log(f0.clamp(min=1.0)), torch.zeros_like(f0))
        return token_means(log, self.durations[index], voiced_only=True)

    def __getitem__(self, index: int) -> dict[str, Any]:
        example = self.base[index]
        log = self.log_f0(index)
        voiced = log > 0
        pitch = torch.where(voiced, (log - self.stats.mean) / self.stats.std, torch.zeros_like(log))
        energy = token_means(example["mel"].mean(1), self.durations[index], voiced_only=False)
        return {
            **example,
            "durations": self.durations[index],
            "duration_targets": self.targets[index],
            "pitch": pitch,
            "energy": energy,
        }


def pitch_stats(dataset: FastPitchDataset, limit: int) -> PitchStats:
    """`PitchStats` over the voiced tokens of the first `limit` items (0: all)."""
    n = len(dataset) if limit <= 0 else min(limit, len(dataset))
    values = torch.cat([dataset.log_f0(i) for i in range(n)])
    voiced = values[values > 0]
    if voiced.numel() < 2:
        return PitchStats()
    return PitchStats(float(voiced.mean()), max(float(voiced.std()), 1e-3))


def collate_fastpitch(examples: list[dict[str, Any]]) -> dict[str, Any]:
    """`collate_tts` plus ``durations`` (B, N) long, ``duration_targets``, ``pitch`` and
    ``energy`` (B, N) float."""
    batch = collate_tts(examples)
    for key in ("durations", "duration_targets", "pitch", "energy"):
        batch[key] = pad([e[key] for e in examples])[0]
    return batch
