"""A trained FastPitch (family ``fastpitch``) ready for use: text -> mel at a speaking rate
(`generate`, ``pace``), and the timing it gives a recording of known text (`teacher_force`,
what ``aligner align`` writes and ``score-alignment`` scores).

Its alignment is a hard path, one row per mel frame (``r = 1``): the token each frame
says, so the alignment plots, durations records and timings of ``aligner synthesize`` and
``aligner align`` read it as they read any family's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from aligner.alignment.tiers import optional_tokens
from aligner.data.collate import length_batches, pad
from aligner.inference.common import RECIPE_WINDOW
from aligner.inference.speech import Generated, TextSpeechModel
from aligner.models.fastpitch.layers import fit_durations, token_path
from aligner.models.fastpitch.model import FastPitch


@dataclass
class FastPitchModel(TextSpeechModel):
    """A trained FastPitch: predicted durations, pitch and energy, every frame at once."""

    network: ClassVar[type] = FastPitch

    def decoding_window(self, window: tuple[int, int] | str | None) -> None:
        """No attention, no window: the durations decide where each token is said."""
        return None

    @torch.no_grad()
    def generate(
        self,
        sources: Sequence[torch.Tensor],
        batch_size: int = 8,
        max_length_ratio: float = 10.0,
        window: tuple[int, int] | str | None = RECIPE_WINDOW,
        stop_threshold: float = 0.5,
        pace: float = 1.0,
    ) -> list[Generated]:
        """Token ids (N,) -> `Generated` (mel (T, M) denormalized, the hard path (T, N),
        whether it was cut), in length-sorted batches, results in input order. ``pace``:
        the speaking rate (2: twice as fast, every duration halved). An output longer than
        ``max_length_ratio`` frames per token at this rate is cut there (``hit_max``).
        ``window`` and ``stop_threshold`` are the attention decoders' and unused here."""
        out: list[Generated | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            res = self.model.infer(src, lengths.to(self.device), pace)
            for j, i in enumerate(idx):
                n = int(lengths[j])
                durations = res.durations[j, :n].cpu()
                limit = max(1, int(max_length_ratio * n / pace))
                t = min(int(durations.sum()), limit)
                out[i] = Generated(
                    self.denormalize(res.mel_post[j, :t]).cpu(),
                    token_path(durations, t),
                    int(durations.sum()) > limit,
                )
        return out  # type: ignore[return-value]

    @torch.no_grad()
    def teacher_force(
        self, sources: Sequence[torch.Tensor], mels: Sequence[torch.Tensor], batch_size: int = 8
    ) -> list[torch.Tensor]:
        """The hard paths (T_i, N_i) of sources with recordings of T_i frames (their mels
        (T_i, M)): the predicted durations scaled to each recording's length
        (`fit_durations`; every sound at least one frame). The recording gives its length
        only: this is the model's own timing of the text, not a forced alignment."""
        out: list[torch.Tensor | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            _, _, log_durations = self.model.encode(src, lengths.to(self.device))
            frames = torch.expm1(log_durations.float()).clamp(min=0).cpu()
            for j, i in enumerate(idx):
                n = int(lengths[j])
                tokens = self.symbols.decode(sources[i].tolist())
                required = torch.from_numpy(~optional_tokens(tokens))
                durations = fit_durations(frames[j, :n], len(mels[i]), required)
                out[i] = token_path(durations)
        return out  # type: ignore[return-value]
