"""What the runtimes of the duration models share (`aligner.inference.fastpitch`'s
`FastPitchModel`, `aligner.inference.fastvc`'s `FastVCModel`): no attention and no window,
every frame decoded at once from the predicted frames of each encoder position (tokens, or
a source mel's steps) at a speaking rate (`generate`), and the model's own timing of a
recording whose length is known (`teacher_force`: what ``aligner align`` writes and
scores).

Their alignment is a hard path, one row per frame (``r = 1``): the encoder position each
frame was made from, so the alignment plots, durations records and timings read it as
they read any family's.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from aligner.data.collate import length_batches, pad
from aligner.inference.common import RECIPE_WINDOW
from aligner.inference.speech import Generated
from aligner.models.fastpitch.layers import fit_durations, token_path


class DurationDecoding:
    """Mixed into a `SpeechModel` before it: `generate` and `teacher_force` through the
    network's ``infer(src, lengths, pace)`` (a `DurationOutput`) and `predicted_frames`.
    A family sets how long an output may grow (`length_limit`) and, for text, which
    tokens must keep a frame (`required`)."""

    def decoding_window(self, window: tuple[int, int] | str | None) -> None:
        """No attention, no window: the durations decide where each frame comes from."""
        return None

    def length_limit(self, steps: int, source_length: int, ratio: float, pace: float) -> int:
        """The most frames an output of `steps` encoder positions, from a source of
        `source_length` (tokens or frames), may have at ``max_length_ratio`` `ratio`."""
        raise NotImplementedError

    def required(self, source: torch.Tensor) -> torch.Tensor | None:
        """The encoder positions (N,) bool of `source` that must keep a frame when the
        predicted durations are fitted to a recording (None: any may get none)."""
        return None

    def _required_batch(self, sources: Sequence[torch.Tensor]) -> torch.Tensor | None:
        """`required` of a batch's sources, padded as they are (B, N) bool (None: none)."""
        masks = [self.required(s) for s in sources]
        if any(m is None for m in masks):
            return None
        return pad(masks)[0]  # type: ignore[arg-type]

    def predicted_frames(
        self, src: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A padded batch of sources -> (predicted frames (B, N) float >= 0, the valid
        encoder positions (B, N)), both on the CPU."""
        _, mask, log_durations = self.model.encode(src, lengths)  # type: ignore[attr-defined]
        return torch.expm1(log_durations.float()).clamp(min=0).cpu(), mask.cpu()

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
        """Sources (token ids (N,) or normalized mels (S, M)) -> `Generated` (mel (T, M)
        denormalized, the hard path (T, N) over the encoder positions, whether it was cut),
        in length-sorted batches, results in input order. ``pace``: the speaking rate (2:
        twice as fast, every duration halved). An output longer than `length_limit` is cut
        there (``hit_max``). ``window`` and ``stop_threshold`` are the attention decoders'
        and unused here."""
        out: list[Generated | None] = [None] * len(sources)
        device = self.device  # type: ignore[attr-defined]
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(device) for i in idx])
            need = self._required_batch([sources[i] for i in idx])
            res = self.model.infer(src, lengths.to(device), pace, need)  # type: ignore[attr-defined]
            for j, i in enumerate(idx):
                n = int(res.enc_mask[j].sum())
                durations = res.durations[j, :n].cpu()
                limit = max(1, self.length_limit(n, int(lengths[j]), max_length_ratio, pace))
                t = min(int(durations.sum()), limit)
                out[i] = Generated(
                    self.denormalize(res.mel_post[j, :t]).cpu(),  # type: ignore[attr-defined]
                    token_path(durations, t),
                    int(durations.sum()) > limit,
                )
        return out  # type: ignore[return-value]

    @torch.no_grad()
    def teacher_force(
        self, sources: Sequence[torch.Tensor], mels: Sequence[torch.Tensor], batch_size: int = 8
    ) -> list[torch.Tensor]:
        """The hard paths (T_i, N_i) of sources with recordings of T_i frames (their mels
        (T_i, M)): the predicted frames scaled to each recording's length
        (`fit_durations`; every `required` position at least one frame). The recording
        gives its length only: this is the model's own timing, not a forced alignment."""
        out: list[torch.Tensor | None] = [None] * len(sources)
        device = self.device  # type: ignore[attr-defined]
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(device) for i in idx])
            frames, mask = self.predicted_frames(src, lengths.to(device))
            for j, i in enumerate(idx):
                n = int(mask[j].sum())
                durations = fit_durations(frames[j, :n], len(mels[i]), self.required(sources[i]))
                out[i] = token_path(durations)
        return out  # type: ignore[return-value]
