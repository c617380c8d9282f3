"""Silence in a recording (librosa): leading and trailing silence removal, cutting at
silences, and the pauses of an utterance frame by frame."""

from __future__ import annotations

import math
from dataclasses import dataclass

import librosa
import numpy as np
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


FLOOR_MARGIN_DB = 6.0  # how far above its noise floor a frame must be to count as sound
FLOOR_MIN_MARGIN_DB = 3.0  # ... at least, where the background is steady
SWING_PERCENTILE = 90.0  # the background's swing: this percentile of its levels over the floor
SWING_PAD_DB = 1.0  # ... plus this, is the margin (between the two above)
FLOOR_FRAMES = 9  # a noise floor is steady over this many frames (about 0.1 s at 11.6 ms)
FLOOR_RANGE_DB = 6.0  # ... its frames' levels within this range
FLOOR_BELOW_DB = 20.0  # ... and at least this far below the loudest frame
FLOOR_QUIETEST = 1.0  # ... and near the recording's quietest frames (this percentile)
EDGE_SILENCE_DB = 60.0  # edge frames this far below the loudest are padding, not background


def edge_bounds(level_db: np.ndarray) -> tuple[int, int]:
    """``(first, last)``: the frames of finite levels ``(T,)`` (dB) between the digital
    silence a file may be padded with, the frames at either edge more than
    `EDGE_SILENCE_DB` below the loudest; ``(0, 0)`` for no level."""
    levels = np.asarray(level_db, np.float64)
    if levels.size == 0:
        return 0, 0
    heard = np.flatnonzero(levels >= levels.max() - EDGE_SILENCE_DB)
    return int(heard[0]), int(heard[-1]) + 1


def _between_edge_silences(level_db: np.ndarray) -> np.ndarray:
    """The finite levels of `level_db` within its `edge_bounds`."""
    levels = np.asarray(level_db, np.float64)
    levels = levels[np.isfinite(levels)]
    first, last = edge_bounds(levels)
    return levels[first:last]


def noise_floor(level_db: np.ndarray) -> float | None:
    """The level (dB, one value per frame) of a recording's steady background: the lowest
    mean level of `FLOOR_FRAMES` frames in a row whose levels lie within `FLOOR_RANGE_DB`
    of each other, when it lies `FLOOR_BELOW_DB` or more below the loudest frame and within
    `FLOOR_RANGE_DB` of the quietest frames (their `FLOOR_QUIETEST` percentile). None
    otherwise: a steady stretch well above the quietest frames is a sound (eSpeak NG's
    fricatives and nasals, 25 dB below its vowels, between digital silences of a few
    frames), and speech alone, with no pause, has no background to find. Frames at the
    recording's edges more than `EDGE_SILENCE_DB` below its loudest (digital silence a file
    was padded with) are left out: the background is what lies between them."""
    levels = _between_edge_silences(level_db)
    if levels.size < FLOOR_FRAMES:
        return None
    windows = np.lib.stride_tricks.sliding_window_view(levels, FLOOR_FRAMES)
    steady = windows.max(1) - windows.min(1) <= FLOOR_RANGE_DB
    if not steady.any():
        return None
    floor = float(windows[steady].mean(1).min())
    quietest = float(np.percentile(levels, FLOOR_QUIETEST))
    if floor > levels.max() - FLOOR_BELOW_DB or floor > quietest + FLOOR_RANGE_DB:
        return None
    return floor


