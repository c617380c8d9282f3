"""A trained FastPitch (family ``fastpitch``) ready for use: text -> mel at a speaking rate
(`generate`, ``pace``), and the timing it gives a recording of known text (`teacher_force`,
what ``aligner align`` writes and ``score-alignment`` scores); both are the duration
models' (`aligner.inference.duration_models`). Its alignment's rows are frames, its
columns tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import torch

from aligner.alignment.tiers import optional_tokens
from aligner.inference.duration_models import DurationDecoding
from aligner.inference.speech import TextSpeechModel
from aligner.models.fastpitch.model import FastPitch


@dataclass
class FastPitchModel(DurationDecoding, TextSpeechModel):
    """A trained FastPitch: predicted durations, pitch and energy, every frame at once."""

    network: ClassVar[type] = FastPitch

    def length_limit(self, steps: int, source_length: int, ratio: float, pace: float) -> int:
        """``max_length_ratio`` frames per token at this rate."""
        return int(ratio * steps / pace)

    def required(self, source: torch.Tensor) -> torch.Tensor:
        """Every token but the optional ones (pauses, word boundaries)."""
        tokens = self.symbols.decode(source.tolist())
        return torch.from_numpy(~optional_tokens(tokens))
