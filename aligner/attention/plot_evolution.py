"""Alignments over training: heatmap images side by side, or as an animated GIF."""

from __future__ import annotations

from pathlib import Path

import numpy as np


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
