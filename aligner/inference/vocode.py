"""``aligner vocode``: saved log-mels to audio with any vocoder (`aligner.inference.vocoders`),
so mels from this toolkit (``--save-mel``) or elsewhere can be heard and vocoders compared
on the same input.

Input: the ``--save-mel`` format, one ``.npy`` of ``frames x n_mels`` (natural log, not
normalized) with the ``mel_config.json`` of its folder (the feature settings), as a file
or a folder of them. A batch writes every good item, names each bad one (unreadable,
another shape, not finite) and counts it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from aligner.audio.features import MelConfig
from aligner.audio.io import save_audio
from aligner.inference.common import InferenceError, check_audio_out, output_names
from aligner.inference.vocoders import load_vocoder

MEL_CONFIG = "mel_config.json"
LAYOUT_KEYS = ("layout", "log")  # written beside the settings by --save-mel


@dataclass
class VocodeRun:
    """The WAV files written, the vocoder used and the bad inputs (one line each)."""

    outputs: list[Path] = field(default_factory=list)
    vocoder: str = ""
    bad: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_mel_config(folder: Path) -> MelConfig:
    """The feature settings of the mels in `folder`; InferenceError naming the file."""
    path = folder / MEL_CONFIG
    if not path.is_file():
        raise InferenceError(
            f"no {MEL_CONFIG} in {folder}: the mels' feature settings are needed (aligner "
            "synthesize/convert --save-mel writes it)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return MelConfig.from_dict({k: v for k, v in data.items() if k not in LAYOUT_KEYS})
    except (OSError, ValueError, TypeError, AttributeError) as err:
        raise InferenceError(f"{path} is not a mel_config.json ({err})") from None


MIN_FRAMES = 2  # an inverse STFT of one frame has no samples


def read_mel(path: Path, n_mels: int) -> torch.Tensor:
    """One saved log-mel ``(T, n_mels)``; ValueError naming the file and what is wrong."""
    try:
        mel = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        why = "" if "pickle" in str(err) else f" ({str(err).splitlines()[0]})"
        raise ValueError(f"{path} is not a .npy array{why}") from None
    if mel.ndim != 2 or mel.shape[1] != n_mels or mel.shape[0] < 1:
        raise ValueError(f"{path}: expected frames x {n_mels} mels, got shape {mel.shape}")
    if mel.shape[0] < MIN_FRAMES:
        raise ValueError(f"{path}: {mel.shape[0]} frame, too few to vocode ({MIN_FRAMES} at least)")
    if mel.dtype.kind not in "fiu" or not np.isfinite(mel).all():
        raise ValueError(f"{path}: the mel holds NaN, inf or non-numbers")
    return torch.from_numpy(mel.astype(np.float32))


def vocode(
    src: Path,
    out: Path,
    vocoder: str | None = None,
    griffin_lim_iters: int = 60,
    device: str = "cpu",
    force: bool = False,
) -> VocodeRun:
    """Vocode the ``.npy`` mel `src` into the WAV `out`, or every ``.npy`` of the folder
    `src` into the folder `out` (``NAME.wav``); existing outputs only with `force`."""
    if not src.exists():
        raise InferenceError(f"--in {src} does not exist")
    many = src.is_dir()
    if not many and src.suffix.lower() != ".npy":
        raise InferenceError(
            f"--in {src} is not a .npy mel: vocode reads the log-mels that --save-mel writes "
            "(frames x mels), not audio"
        )
    mels = sorted(src.glob("*.npy")) if many else [src]
    if not mels:
        raise InferenceError(f"--in {src} holds no .npy mels")
    cfg = read_mel_config(src if many else src.parent)
    outputs = _outputs(mels, out, many, force)
    voc = load_vocoder(vocoder, cfg, griffin_lim_iters=griffin_lim_iters, device=device)
    run = VocodeRun(vocoder=voc.name)
    for mel_path, wav_path in zip(mels, outputs):
        try:
            mel = read_mel(mel_path, cfg.n_mels)
        except ValueError as err:
            run.bad.append(str(err))
            continue
        try:
            wav = voc(mel)
        except RuntimeError as err:  # the vocoder's own limit: this item, not the run
            run.bad.append(f"{mel_path}: could not be vocoded ({str(err).splitlines()[0]})")
            continue
        save_audio(wav_path, wav, voc.features.sample_rate)
        run.outputs.append(wav_path)
    return run


def _outputs(mels: list[Path], out: Path, many: bool, force: bool) -> list[Path]:
    if many:
        if out.exists() and not out.is_dir():
            raise InferenceError(f"--out {out} is a file; give a folder for a folder of mels")
        paths = [out / f"{n}.wav" for n in output_names([p.stem for p in mels], "--in")]
    else:
        if out.is_dir():
            raise InferenceError(f"--out {out} is a folder; give a file name (OUT.wav)")
        paths = [out]
    check_audio_out(out, many, "a folder of mels")
    for path in paths if not force else []:
        if path.exists():
            raise InferenceError(f"{path} exists; pass --force to overwrite it")
    return paths