def silence_threshold(
    level_db: np.ndarray,
    top_db: float,
    margin_db: float = FLOOR_MARGIN_DB,
    peak_db: float | None = None,
) -> float:
    """The level (dB, on the scale of `level_db`, one value per frame) below which a frame
    is silent: `top_db` below the loudest frame, or `margin_db` above the recording's
    `noise_floor` where that is higher.

    The margin is the background's own swing where that is less: the `SWING_PERCENTILE`
    percentile of the levels below ``floor + margin_db``, over the floor, plus
    `SWING_PAD_DB`, at least `FLOOR_MIN_MARGIN_DB`. Steady white noise gets about 3 dB (a
    word fading into it keeps its end), noise whose level swings by several dB the full
    `margin_db` (a fixed 3 dB took its swings for sound).

    A clean recording's background lies far below its loudest frame (Festival's voices 55-60
    dB, eSpeak NG's digital silence 85 dB), so the threshold stays ``top_db`` below the
    peak. A real recording's noise can be less than ``top_db`` below its speech (white
    noise at 30 dB SNR sits 35 dB below the loudest frame): no frame would then be silent,
    the silence at the edges would count as speech, and its pauses would go unseen
    (Festival's test split at 30 dB SNR: words 15.8 -> 37.7 ms; egs/festival/align1/RESULTS.md).
    ``margin_db`` <= 0 keeps the fixed rule. `peak_db`: the loudest frame's level where
    `level_db` is smoothed (None: the loudest of `level_db`)."""
    levels = np.asarray(level_db, np.float64)
    levels = levels[np.isfinite(levels)]
    if levels.size == 0:
        return -math.inf
    threshold = (float(levels.max()) if peak_db is None else peak_db) - top_db
    floor = noise_floor(levels) if margin_db > 0 else None
    if floor is None:
        return threshold
    between = _between_edge_silences(levels)
    background = between[between < floor + margin_db]
    swing = float(np.percentile(background, SWING_PERCENTILE)) - floor
    margin = min(margin_db, max(FLOOR_MIN_MARGIN_DB, swing + SWING_PAD_DB))
    return max(threshold, floor + margin)


def silent_frames(
    wav: torch.Tensor,
    hop_length: int,
    n_frames: int,
    top_db: float = 40.0,
    median: int = 1,
    margin_db: float = FLOOR_MARGIN_DB,
) -> np.ndarray:
    """``(n_frames,)`` bool: the frames of a log-mel (centred, `hop_length`) that are
    silent, the RMS of the `hop_length` samples around their centre
    (``librosa.feature.rms``, centred like the log-mel, so frame ``t`` covers exactly the
    audio between its boundaries) below `silence_threshold` (`top_db` below the loudest
    frame's, or `margin_db` above the noise floor where that is higher); `median`
    (odd): the level of each frame is first the median of that many frames around it
    (`running_median`), so that a frame or two of noise around the threshold in a silence,
    or of silence in a sound, decides nothing.

    Args:
        wav: mono waveform ``(L,)``.
    """
    y = wav.detach().to("cpu", torch.float32).numpy()
    silent = np.zeros(n_frames, bool)
    if y.size == 0 or not np.any(y):
        return silent
    db = librosa.amplitude_to_db(frame_rms(y, hop_length), ref=np.max, top_db=None)
    if median > 1:
        db = running_median(db, median)
    m = min(n_frames, db.size)
    silent[:m] = db[:m] < silence_threshold(db[:m], top_db, margin_db, peak_db=0.0)
    return silent


def frame_rms(y: np.ndarray, hop_length: int, chunk_frames: int = 1 << 12) -> np.ndarray:
    """``(1 + len(y) // hop_length,)`` float32 (for an even `hop_length`): the RMS of each
    frame of ``y (L,)``, ``librosa.feature.rms(y=y, frame_length=hop_length,
    hop_length=hop_length, center=True)[0]``, `chunk_frames` frames at a time: librosa pads
    and squares a copy of the whole signal (0.6 GB for an hour at 22.05 kHz), this one a
    chunk of it."""
    half, n = hop_length // 2, len(y)
    total = 1 + (n + 2 * half - hop_length) // hop_length
    out = np.empty(total, np.float32)
    for c0 in range(0, total, chunk_frames):
        c1 = min(total, c0 + chunk_frames)
        start, end = c0 * hop_length - half, c1 * hop_length - half  # frame c0's first sample
        seg = y[max(0, start) : min(n, end)]
        if start < 0 or end > n:  # the zeros centring pads the ends with
            seg = np.pad(seg, (max(0, -start), max(0, end - n)))
        frames = seg.reshape(c1 - c0, hop_length).astype(np.float64)
        out[c0:c1] = np.sqrt(np.mean(frames * frames, axis=1))
    return out


