"""From a path to a model ready for use: the one resolver of checkpoint paths and the
loaders of every model family.

``resolve_checkpoint(path)``: a checkpoint file is itself; an experiment folder (or its
``checkpoints/`` folder) means its ``best.pt`` (the lowest validation loss), else its
latest ``ckpt-STEP.pt`` (a run that has not validated yet). The command line, the demo,
the egs stages and Python users all go through it.

``load_model(path)`` reads the checkpoint's task and returns the family's class:
`TTSModel`, `VCModel`, `AlignModel` (`aligner.inference.speech`), `TextModel`
(`aligner.inference.text`) or a vocoder (`aligner.models.vocoders`); ``load_speech_model(path, task)`` does the same for a speech
task it checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from aligner.checkpoint import CheckpointError, checkpoint_file, load_checkpoint
from aligner.inference.common import InferenceError
from aligner.inference.speech import FAMILIES, NETWORKS, SpeechModel

TEXT_TASKS = ("g2p", "nmt")


def resolve_checkpoint(path: str | Path) -> Path:
    """The checkpoint file `path` names (`aligner.checkpoint.checkpoint_file`: a file, or an
    experiment folder: best.pt, else the latest); InferenceError (one line) for a folder
    without checkpoints."""
    try:
        return checkpoint_file(path)
    except CheckpointError as err:
        raise InferenceError(str(err)) from None


def read_checkpoint(path: str | Path) -> tuple[Path, dict[str, Any]]:
    """The resolved file and its checkpoint dict; InferenceError naming the file."""
    file = resolve_checkpoint(path)
    try:
        return file, load_checkpoint(file, map_location="cpu")
    except CheckpointError as err:
        raise InferenceError(str(err)) from None


def checkpoint_task(ckpt: dict[str, Any]) -> str | None:
    """The task a checkpoint was trained for (``tts``, ``vc``, ``align``, ``g2p``, ...)."""
    return (ckpt.get("symbols") or {}).get("task") or (ckpt.get("config") or {}).get("task")


def load_model(path: str | Path, device: str | torch.device = "cpu"):
    """The model of any ``aligner train`` checkpoint (file or experiment folder), as its
    family's class; InferenceError (one line, naming the file) for a missing, corrupt or
    foreign checkpoint."""
    file, ckpt = read_checkpoint(path)
    task = checkpoint_task(ckpt)
    if task in TEXT_TASKS:
        from aligner.inference.text import load_text_model

        return load_text_model([file], task)
    if task == "vocoder":
        from aligner.inference.vocoders import load_vocoder

        return load_vocoder(str(file), _vocoder_features(ckpt, file), device=device)
    if task not in FAMILIES:
        raise InferenceError(f"{file} is a {task!r} checkpoint, which no loader knows")
    return _prepared(_speech(ckpt, task, file, device), task, device, "fp32")


def _prepared(speech: SpeechModel, task: str, device, precision: str) -> SpeechModel:
    """A TTS or VC model on the CPU with its decoder prepared for `precision`
    (`aligner.inference.precision.prepare_decoder`: fused LSTM cells in fp32, whose
    state_dict then names ``gates`` layers, not a checkpoint's cells); others as they are."""
    from aligner.inference.precision import prepare_decoder

    if task != "align" and torch.device(device).type == "cpu":
        prepare_decoder(speech.model, precision)
    return speech


def _vocoder_features(ckpt: dict[str, Any], file: Path):
    """The mel settings a vocoder checkpoint was trained on."""
    from aligner.audio.features import MelConfig

    try:
        return MelConfig.from_dict((ckpt.get("symbols") or {})["mel"])
    except (KeyError, TypeError, ValueError) as err:
        raise InferenceError(f"{file}: its mel settings are missing ({err!r})") from None


def load_speech_model(
    path: str | Path,
    task: str | None = None,
    device: str | torch.device = "cpu",
    precision: str = "fp32",
) -> SpeechModel:
    """A speech checkpoint (file or experiment folder) -> its family's model in eval mode.

    `task` (``"tts"``, ``"vc"`` or ``"align"``: the alignment model, which only aligns) is
    checked against the checkpoint's; InferenceError (one line, naming the file) for a
    missing, corrupt or foreign checkpoint or the wrong task. On the CPU a Tacotron
    decoder is prepared for `precision` (`aligner.inference.precision.prepare_decoder`:
    fused LSTM cells in fp32, ``fp16`` or ``int8`` weights).
    """
    from aligner.inference.precision import check_precision

    check_precision(precision, device)
    file, ckpt = read_checkpoint(path)
    found = checkpoint_task(ckpt)
    if found == "vocoder":
        raise InferenceError(
            f"{file} is a vocoder checkpoint: give it as --vocoder, with a TTS or VC "
            "checkpoint as --checkpoint"
        )
    if found not in FAMILIES:
        raise InferenceError(
            f"{file} is a {found!r} checkpoint, not a speech one (tts, vc or align); "
            "use `aligner g2p`/`aligner translate` for text models"
        )
    if task is not None and found != task:
        raise InferenceError(
            f"{file} is a {found} checkpoint, not {task}; use `{FAMILIES[found].verb}` with it"
        )
    if precision != "fp32" and found == "align":
        raise InferenceError(f"{file}: --precision {precision} is for TTS and VC decoders")
    return _prepared(_speech(ckpt, found, file, device), found, device, precision)


def _speech(ckpt: dict[str, Any], task: str, path: Path, device) -> SpeechModel:
    """Rebuild the network and front end from the checkpoint's ``symbols`` (written by
    the tasks: `aligner.tasks.speech_data.TextSpeechData.symbols` for TTS and the
    alignment model, `aligner.tasks.vc` for VC: ``model``, ``mel``, ``stats``, ...)."""
    from aligner.config import ConfigError

    symbols = ckpt.get("symbols") or {}
    front = _front_end(symbols, task, path)
    try:
        model = NETWORKS[task].from_symbols(symbols, ckpt["model"])
    except (KeyError, ConfigError, RuntimeError, ValueError) as err:
        first = str(err).splitlines()[0]
        raise InferenceError(f"{path}: weights do not match its model config ({first})") from None
    model.eval().to(device)
    return FAMILIES[task](model=model, step=int(ckpt.get("step", 0)), path=path, **front)


def _front_end(symbols: dict[str, Any], task: str, path: Path) -> dict[str, Any]:
    """The checkpoint's ``symbols`` dict -> the family's keyword arguments."""
    from aligner.audio.features import MelConfig, MelStats
    from aligner.text.symbols import SymbolTable
    from aligner.text.tokenizers import tokenizer_from_dict

    def stats(key: str) -> MelStats | None:
        return MelStats.from_dict(symbols[key]) if symbols.get(key) else None

    try:
        front: dict[str, Any] = {"mel_cfg": MelConfig.from_dict(symbols["mel"])}
        front["stats"] = stats("stats")
        if FAMILIES[task].needs == ("audio", "text"):
            front["symbols"] = SymbolTable.from_dict(symbols["symbols"])
            front["tokenizer"] = tokenizer_from_dict(symbols["tokenizer"])
            front["add_eos"] = bool(symbols.get("add_eos", False))
            front["add_bos"] = bool(symbols.get("add_bos", False))
        else:
            front["src_stats"] = stats("stats_src")
    except (KeyError, TypeError, ValueError) as err:
        raise InferenceError(
            f"{path}: its symbols/feature settings are incomplete ({err!r}); "
            "was it written by `aligner train`?"
        ) from None
    return front
