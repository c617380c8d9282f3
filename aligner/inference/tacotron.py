"""The Tacotron family ready for use (`aligner.families`: ``tacotron``): free-running
decoding under the recipe's monotonic window, the decoder prepared for a CPU precision,
and the two roles: `TTSModel` (text -> mel, ``aligner synthesize``) and `VCModel` (a source
speaker's mel -> the target speaker's, ``aligner convert``); both align recordings by
teacher forcing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import torch

from aligner.data.collate import length_batches, pad
from aligner.inference.common import RECIPE_WINDOW, InferenceError
from aligner.inference.speech import Generated, MelSpeechModel, TextSpeechModel
from aligner.models.tacotron.model import Tacotron
from aligner.models.tacotron.precision import PrecisionError, check_precision, prepare_decoder


class FreeRunning:
    """Free-running decoding, for the Tacotron family (TTS, VC)."""

    network: ClassVar[type] = Tacotron

    def prepare(self, precision: str) -> None:
        """On a CPU, the decoder prepared for `precision`
        (`aligner.models.tacotron.precision.prepare_decoder`: fused LSTM cells in fp32,
        whose state_dict then names ``gates`` layers, not a checkpoint's cells; ``fp16``
        or ``int8`` weights)."""
        try:
            check_precision(precision, self.device)
        except PrecisionError as err:
            raise InferenceError(str(err)) from None
        if self.device.type == "cpu":
            prepare_decoder(self.model, precision)

    def decoding_window(self, window: tuple[int, int] | str | None) -> tuple[int, int] | None:
        """The window `generate` decodes under: `window`, or for ``RECIPE_WINDOW`` the one
        the checkpoint's recipe names (None for checkpoints whose recipe names none, such
        as every checkpoint trained before recipes could)."""
        if window == RECIPE_WINDOW:
            return self.model.decoder.synthesis_window
        return None if window is None else (int(window[0]), int(window[1]))

    @torch.no_grad()
    def generate(
        self,
        sources: Sequence[torch.Tensor],
        batch_size: int = 8,
        max_length_ratio: float = 10.0,
        window: tuple[int, int] | str | None = RECIPE_WINDOW,
        stop_threshold: float = 0.5,
    ) -> list[Generated]:
        """Free-running decoding of token ids (N,) or source mels (S, M), in length-sorted
        batches; results in input order. ``window``: the monotonic window ``(back,
        front)``, None for none, or ``RECIPE_WINDOW``: the one the model's recipe names for
        synthesis (``model.decoder.window``; none where it names none)."""
        window = self.decoding_window(window)
        out: list[Generated | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            mel, dec = self.model.generate(
                src,
                lengths.to(self.device),
                stop_threshold=stop_threshold,
                max_length_ratio=max_length_ratio,
                window=window,
            )
            enc_len = self.memory_lengths(lengths)
            for j, i in enumerate(idx):
                t = int(dec.lengths[j])
                steps = -(-t // self.r)
                out[i] = Generated(
                    self.denormalize(mel[j, :t]).cpu(),
                    dec.alignments[j, :steps, : int(enc_len[j])].cpu(),
                    bool(dec.hit_max[j]),
                )
        return out  # type: ignore[return-value]

    def _forward(self, src, src_len, mel, mel_len):
        """Teacher forcing with the prenet's dropout off: it stays on when synthesizing
        (Tacotron 2), but the alignment of a known recording is a measurement and comes out
        the same every time (with it on, the word boundaries of the same checkpoint moved by
        3 ms from run to run)."""
        with self.model.decoder.prenet.deterministic():
            return self.model(src, src_len, mel, mel_len)


@dataclass
class TTSModel(FreeRunning, TextSpeechModel):
    """A trained Tacotron TTS: text -> mel (`generate`), and its alignments of recordings."""


@dataclass
class VCModel(FreeRunning, MelSpeechModel):
    """A trained Tacotron VC: a source speaker's mel -> the target speaker's."""
