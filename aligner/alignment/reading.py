"""Alignments read back from files: an ``ID.durations.json`` record (validated), its word
and phone tiers for scoring, its durations below one frame for a duration model to learn,
and the weights and labels a plot draws."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from aligner.alignment.intervals import Tiers, tiers_from_rows
from aligner.alignment.record import RECORD_SUFFIX
from aligner.alignment.textgrid import read_textgrid, textgrid_files
from aligner.alignment.tiers import FRAME_CENTRE, optional_tokens


def read_record(path: str | Path) -> dict[str, Any]:
    """An ``ID.durations.json`` record (`aligner.alignment.record`); ValueError (one line
    naming the file) when it is not one."""
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is not a durations JSON file ({err})") from None
    if not isinstance(record, dict) or not {"tokens", "frames"} <= set(record):
        raise ValueError(f"{path}: a durations JSON needs 'tokens' and 'frames' (aligner align)")
    tokens, frames = record["tokens"], record["frames"]
    whole = isinstance(frames, list) and all(
        isinstance(f, int) and not isinstance(f, bool) and f >= 0 for f in frames
    )
    if not isinstance(tokens, list) or not tokens or not whole or not sum(frames):
        raise ValueError(
            f"{path}: 'tokens' and 'frames' must be lists, frames whole numbers of at least 0 "
            "with some above (aligner align writes them so)"
        )
    if len(tokens) != len(frames):
        raise ValueError(f"{path}: {len(tokens)} tokens but {len(frames)} frame counts")
    return record


def sub_frame_durations(record: dict[str, Any]) -> np.ndarray:
    """A record's frames per token ``(N,)`` as floats, each boundary between two phones
    that meet (no frame of another token between them) moved to where the record's phones
    tier puts it: the alignment model's boundary below one frame
    (`aligner.attention.search.expected_edges`), which whole frames round away. Every
    other boundary (at a pause, a word separator that holds frames) stays on the frame
    grid, each phone keeps half a frame at least, and the sum is the record's frames.
    A record whose phones tier does not pair with its phones one to one (or that has none:
    characters, another family's record) gives its frames as they are."""
    tokens, frames = list(record["tokens"]), np.asarray(record["frames"], np.float64)
    edges = np.concatenate([[0.0], np.cumsum(frames)])
    skip = optional_tokens(tokens)
    timed = [k for k in range(len(tokens)) if frames[k] > 0]
    phones = [k for k in timed if not skip[k]]
    tier = record.get("phones") or []
    hop, rate = record.get("hop_length"), record.get("sample_rate")
    seconds = hop / rate if isinstance(hop, int) and isinstance(rate, int) and rate > 0 else 0
    paired = len(tier) == len(phones) and all(
        isinstance(row, list) and len(row) == 3 and row[2] == tokens[k]
        for row, k in zip(tier, phones)
    )
    if not (paired and seconds > 0):
        return frames
    where = {k: n for n, k in enumerate(phones)}
    for i, j in zip(timed, timed[1:]):
        if skip[i] or skip[j]:
            continue
        end, start = float(tier[where[i]][1]), float(tier[where[j]][0])
        if abs(end - start) > 1e-6:  # the tiers moved them apart: not two phones that meet
            continue
        edge = end / seconds + FRAME_CENTRE
        edges[i + 1 : j + 1] = np.clip(edge, edges[i] + 0.5, edges[j + 1] - 0.5)
    return np.diff(edges)


def record_tiers(path: str | Path) -> Tiers:
    """The ``words`` and ``phones`` tiers (those it has) of a durations record file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return tiers_from_rows(data)
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise ValueError(f"{path} is not an aligner durations file ({err})") from None


def predicted_tiers(
    folder: str | Path, uid: str, grids: dict[str, Path] | None = None
) -> Tiers | None:
    """The tiers an aligner wrote for `uid` in `folder`: its ``ID.TextGrid`` (any tool's;
    `grids`: `textgrid_files` of `folder`, found once for many items), else its
    ``ID.durations.json``; None when it has neither. ValueError (one line naming the file)
    when the file cannot be read."""
    grids = textgrid_files(folder) if grids is None else grids
    record = Path(folder) / f"{uid}{RECORD_SUFFIX}"
    if uid in grids:
        return read_textgrid(grids[uid])
    if record.is_file():
        return record_tiers(record)
    return None


@dataclass
class AlignmentFile:
    """An alignment read back for drawing: weights ``(T_dec, T_enc)``, its token labels
    (or None), the frames per decoder step `r`, and the hop and sample rate (None when
    unknown) that turn frames into seconds."""

    weights: np.ndarray
    tokens: list[str] | None = None
    r: int = 1
    hop_length: int | None = None
    sample_rate: int | None = None
    title: str | None = None


NPY_MAGIC = b"\x93NUMPY"


def _load_npy(npy: Path) -> np.ndarray:
    with open(npy, "rb") as fh:
        if fh.read(len(NPY_MAGIC)) != NPY_MAGIC:
            raise ValueError(
                f"{npy} is not a .npy file (no NumPy header); give an ID.npy or "
                "ID.durations.json that aligner align wrote"
            )
    try:
        weights = np.load(npy, allow_pickle=False, mmap_mode="r")
    except (ValueError, OSError) as err:
        raise ValueError(f"{npy} is not a .npy array ({err})") from None
    weights = weights[0] if weights.ndim == 3 and weights.shape[0] == 1 else weights
    if weights.ndim != 2 or weights.dtype.kind not in "fiub" or 0 in weights.shape:
        raise ValueError(
            f"{npy}: expected a finite (T_dec, T_enc) matrix, got shape {weights.shape}"
        )
    return weights


def hard_alignment(frames: list[int]) -> np.ndarray:
    """``(sum(frames), N)`` one-hot float32 matrix: frame t attends the token it belongs to."""
    out = np.zeros((int(sum(frames)), len(frames)), dtype=np.float32)
    owner = np.repeat(np.arange(len(frames)), np.asarray(frames, dtype=np.int64))
    out[np.arange(len(owner)), owner] = 1.0
    return out


def durations_path(npy: Path) -> Path:
    """``ID.durations.json`` beside ``ID.npy`` (where `aligner align` writes both)."""
    return npy.with_name(npy.name.removesuffix(".npy") + RECORD_SUFFIX)


def read_alignment(path: str | Path, durations: str | Path | None = None) -> AlignmentFile:
    """The alignment to draw from `path`: a ``.npy`` of weights ``(T_dec, T_enc)`` (or
    ``(1, T_dec, T_enc)``) or a ``.durations.json`` (`aligner align`'s record: tokens,
    frames per token, r, hop_length, sample_rate). Tokens and timing come from
    `durations`, else from the ``.durations.json`` beside the ``.npy`` when there is one;
    a ``.durations.json`` alone is drawn as its hard alignment (frames x tokens).
    ValueError (one line naming the file) for anything unreadable or inconsistent."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path} does not exist")
    if path.name.endswith(".json"):
        durations = durations or path
        sibling = path.with_name(path.name.removesuffix(".json").removesuffix(".durations"))
        npy = sibling.with_name(sibling.name + ".npy")
    else:
        npy, durations = path, durations or durations_path(path)
        durations = durations if Path(durations).is_file() else None
    record = read_record(durations) if durations else None
    if npy.is_file():
        weights = _load_npy(npy)
    else:  # a durations record alone: its hard alignment at frame resolution
        weights, record = hard_alignment(record["frames"]), {**record, "r": 1}
    found = AlignmentFile(weights, title=path.name.split(".")[0])
    if record is not None:
        if len(record["tokens"]) != weights.shape[1]:
            raise ValueError(
                f"{durations}: {len(record['tokens'])} tokens for an alignment of "
                f"{weights.shape[1]} columns ({npy.name})"
            )
        found.tokens = list(record["tokens"])
        found.r = int(record.get("r", 1))
        found.hop_length, found.sample_rate = record.get("hop_length"), record.get("sample_rate")
        found.title = str(record.get("id", found.title))
    return found
