"""The vocoder a command names (``--vocoder``), its errors as one-line InferenceErrors; the
vocoders themselves are `aligner.models.vocoders.base`'."""

from __future__ import annotations

from typing import Any

from aligner.audio.features import MelConfig
from aligner.inference.common import InferenceError
from aligner.models.vocoders.base import Vocoder, VocoderError
from aligner.models.vocoders.base import load_vocoder as _load


def load_vocoder(spec: str | None, cfg: MelConfig, **options: Any) -> Vocoder:
    """`aligner.models.vocoders.base.load_vocoder` (its options: ``griffin_lim_iters``,
    ``device``), raising InferenceError."""
    try:
        return _load(spec, cfg, **options)
    except VocoderError as err:
        raise InferenceError(str(err)) from None
