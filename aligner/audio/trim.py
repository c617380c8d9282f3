"""Leading and trailing silence removal with ``librosa.effects.trim``."""

from __future__ import annotations

import math

import librosa
import torch


def trim_silence(
    wav: torch.Tensor,
    sr: int,
    top_db: float = 40.0,
    frame_length: int | None = None,
    hop_length: int | None = None,
) -> torch.Tensor:
    """Cut leading and trailing parts quieter than ``top_db`` below the peak.

    Args:
        wav: mono waveform ``(L,)``.
        sr: its sample rate; frames default to ~46 ms with a ~11.6 ms hop at ``sr``.
        top_db: threshold in dB below the loudest frame.

    Returns:
        the trimmed waveform ``(L',)`` (a copy, same dtype and device); all-silent
        input comes back empty.
    """
    if wav.dim() != 1:
        raise ValueError(f"trim_silence expects a mono waveform (L,), got {tuple(wav.shape)}")
    if wav.numel() == 0 or not bool(wav.abs().max() > 0):
        return wav[:0].clone()
    frame_length = frame_length or _pow2(sr * 0.046)
    hop_length = hop_length or max(1, frame_length // 4)
    y = wav.detach().to("cpu", torch.float32).numpy()
    _, (start, end) = librosa.effects.trim(
        y, top_db=top_db, frame_length=frame_length, hop_length=hop_length
    )
    return wav[int(start) : int(end)].clone()


def _pow2(x: float) -> int:
    """Nearest power of two to ``x`` (at least 16)."""
    return max(16, 2 ** round(math.log2(max(x, 1.0))))


def split_at_silences(
    wav: torch.Tensor, sr: int, max_seconds: float, top_db: float = 40.0
) -> list[tuple[int, int]]:
    """Cut a long recording into contiguous pieces of at most `max_seconds`.

    The non-silent intervals come from ``librosa.effects.split`` (``top_db`` below the
    peak); pieces are cut in the middle of the silences between them, so every sample
    belongs to exactly one piece and joining the pieces gives the input back. A sound
    longer than `max_seconds` without a silence is cut every `max_seconds`.

    Args:
        wav: mono waveform ``(L,)``.

    Returns:
        ``[(start, end), ...]`` sample ranges covering ``[0, L)`` in order.
    """
    length, limit = int(wav.numel()), max(1, int(max_seconds * sr))
    if length <= limit:
        return [(0, length)]
    frame_length = _pow2(sr * 0.046)
    y = wav.detach().to("cpu", torch.float32).numpy()
    voiced = librosa.effects.split(
        y, top_db=top_db, frame_length=frame_length, hop_length=frame_length // 4
    )
    cuts = [(int(a) + int(b)) // 2 for (_, a), (b, _) in zip(voiced[:-1], voiced[1:])]
    pieces, start = [], 0
    for cut, nxt in zip([*cuts, length], [*cuts[1:], length, length]):
        while cut - start > limit:  # one sound longer than a piece: cut it where it is
            pieces.append((start, start + limit))
            start += limit
        if nxt - start > limit or cut == length:
            pieces.append((start, cut))
            start = cut
    return [p for p in pieces if p[1] > p[0]]
