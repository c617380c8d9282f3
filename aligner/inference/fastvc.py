"""A trained FastVC (family ``fastvc``) ready for use: a source speaker's mel -> the target
speaker's, every frame at once at a speaking rate (`generate`, ``pace``), and the mapping
it gives a parallel pair (`teacher_force`: what ``aligner align`` writes and scores).

Its alignment is a hard path, one row per target frame (``r = 1``), over the encoder's
steps (``reduction`` source frames each): the step each target frame was made from.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from aligner.data.collate import length_batches, pad
from aligner.inference.common import RECIPE_WINDOW
from aligner.inference.speech import Generated, MelSpeechModel
from aligner.models.fastpitch.layers import fit_durations, token_path
from aligner.models.fastvc import FastVC


@dataclass
class FastVCModel(MelSpeechModel):
    """A trained FastVC: predicted target frames per source step, decoded in parallel."""

    network: ClassVar[type] = FastVC

    def decoding_window(self, window: tuple[int, int] | str | None) -> None:
        """No attention, no window: the durations decide which step each frame comes from."""
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
        """Normalized source mels (S, M) -> `Generated` (mel (T, M) denormalized, the hard
        path (T, N) over the encoder's steps, whether it was cut), in length-sorted batches,
        results in input order. An output longer than ``max_length_ratio`` times its source
        is cut there (``hit_max``). ``window`` and ``stop_threshold`` are the attention
        decoders' and unused here."""
        out: list[Generated | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            res = self.model.infer(src, lengths.to(self.device), pace)
            for j, i in enumerate(idx):
                n = int(res.enc_mask[j].sum())
                durations = res.durations[j, :n].cpu()
                limit = max(1, int(max_length_ratio * int(lengths[j])))
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
        """The hard paths (T_i, N_i) of source mels with target recordings of T_i frames
        (their mels (T_i, M)): the predicted frames per step scaled to each recording's
        length (`fit_durations`). The recording gives its length only: this is the model's
        own mapping of the source, not a forced alignment."""
        out: list[torch.Tensor | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            enc, mask = self.model.encoder(src, lengths.to(self.device))
            frames = torch.expm1(self.model.duration(enc, mask).float()).clamp(min=0).cpu()
            for j, i in enumerate(idx):
                n = int(mask[j].sum())
                out[i] = token_path(fit_durations(frames[j, :n], len(mels[i])))
        return out  # type: ignore[return-value]
