"""Alignment heatmaps: as a uint8 image array (TensorBoard), as PNG files, one panel per
sentence, and evolution strips / animations over training.

Landscape figures sized to stay legible in a TensorBoard card (640 x 360 px and up):
tokens on the vertical axis (origin at the bottom, labels thinned to what fits at a
readable size), time on the horizontal axis (seconds when the hop length and sample rate
are known, mel frames when r > 1, else decoder steps), a labelled colour bar, the
sentence as the title. Any alignment is max-pooled to at most
`aligner.attention.plot_matrix.MAX_PIXELS` cells per axis first, so a huge one (20,000 x
20,000) draws in bounded memory.
"""

from __future__ import annotations

import math
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from aligner.attention.plot_evolution import evolution_strip, save_evolution_gif  # noqa: E402
from aligner.attention.plot_matrix import (  # noqa: E402
    Timing,
    display_token,
    matrix_shape,
    pooled,
    thinned_labels,
)

WIDTH, MIN_HEIGHT, MAX_HEIGHT = 6.4, 3.6, 4.8  # inches (at 100 dpi: 640 px wide)
# TensorBoard shows an image card about 400-500 px wide: a figure of that size keeps its
# 10 pt labels legible there (a larger one is shrunk and its labels with it)
CARD_WIDTH, CARD_HEIGHT, CARD_LABEL_PT = 4.8, 3.0, 10.0
PANEL_HEIGHT = 3.0  # inches per sentence in a multi-panel figure
MAX_PANELS = 12  # sentences per multi-panel PNG file
LABEL_PT, MIN_LABEL_PT = 11.0, 8.0  # token label sizes: preferred, smallest
TITLE_CHARS = 80
__all__ = [
    "alignment_figure",
    "alignment_image",
    "alignments_figure",
    "draw_alignment",
    "evolution_strip",
    "figure_image",
    "save_alignment_panels",
    "save_alignment_png",
    "save_evolution_gif",
    "text_alignment_figure",
    "Timing",
]


def _short(title: str) -> str:
    return textwrap.shorten(" ".join(str(title).split()), TITLE_CHARS, placeholder=" ...")


def _height(n_tokens: int, labelled: bool, low: float = MIN_HEIGHT) -> float:
    """Figure (or panel) height in inches: grows with the labelled tokens, stays landscape."""
    return float(np.clip(1.6 + 0.12 * n_tokens, low, MAX_HEIGHT)) if labelled else low


def _label_tokens(
    ax: Axes, tokens: Sequence[str], height_in: float, smallest: float = MIN_LABEL_PT
) -> None:
    """Token labels on the vertical axis: as large as fits (`LABEL_PT` down to
    `smallest`), every k-th one when not all fit at the smallest size."""
    room_pt = max(36.0, (height_in - 1.1) * 72)  # the axes' height, without title and x axis
    size = float(np.clip(room_pt / (1.25 * len(tokens)), smallest, max(smallest, LABEL_PT)))
    shown = [display_token(t) for t in tokens]
    positions, labels = thinned_labels(shown, math.floor(room_pt / (1.25 * size)))
    ax.set_yticks(positions, labels=labels, fontsize=size)
    step = positions[1] - positions[0] if len(positions) > 1 else 1
    ax.set_ylabel("token" + (f" (every {step})" if step > 1 else ""), fontsize=10)


def draw_alignment(
    ax: Axes,
    weights,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
    timing: Timing = Timing(),
    height_in: float = MIN_HEIGHT,
    smallest_label: float = MIN_LABEL_PT,
) -> None:
    """Draw ``weights (T_dec, T_enc)`` (tensor or array, any size: max-pooled first) on
    `ax` with its colour bar; `tokens` (T_enc labels) on the vertical axis, sized for a
    panel `height_in` inches tall."""
    steps, n = matrix_shape(weights)
    if tokens is not None and len(tokens) != n:
        raise ValueError(f"alignment: {len(tokens)} token labels for a source axis of {n}")
    matrix = pooled(weights)[0]
    left, right, xlabel = timing.x_axis(steps)
    image = ax.imshow(
        matrix.T,
        aspect="auto",
        origin="lower",
        interpolation="nearest",  # pooled to about the axes' pixels: no cell is dropped
        vmin=0,
        extent=(left, right, -0.5, n - 0.5),
    )
    ax.set_xlabel(xlabel, fontsize=10)
    if tokens:
        _label_tokens(ax, tokens, height_in, smallest_label)
    else:
        ax.set_ylabel("source position", fontsize=10)
    if title:
        ax.set_title(_short(title), fontsize=11)
    ax.figure.colorbar(image, ax=ax, fraction=0.04, pad=0.015).set_label("attention weight")


