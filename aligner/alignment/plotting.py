"""A saved alignment drawn to a PNG: the file formats are read here, the drawing is the
attention core's (`aligner.attention.plot`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from aligner.alignment.reading import read_alignment
from aligner.attention.plot import save_alignment_png
from aligner.attention.plot_matrix import pooled


def plot_file(
    path: str | Path,
    out: str | Path,
    title: str | None = None,
    force: bool = False,
    durations: str | Path | None = None,
) -> Path:
    """Draw a saved alignment to the PNG `out`: a ``.npy`` (``(T_dec, T_enc)`` or ``(1,
    T_dec, T_enc)``) or an `aligner align` ``.durations.json``. Token labels, r and
    seconds come from `durations` or the ``ID.durations.json`` beside ``ID.npy``
    (`aligner.alignment.reading.read_alignment`); the title defaults to the sentence
    id. ValueError (one line, naming the file) for anything else; FileExistsError when
    `out` exists and not `force`."""
    out = Path(out)
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists; pass force=True (--force) to overwrite it")
    found = read_alignment(path, durations)
    if not np.isfinite(pooled(found.weights)[0]).all():
        raise ValueError(f"{path}: expected a finite (T_dec, T_enc) matrix, found NaN or inf")
    timing = {"r": found.r, "hop_length": found.hop_length, "sample_rate": found.sample_rate}
    return save_alignment_png(
        found.weights, out, found.tokens, title or found.title, True, **timing
    )
