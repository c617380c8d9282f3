"""Audio file I/O with soundfile: mono mix-down, torchaudio resampling, clear errors."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import soundfile as sf
import torch
import torchaudio.functional as AF

from aligner.files import OutputError, atomic_write


class AudioError(ValueError):
    """A file that cannot be used as audio; the message names the file and the reason."""

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


def load_audio(
    path: str | os.PathLike,
    sample_rate: int | None = None,
    min_samples: int = 1024,
) -> tuple[torch.Tensor, int]:
    """Read an audio file as a mono float32 waveform.

    Args:
        path: any format libsndfile reads (WAV, FLAC, OGG, ...).
        sample_rate: resample to this rate (torchaudio) when given and different.
        min_samples: shortest accepted clip, in samples at the *output* rate (one STFT
            frame by default; pass ``MelConfig.win_length``). 0 disables the check.

    Returns:
        ``(wav (L,), sr)``; multi-channel audio is averaged to mono.

    Raises:
        AudioError: missing, empty, truncated or non-audio file, NaN/inf samples, or a
            clip shorter than ``min_samples``.
    """
    path = Path(path)
    if not path.is_file():
        raise AudioError(path, "file not found" if not path.exists() else "not a regular file")
    if path.stat().st_size == 0:
        raise AudioError(path, "file is empty (0 bytes)")
    data, sr = _read(path)
    if data.size == 0:
        raise AudioError(path, "no audio samples (0 frames)")
    if not np.isfinite(data).all():
        raise AudioError(path, "contains NaN or infinite samples")
    mono = data[:, 0] if data.shape[1] == 1 else data.mean(axis=1)  # one channel: no copy
    wav = torch.from_numpy(np.ascontiguousarray(mono, dtype=np.float32))
    if sample_rate is not None and sample_rate != sr:
        wav = AF.resample(wav, sr, sample_rate)
        sr = sample_rate
    if wav.numel() < min_samples:
        raise AudioError(
            path,
            f"clip too short: {wav.numel()} samples at {sr} Hz, need at least {min_samples} "
            "(one analysis frame); give a longer recording (or leave it out of the manifest)",
        )
    return wav, sr


# libsndfile's WAV/AIFF parser log line for a data chunk cut short: "data : 88200 (should be 44078)"
_TRUNCATED_DATA = re.compile(r"^\s*(?:data|SSND)\s*:\s*(\d+)\s*\(should be (\d+)\)", re.M)


def _read(path: Path) -> tuple[np.ndarray, int]:
    """(frames, channels) float32 and the sample rate; truncation and format errors -> AudioError."""
    try:
        header = sf.info(str(path)).extra_info
        with sf.SoundFile(str(path)) as f:
            expected = f.frames
            data = f.read(dtype="float32", always_2d=True)
            sr = f.samplerate
    except (sf.LibsndfileError, RuntimeError) as err:
        raise AudioError(path, f"not a readable audio file ({err})") from None
    short = _TRUNCATED_DATA.search(header)
    if short and int(short[1]) > int(short[2]) and int(short[1]) < 0xFFFFFFF0:
        raise AudioError(
            path, f"truncated: header promises {short[1]} data bytes, file holds {short[2]}"
        )
    if expected > 0 and data.shape[0] < expected:
        raise AudioError(
            path, f"truncated: header promises {expected} frames, file holds {data.shape[0]}"
        )
    return data, sr


def save_audio(
    path: str | os.PathLike, wav: torch.Tensor, sample_rate: int, force: bool = True
) -> None:
    """Write ``wav (L,)`` (float, [-1, 1]) as 16-bit PCM; the format follows the suffix.

    The file is written to a temporary name and renamed, so a reader never sees half
    a file. ``force=False`` refuses to overwrite an existing file (FileExistsError).
    """
    path = Path(path)
    if not force and path.exists():
        raise FileExistsError(f"{path} exists; pass force=True (or --force) to overwrite")
    data = wav.detach().to("cpu", torch.float32)
    if data.dim() != 1:
        raise ValueError(f"save_audio expects a mono waveform (L,), got shape {tuple(data.shape)}")
    write_audio_array(path, data.clamp(-1.0, 1.0).numpy(), sample_rate)


def write_audio_array(path: str | os.PathLike, data: np.ndarray, sample_rate: int) -> None:
    """Samples (L,) (float in [-1, 1] or int16) as 16-bit PCM where the format allows,
    atomically; a full disk is one `OutputError` naming the file and the device."""
    path = Path(path)
    fmt = path.suffix.lstrip(".").upper()
    fmt = fmt if fmt in sf.available_formats() else "WAV"
    subtype = "PCM_16" if sf.check_format(fmt, "PCM_16") else None
    # Encoded in memory first: libsndfile writing to a file object reports a full disk
    # through cffi callbacks, which print tracebacks; a plain write raises ENOSPC cleanly.
    buffer = io.BytesIO()
    try:
        sf.write(buffer, data, sample_rate, subtype=subtype, format=fmt)
    except (sf.LibsndfileError, RuntimeError) as err:
        raise OutputError(f"could not encode {path} as {fmt} ({err})", path) from None
    with atomic_write(path) as fh:
        fh.write(buffer.getbuffer())


def join_waves(
    waves: Sequence[torch.Tensor], sample_rate: int, pause: float = 0.25
) -> torch.Tensor:
    """Concatenate waveforms ``(L_i,)`` with `pause` seconds of silence between them."""
    if not waves:
        raise ValueError("nothing to join")
    gap = waves[0].new_zeros(int(round(pause * sample_rate)))
    out: list[torch.Tensor] = []
    for i, w in enumerate(waves):
        if i:
            out.append(gap)
        out.append(w)
    return torch.cat(out)