def alignment_figure(
    weights,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
    *,
    r: int = 1,
    hop_length: int | None = None,
    sample_rate: int | None = None,
    card: bool = False,
) -> Figure:
    """A landscape figure of ``weights (T_dec, T_enc)``: `tokens` on the vertical axis,
    seconds on the horizontal one when `hop_length` and `sample_rate` are given (frames
    when ``r > 1``, else decoder steps). ``card=True``: sized for a TensorBoard card
    (`CARD_WIDTH` x `CARD_HEIGHT` inches, labels of at least `CARD_LABEL_PT`, thinned).
    Close it with ``plt.close(fig)``."""
    n = matrix_shape(weights)[1]
    width, height = (CARD_WIDTH, CARD_HEIGHT) if card else (WIDTH, _height(n, bool(tokens)))
    smallest = CARD_LABEL_PT if card else MIN_LABEL_PT
    fig, ax = plt.subplots(figsize=(width, height), dpi=100, layout="constrained")
    try:
        timing = Timing(r, hop_length, sample_rate)
        draw_alignment(ax, weights, tokens, title, timing, height, smallest)
    except Exception:
        plt.close(fig)
        raise
    return fig


def alignments_figure(
    weights: Sequence,
    tokens: Sequence[Sequence[str] | None] | None = None,
    titles: Sequence[str | None] | None = None,
    *,
    r: int = 1,
    hop_length: int | None = None,
    sample_rate: int | None = None,
    first: int = 1,
) -> Figure:
    """One panel per sentence, top to bottom: ``weights[k] (T_dec_k, T_enc_k)`` with the
    labels ``tokens[k]`` and the title ``"K. titles[k]"`` (K counted from `first`)."""
    if not weights:
        raise ValueError("alignment: no sentences to draw")
    tokens = list(tokens) if tokens is not None else [None] * len(weights)
    titles = list(titles) if titles is not None else [None] * len(weights)
    if not len(tokens) == len(titles) == len(weights):
        raise ValueError(
            f"alignment: {len(weights)} alignments, {len(tokens)} token lists, {len(titles)} titles"
        )
    heights = [_height(matrix_shape(w)[1], bool(t), PANEL_HEIGHT) for w, t in zip(weights, tokens)]
    fig, axes = plt.subplots(
        len(weights),
        1,
        figsize=(WIDTH, sum(heights)),
        dpi=100,
        layout="constrained",
        squeeze=False,
        gridspec_kw={"height_ratios": heights},
    )
    timing = Timing(r, hop_length, sample_rate)
    try:
        for k, (ax, w, tok, title) in enumerate(zip(axes[:, 0], weights, tokens, titles)):
            name = f"{k + first}. {title}" if title else f"sentence {k + first}"
            draw_alignment(ax, w, tok, name, timing, heights[k])
    except Exception:
        plt.close(fig)
        raise
    return fig


def text_alignment_figure(
    weights, src_labels: list[str], out_labels: list[str], title: str | None = None
) -> Figure:
    """A heatmap of ``weights (T_out, T_src)`` of a text model with the output token labels
    on x and the source token labels on y."""
    fig = alignment_figure(weights, src_labels, title)
    ax = fig.axes[0]
    room_pt = (WIDTH - 1.6) * 72
    size = float(np.clip(room_pt / (1.25 * max(1, len(out_labels))), MIN_LABEL_PT, LABEL_PT))
    positions, labels = thinned_labels(out_labels, math.floor(room_pt / (1.25 * size)))
    ax.set_xticks(positions, labels=labels, fontsize=size, rotation=90)
    ax.set_xlabel("output token")
    ax.set_ylabel("source token")
    return fig


