"""What the alignment plots draw, kept small: max-pooled matrices and thinned token labels
(reading alignments back from files is `aligner.alignment.reading`'s).

Pooling keeps memory bounded: a ``(T_dec, T_enc)`` alignment of any size (a 20,000 x
20,000 one, a bfloat16 tensor) is reduced block by block, a few million values at a time,
to at most `MAX_PIXELS` per axis before anything is drawn. Max-pooling (not averaging)
keeps a sharp one-frame-wide path visible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_PIXELS = 500  # at most this many matrix cells per axis are drawn (about the axes' pixels)
_CHUNK = 4_000_000  # values converted to float32 at a time


@dataclass(frozen=True)
class Timing:
    """How decoder steps map to time: `r` mel frames per step, and seconds per frame
    ``hop_length / sample_rate`` when both are given."""

    r: int = 1
    hop_length: int | None = None
    sample_rate: int | None = None

    @property
    def seconds_per_frame(self) -> float | None:
        if self.hop_length and self.sample_rate:
            return self.hop_length / self.sample_rate
        return None

    def x_axis(self, steps: int) -> tuple[float, float, str]:
        """(left, right, label) of the horizontal axis for `steps` decoder steps."""
        sec = self.seconds_per_frame
        if sec is not None:
            return 0.0, steps * self.r * sec, "time (s)"
        if self.r > 1:
            return 0.0, float(steps * self.r), f"mel frame (r = {self.r})"
        return -0.5, steps - 0.5, "decoder step"


def _rows(weights, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of a tensor or array as float32 numpy (only those rows copied)."""
    block = weights[start:stop]
    if hasattr(block, "detach"):
        block = block.detach().float().cpu().numpy()
    return np.asarray(block, dtype=np.float32)


def matrix_shape(weights) -> tuple[int, int]:
    """``(T_dec, T_enc)`` of a 2-D tensor or array; ValueError for any other shape."""
    shape = tuple(weights.shape) if hasattr(weights, "shape") else np.shape(weights)
    if len(shape) != 2:
        raise ValueError(f"alignment: expected shape (T_dec, T_enc), got {tuple(shape)}")
    return int(shape[0]), int(shape[1])


def pooled(weights, max_pixels: int = MAX_PIXELS) -> tuple[np.ndarray, int, int]:
    """``weights (T_dec, T_enc)`` max-pooled in blocks of ``(f_dec, f_enc)`` to at most
    `max_pixels` cells per axis: returns ``(matrix (ceil(T_dec/f_dec), ceil(T_enc/f_enc))
    float32, f_dec, f_enc)``; factors are 1 (and the matrix a float32 copy) when it fits."""
    if not hasattr(weights, "shape"):
        weights = np.asarray(weights, dtype=np.float32)
    rows, cols = matrix_shape(weights)
    f_dec, f_enc = max(1, math.ceil(rows / max_pixels)), max(1, math.ceil(cols / max_pixels))
    if f_dec == f_enc == 1:
        return _rows(weights, 0, rows), 1, 1
    step = f_dec * max(1, _CHUNK // max(1, f_dec * cols))  # whole blocks per chunk
    col_starts = np.arange(0, cols, f_enc)
    parts = []
    for start in range(0, rows, step):
        chunk = _rows(weights, start, min(start + step, rows))
        chunk = np.maximum.reduceat(chunk, np.arange(0, len(chunk), f_dec), axis=0)
        parts.append(np.maximum.reduceat(chunk, col_starts, axis=1))
    return np.concatenate(parts, axis=0), f_dec, f_enc


def thinned_labels(tokens: list[str], max_labels: int) -> tuple[list[int], list[str]]:
    """Tick positions and labels for at most `max_labels` of `tokens`: all of them when
    they fit, otherwise every k-th one (k the smallest step that fits)."""
    step = max(1, math.ceil(len(tokens) / max(1, max_labels)))
    positions = list(range(0, len(tokens), step))
    return positions, [tokens[i] for i in positions]


def display_token(token: str) -> str:
    """A token as an axis label: whitespace shows as ``␣`` (an empty label hides it)."""
    return token if token.strip() else "␣"
