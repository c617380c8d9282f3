"""A trained FastVC (family ``fastvc``) ready for use: a source speaker's mel -> the target
speaker's, every frame at once at a speaking rate (`generate`, ``pace``), and the mapping
it gives a parallel pair (`teacher_force`: what ``aligner align`` writes and scores); both
are the duration models' (`aligner.inference.duration_models`).

Its alignment is a hard path, one row per target frame, over the encoder's steps
(``reduction`` source frames each): the step each target frame was made from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aligner.inference.duration_models import DurationDecoding
from aligner.inference.speech import MelSpeechModel
from aligner.models.fastvc import FastVC


@dataclass
class FastVCModel(DurationDecoding, MelSpeechModel):
    """A trained FastVC: predicted target frames per source step, decoded in parallel."""

    network: ClassVar[type] = FastVC

    def length_limit(self, steps: int, source_length: int, ratio: float, pace: float) -> int:
        """``max_length_ratio`` times the source's frames."""
        return int(ratio * source_length)
