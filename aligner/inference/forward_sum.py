"""The alignment model ready for use (`aligner.families`: ``forward_sum``): text and a
recording -> the monotonic path of its soft alignment; it only aligns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from aligner.inference.speech import TextSpeechModel
from aligner.models.alignment import AlignmentModel


@dataclass
class AlignModel(TextSpeechModel):
    """A trained alignment model (family ``forward_sum``): text and a recording ->
    alignment; its prior spans the frames with sound (`AlignmentModel.prepare`)."""

    network: ClassVar[type] = AlignmentModel

    def _forward(self, src, src_len, mel, mel_len):
        mel, spans = self.model.prepare(self.denormalize(mel), mel, mel_len, self.mel_cfg.power)
        return self.model(src, src_len, mel, mel_len, spans=spans)
