"""Alignment heatmaps: as a uint8 image array (TensorBoard) and as a PNG file.

Decoder steps run along x, source positions along y (origin at the bottom), as in the
Tacotron papers; optional token labels annotate the source axis.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def _as_matrix(weights) -> np.ndarray:
    """``(T_dec, T_enc)`` float array from a tensor or array; ValueError otherwise."""
    if hasattr(weights, "detach"):
        weights = weights.detach().float().cpu().numpy()
    array = np.asarray(weights, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"alignment: expected shape (T_dec, T_enc), got {array.shape}")
    return array


def alignment_figure(weights, tokens: list[str] | None = None, title: str | None = None) -> Figure:
    """A matplotlib figure of ``weights (T_dec, T_enc)``; close it with ``plt.close(fig)``."""
    matrix = _as_matrix(weights)
    if tokens is not None and len(tokens) != matrix.shape[1]:
        raise ValueError(
            f"alignment: {len(tokens)} token labels for a source axis of {matrix.shape[1]}"
        )
    height = 3 + (0.12 * matrix.shape[1] if tokens else 0)
    fig, ax = plt.subplots(figsize=(6, min(height, 12)), dpi=100)
    image = ax.imshow(matrix.T, aspect="auto", origin="lower", interpolation="none", vmin=0)
    fig.colorbar(image, ax=ax)
    ax.set_xlabel("decoder step")
    ax.set_ylabel("source position")
    if tokens is not None:
        ax.set_yticks(range(len(tokens)), labels=tokens, fontsize=6)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def text_alignment_figure(
    weights, src_labels: list[str], out_labels: list[str], title: str | None = None
) -> Figure:
    """A heatmap of ``weights (T_out, T_src)`` of a text model with the output token labels
    on x and the source token labels on y."""
    fig = alignment_figure(weights, src_labels, title)
    ax = fig.axes[0]
    ax.set_xticks(range(len(out_labels)), labels=out_labels, fontsize=6, rotation=90)
    ax.set_xlabel("output token")
    ax.set_ylabel("source token")
    fig.tight_layout()
    return fig


def figure_image(fig: Figure) -> np.ndarray:
    """``(H, W, 3)`` uint8 RGB pixels of `fig`, which is closed."""
    fig.canvas.draw()
    rgba = np.asarray(fig.canvas.buffer_rgba())
    plt.close(fig)
    return np.ascontiguousarray(rgba[..., :3])


def alignment_image(
    weights, tokens: list[str] | None = None, title: str | None = None
) -> np.ndarray:
    """``(H, W, 3)`` uint8 RGB heatmap of ``weights (T_dec, T_enc)`` (for
    ``SummaryWriter.add_image(..., dataformats="HWC")``)."""
    return figure_image(alignment_figure(weights, tokens, title))


def save_alignment_png(
    weights,
    path: str | Path,
    tokens: list[str] | None = None,
    title: str | None = None,
    force: bool = False,
) -> Path:
    """Write the heatmap of ``weights (T_dec, T_enc)`` to ``path``; an existing file is
    only replaced with ``force=True`` (FileExistsError otherwise)."""
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass force=True (--force) to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = alignment_figure(weights, tokens, title)
    fig.savefig(path, format="png")
    plt.close(fig)
    return path


def plot_npy(npy: str | Path, out: str | Path, title: str | None = None, force: bool = False):
    """Draw the alignment saved in `npy` (``(T_dec, T_enc)`` or ``(1, T_dec, T_enc)``) to the
    PNG `out`; ValueError (one line, naming the file) for anything else."""
    npy = Path(npy)
    if not npy.is_file():
        raise ValueError(f"{npy} does not exist")
    if Path(out).exists() and not force:
        raise FileExistsError(f"{out} exists; pass --force to overwrite it")
    try:
        weights = np.load(npy, allow_pickle=False)
    except (ValueError, OSError) as err:
        raise ValueError(f"{npy} is not a .npy array ({err})") from None
    weights = weights.squeeze(0) if weights.ndim == 3 and weights.shape[0] == 1 else weights
    if weights.ndim != 2 or not np.isfinite(weights).all():
        raise ValueError(
            f"{npy}: expected a finite (T_dec, T_enc) matrix, got shape {weights.shape}"
        )
    return save_alignment_png(weights, out, title=title or npy.stem, force=force)


def evolution_strip(images: list[np.ndarray]) -> np.ndarray:
    """Concatenate heatmap images ``(H, W, 3)`` (e.g. one per training step) side by side
    into one ``(H, sum W, 3)`` strip; shorter images are padded with white at the bottom."""
    if not images:
        raise ValueError("evolution_strip: no images given")
    height = max(image.shape[0] for image in images)
    padded = [
        np.pad(image, ((0, height - image.shape[0]), (0, 0), (0, 0)), constant_values=255)
        for image in images
    ]
    return np.concatenate(padded, axis=1)


def save_evolution_gif(
    images: list[np.ndarray], path: str | Path, frame_ms: int = 500, force: bool = False
) -> Path:
    """Write heatmap images ``(H, W, 3)`` as an animated GIF (one frame each, looping);
    an existing file is only replaced with ``force=True``."""
    from PIL import Image

    path = Path(path)
    if not images:
        raise ValueError(f"{path}: no alignment images to animate")
    if path.exists() and not force:
        raise FileExistsError(f"{path} exists; pass force=True (--force) to overwrite it")
    path.parent.mkdir(parents=True, exist_ok=True)
    frames = [Image.fromarray(image) for image in images]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=frame_ms, loop=0)
    return path