def figure_image(fig: Figure) -> np.ndarray:
    """``(H, W, 3)`` uint8 RGB pixels of `fig`, which is closed."""
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    plt.close(fig)
    return np.ascontiguousarray(rgba[..., :3])


def alignment_image(
    weights, tokens: Sequence[str] | None = None, title: str | None = None, **timing
) -> np.ndarray:
    """``(H, W, 3)`` uint8 RGB heatmap of ``weights (T_dec, T_enc)`` (for
    ``SummaryWriter.add_image(..., dataformats="HWC")``), sized for a TensorBoard card;
    `timing`: `alignment_figure`'s ``r``, ``hop_length``, ``sample_rate``."""
    return figure_image(alignment_figure(weights, tokens, title, card=True, **timing))


def _refuse(paths: Sequence[Path], force: bool) -> None:
    for path in paths if not force else []:
        if path.exists():
            raise FileExistsError(f"{path} exists; pass force=True (--force) to overwrite it")


def image_format(path: Path) -> str:
    """The image format `path`'s suffix names (PNG without one); ValueError for a suffix
    matplotlib cannot write (``p.jpg`` was written as PNG bytes). Callers check it before
    their work, so that no output is lost to a name."""
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = path.suffix.lstrip(".").lower() or "png"
    if fmt not in FigureCanvasBase.get_supported_filetypes():
        raise ValueError(f"{path}: cannot write a .{fmt} image; name it .png, .pdf, .svg or .jpg")
    return fmt


def _save(fig: Figure, path: Path) -> Path:
    """The PNG under a temporary name, then the rename (a reader never sees half a file;
    the core imports nothing of the package, so not `aligner.files`)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(tmp, format=image_format(path), dpi=150)
        os.replace(tmp, path)
    except OSError as err:  # PIL's full disk names no file: name the PNG (the attention
        if err.filename is not None or err.errno is None:  # core imports no aligner.files)
            raise
        raise OSError(err.errno, err.strerror or str(err), str(path)) from None
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


def save_alignment_png(
    weights,
    path: str | Path,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
    force: bool = False,
    **timing,
) -> Path:
    """Write the heatmap of ``weights (T_dec, T_enc)`` to ``path`` (`alignment_figure`, at
    150 dpi); an existing file is only replaced with ``force=True`` (FileExistsError)."""
    path = Path(path)
    _refuse([path], force)
    return _save(alignment_figure(weights, tokens, title, **timing), path)


def panel_paths(path: str | Path, n_sentences: int) -> list[Path]:
    """The PNG files for `n_sentences` panels, `MAX_PANELS` per file: ``PATH`` for the
    first ones, then ``STEM-2.png``, ``STEM-3.png``, ..."""
    path = Path(path)
    files = max(1, math.ceil(n_sentences / MAX_PANELS))
    return [path] + [path.with_name(f"{path.stem}-{k}{path.suffix}") for k in range(2, files + 1)]


def save_alignment_panels(
    weights: Sequence,
    path: str | Path,
    tokens: Sequence[Sequence[str] | None] | None = None,
    titles: Sequence[str | None] | None = None,
    force: bool = False,
    **timing,
) -> list[Path]:
    """One panel per sentence (`alignments_figure`), at most `MAX_PANELS` per file
    (`panel_paths`); every file is checked before any is written. Returns the files."""
    paths = panel_paths(path, len(weights))
    _refuse(paths, force)
    tokens = list(tokens) if tokens is not None else [None] * len(weights)
    titles = list(titles) if titles is not None else [None] * len(weights)
    for k, out in enumerate(paths):
        part = slice(k * MAX_PANELS, (k + 1) * MAX_PANELS)
        first = k * MAX_PANELS + 1
        _save(
            alignments_figure(weights[part], tokens[part], titles[part], first=first, **timing), out
        )
    return paths