def running_median(x: np.ndarray, width: int) -> np.ndarray:
    """The median of each value of ``x (T,)`` and its neighbours, ``width`` (odd) values
    centred on it, the edge values repeated beyond the ends."""
    if width % 2 != 1:
        raise ValueError(f"the median's width must be odd, got {width}")
    padded = np.pad(np.asarray(x, np.float64), width // 2, mode="edge")
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, width), axis=1)


def long_runs(mask: np.ndarray, min_frames: int) -> np.ndarray:
    """`mask` with its runs of True shorter than `min_frames` cleared (of silent frames:
    the pauses; shorter gaps, a stop's closure say, are none)."""
    out = np.zeros_like(mask, dtype=bool)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    for start, end in zip(edges[::2], edges[1::2]):
        if end - start >= max(1, min_frames):
            out[start:end] = True
    return out


@dataclass(frozen=True)
class PauseRule:
    """Where an utterance pauses, for the words and phones tiers (`aligner.alignment.tiers`):
    frames more than `silence_db` below the loudest, in runs of at least `min_seconds`
    (`silent_frames`, `long_runs`). ``silence_db`` 0: the audio is not looked at (the tiers then take
    punctuation for a pause and a bare word separator for none).

    `min_seconds` 0.08: since a word separator takes the pause frames between two words
    and nothing else (`aligner.alignment.tiers.separator_log_probs`), a silence between two
    words that is a stop's closure (30-80 ms) taken for a pause put the next word's start
    at the burst: on the validation splits, with the alignment model, 0.03 -> 0.08 took the
    word boundaries from 9.7 to 8.6 ms on eSpeak NG (word starts without a pause 12.0 ->
    8.7 ms on its test split) and from 16.2 to 16.1 ms on Festival's voices (0.05-0.1 alike,
    0.12 and more worse on both). eSpeak's shortest pauses (38 ms) are then none.

    `smooth_seconds` 0.035 (3 frames of 11.6 ms): the level is a running median over that
    long (`silent_frames`' ``median``; an odd number of frames). The trailing silence of
    Festival's diphone voices is noise around 40 dB below the peak: frames of it above the
    threshold cut the pause into runs too short to count, and the last word took the
    silence (or a leading one the first). Validation words 16.1 -> 15.9 ms on Festival's
    voices (test 16.0 -> 15.7), eSpeak NG unchanged (8.6; its silences are digital).

    `margin_db` 6: where the recording's noise floor lies less than `silence_db` below its
    loudest frame (real recordings), a frame is silent below the floor plus the
    background's own swing, 3 dB to that margin (`silence_threshold`); a clean recording's
    rule is the fixed one; 0 keeps the fixed rule everywhere."""

    silence_db: float = 40.0
    min_seconds: float = 0.08
    smooth_seconds: float = 0.035
    margin_db: float = FLOOR_MARGIN_DB

    def frames(
        self, wav: torch.Tensor, sample_rate: int, hop_length: int, n_frames: int
    ) -> np.ndarray | None:
        """``(n_frames,)`` bool pause frames of `wav` for a log-mel of `hop_length` at
        `sample_rate`. None when the rule is off, and when no frame of `wav` is silent (the
        tiers then fall back on the tokens)."""
        if self.silence_db <= 0:
            return None
        frames = self.smooth_seconds * sample_rate / hop_length
        median = 2 * max(0, round((frames - 1) / 2)) + 1
        silent = silent_frames(wav, hop_length, n_frames, self.silence_db, median, self.margin_db)
        if not silent.any():
            return None
        return long_runs(silent, max(1, round(self.min_seconds * sample_rate / hop_length)))
