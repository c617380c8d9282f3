"""From a path to a model ready for use, for every family.

``load_model(path)`` reads the checkpoint through `aligner.checkpoint` (the one owner of
checkpoint files: a file, or an experiment folder meaning its best.pt, else its latest),
finds the family and task that trained it, and returns its role's runtime class
(`aligner.families`): `TTSModel`, `VCModel`, `AlignModel` (`aligner.inference.speech`),
`TextModel` (`aligner.inference.text`) or a vocoder (`aligner.models.vocoders.base`).
``load_speech_model(path, purpose)`` does the same for a speech model that can do
`purpose` (``synthesize``, ``convert`` or ``align``), asking the role, never a task name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from aligner.checkpoint import CheckpointError, checkpoint_family, read_checkpoint
from aligner.families import Role, role
from aligner.inference.common import InferenceError
from aligner.inference.speech import SpeechModel
from aligner.models.tacotron.precision import PrecisionError, check_precision

# what a caller wants of a speech model -> whether a role can do it
PURPOSES: dict[str, Callable[[Role], bool]] = {
    "synthesize": lambda r: r.reads == "text" and r.writes == "mel" and r.free_running,
    "convert": lambda r: r.reads == "mel" and r.writes == "mel" and r.free_running,
    "align": lambda r: r.aligns,
}


def runtime_class(found: Role) -> Any:
    """The class (or loader) of a role's ``runtime`` (``module:Class``)."""
    module, name = found.runtime.split(":")
    return getattr(importlib.import_module(module), name)


def _read(path: str | Path) -> tuple[Path, dict[str, Any], str, str]:
    """(file, checkpoint dict, family, task); InferenceError naming the file."""
    try:
        file, ckpt = read_checkpoint(path)
        family, task = checkpoint_family(ckpt, file)
    except CheckpointError as err:
        raise InferenceError(str(err)) from None
    return file, ckpt, family, task


def load_model(path: str | Path, device: str | torch.device = "cpu"):
    """The model of any ``aligner train`` checkpoint (file or experiment folder), as its
    role's runtime class; InferenceError (one line, naming the file) for a missing,
    corrupt or foreign checkpoint."""
    file, ckpt, family, task = _read(path)
    found = role(family, task)
    model = runtime_class(found).from_checkpoint(ckpt, file, found, device)
    if isinstance(model, SpeechModel):
        model.prepare("fp32")
    return model


def load_speech_model(
    path: str | Path,
    purpose: str | None = None,
    device: str | torch.device = "cpu",
    precision: str = "fp32",
) -> SpeechModel:
    """A speech checkpoint (file or experiment folder) -> its family's model in eval mode,
    checked to be able to do `purpose` (``synthesize``, ``convert``, ``align``; None: any
    speech model). InferenceError (one line, naming the file and the command that uses
    it) otherwise. A decoder that runs free is prepared for `precision` on a CPU (fused
    LSTM cells in fp32, ``fp16`` or ``int8`` weights)."""
    if purpose is not None and purpose not in PURPOSES:
        raise InferenceError(
            f"purpose must be one of {', '.join(PURPOSES)}, got {purpose!r} (what the model "
            "is to do, not its task: 'tts' is now 'synthesize', 'vc' is 'convert')"
        )
    try:
        check_precision(precision, device)
    except PrecisionError as err:
        raise InferenceError(str(err)) from None
    file, ckpt, family, task = _read(path)
    found = role(family, task)
    cls = runtime_class(found)
    if not (isinstance(cls, type) and issubclass(cls, SpeechModel)):
        use = found.verb or "its own command"
        raise InferenceError(
            f"{file} is a {family} {task} checkpoint, not a speech model (tts, vc or align); "
            f"use {'--vocoder' if found.writes == 'wave' else f'`{use}`'} with it"
        )
    if purpose is not None and not PURPOSES[purpose](found):
        raise InferenceError(
            f"{file} is a {family} {task} checkpoint, which cannot {purpose}; "
            f"use `{found.verb}` with it"
        )
    speech = cls.from_checkpoint(ckpt, file, found, device)
    speech.prepare(precision)
    return speech
