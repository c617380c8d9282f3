"""The alignment model ready for use (`aligner.families`: ``forward_sum``): text and a
recording -> the monotonic path of its soft alignment; it only aligns. Its checkpoint
may carry each phone's usual length (``usual_frames``), which the tiers read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from aligner.inference.speech import TextSpeechModel
from aligner.models.alignment import AlignmentModel


@dataclass
class AlignModel(TextSpeechModel):
    """A trained alignment model (family ``forward_sum``): text and a recording ->
    alignment; its prior spans the frames with sound (`AlignmentModel.prepare`)."""

    usual_frames: dict[str, float] | None = None

    network: ClassVar[type] = AlignmentModel

    @classmethod
    def front_end(cls, symbols: dict[str, Any]) -> dict[str, Any]:
        """`TextSpeechModel`'s, and each phone's usual length in frames (``usual_frames``,
        `aligner.alignment.lengths`) where the checkpoint has them."""
        return {**super().front_end(symbols), "usual_frames": symbols.get("usual_frames")}

    def _forward(self, src, src_len, mel, mel_len):
        mel, spans = self.model.prepare(self.denormalize(mel), mel, mel_len, self.mel_cfg.power)
        return self.model(src, src_len, mel, mel_len, spans=spans)
