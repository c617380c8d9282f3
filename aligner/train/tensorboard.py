"""TensorBoard logging for training: scalars, alignment heatmaps, mel images and audio.

`Logger` wraps `torch.utils.tensorboard.SummaryWriter`; on DDP ranks other than 0 (or with
``enabled=False``) every method does nothing, so callers never test the rank themselves.
Images are logged as ``(H, W, 3)`` uint8 arrays.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from aligner.attention.plot import alignment_image
from aligner.files import with_file_name
from aligner.train.descriptions import describe

ArrayLike = torch.Tensor | np.ndarray


def _numpy(x: ArrayLike) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float32)


def heatmap(matrix: ArrayLike, cmap: str = "viridis") -> np.ndarray:
    """A matrix ``(rows, cols)`` as an ``(cols, rows, 3)`` uint8 image, origin bottom-left.

    Rows run along the x axis (time) and columns along the y axis, bottom to top, as a
    spectrogram or an alignment is usually drawn. Values are scaled to the matrix range.
    """
    from matplotlib import colormaps

    m = _numpy(matrix)
    if m.ndim != 2:
        raise ValueError(f"expected a 2-D matrix (rows, cols), got shape {tuple(m.shape)}")
    lo, hi = float(np.nanmin(m)), float(np.nanmax(m))
    scaled = (m - lo) / (hi - lo) if hi > lo else np.zeros_like(m)
    rgba = colormaps[cmap](np.nan_to_num(scaled.T[::-1]))
    return (rgba[..., :3] * 255).round().astype(np.uint8)


def _quiet_writer_thread(previous):
    """A `threading.excepthook` that leaves out the traceback of TensorBoard's writer
    thread failing to write (a full disk): the writer raises the same error in the training
    thread at its next call, where `Logger` names the folder."""

    def hook(args) -> None:
        writer = type(args.thread).__name__ == "_AsyncWriterThread"
        if not (writer and args.exc_type is not None and issubclass(args.exc_type, OSError)):
            previous(args)

    hook.quiet_writer = True  # type: ignore[attr-defined]
    return hook


def _naming_the_folder(method):
    """An OSError without a file name (TensorBoard's writer reports a full disk so)
    raised again naming the run's TensorBoard folder, as one line says it."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except OSError as err:
            raise with_file_name(err, self.log_dir) from None

    return wrapper


class Logger:
    """TensorBoard writer of one run (``log_dir``); a no-op when ``enabled`` is False."""

    def __init__(self, log_dir: str | Path, enabled: bool = True) -> None:
        self.log_dir = Path(log_dir)
        self.writer = None
        self.described: set[str] = set()
        if enabled:
            from torch.utils.tensorboard import SummaryWriter

            if not getattr(threading.excepthook, "quiet_writer", False):
                threading.excepthook = _quiet_writer_thread(threading.excepthook)
            self.writer = SummaryWriter(log_dir=str(self.log_dir))

    @property
    def enabled(self) -> bool:
        return self.writer is not None

    @_naming_the_folder
    def scalar(self, tag: str, value: float, step: int) -> None:
        """A scalar; the first value of a tag carries its description (see
        `aligner.train.descriptions`), shown by TensorBoard next to the chart."""
        if self.writer is None:
            return
        if tag in self.described:
            self.writer.add_scalar(tag, float(value), step)
            return
        from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata

        self.described.add(tag)
        meta = SummaryMetadata(summary_description=describe(tag))
        meta.plugin_data.plugin_name = "scalars"
        value = Summary.Value(tag=tag, simple_value=float(value), metadata=meta)
        self.writer._get_file_writer().add_summary(Summary(value=[value]), step)

    def scalars(self, values: Mapping[str, float], step: int, prefix: str = "") -> None:
        """Each ``name: value`` as scalar ``prefix/name`` (``name`` with no prefix, or when
        it holds a ``/`` already: ``infer/focus_rate``)."""
        for name, value in values.items():
            self.scalar(f"{prefix}/{name}" if prefix and "/" not in name else name, value, step)

    @_naming_the_folder
    def text(self, tag: str, markdown: str, step: int) -> None:
        """Markdown for TensorBoard's Text dashboard."""
        if self.writer is not None:
            self.writer.add_text(tag, markdown, step)

    def run_text(self, out_dir: Path, config: Mapping, step: int) -> None:
        """The run's name, host and start, and its recipe (config YAML), as text."""
        if self.writer is None:
            return
        import os
        import socket

        import yaml

        recipe = yaml.safe_dump(dict(config), sort_keys=False)
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        self.text(
            "run/name",
            f"**{Path(out_dir).resolve().name}**: `{Path(out_dir)}`, "
            f"started {started} on {socket.gethostname()} (pid {os.getpid()}) "
            f"at step {step}",
            step,
        )
        self.text("run/recipe", "    " + recipe.replace("\n", "\n    "), step)

    @_naming_the_folder
    def image(self, tag: str, image: np.ndarray, step: int) -> None:
        """An ``(H, W, 3)`` uint8 image."""
        if self.writer is None:
            return
        image = np.asarray(image)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(
                f"image {tag!r} must be (H, W, 3) uint8, got {image.shape} {image.dtype}"
            )
        self.writer.add_image(tag, image, step, dataformats="HWC")

    def alignment(
        self, tag: str, weights: ArrayLike, step: int, tokens: list[str] | None = None, **timing
    ) -> None:
        """Attention weights ``(T_dec, T_enc)`` drawn by `aligner.attention.plot` for a
        card: time on x (seconds with `timing`'s ``r``, ``hop_length``, ``sample_rate``),
        source positions (labelled with `tokens` if given) on y."""
        if self.writer is not None:
            w = torch.as_tensor(_numpy(weights))
            self.image(tag, alignment_image(w, tokens=tokens, **timing), step)

    def mel(self, tag: str, mel: ArrayLike, step: int) -> None:
        """A (log-)mel spectrogram ``(T, n_mels)``: time on x, low bins at the bottom."""
        if self.writer is not None:
            self.image(tag, heatmap(mel, cmap="magma"), step)

    @_naming_the_folder
    def audio(self, tag: str, wav: ArrayLike, sample_rate: int, step: int) -> None:
        """A waveform ``(L,)`` in [-1, 1] (clipped)."""
        if self.writer is not None:
            w = torch.as_tensor(_numpy(wav)).clamp(-1.0, 1.0).reshape(1, -1)
            self.writer.add_audio(tag, w, step, sample_rate=sample_rate)

    def curve(
        self, tag: str, values: ArrayLike, step: int, threshold: float | None = None, title=""
    ) -> None:
        """A line plot of `values` in [0, 1] (e.g. the stop probability per decoder step) as
        an image, with a dashed horizontal line at `threshold`."""
        if self.writer is None:
            return
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=(4, 2), dpi=80)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.plot(_numpy(values).reshape(-1))
        if threshold is not None:
            ax.axhline(threshold, color="gray", linestyle="--", linewidth=0.8)
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("decoder step")
        ax.set_title(title, fontsize=9)
        fig.tight_layout()
        fig.canvas.draw()
        image = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
        self.image(tag, image, step)

    @_naming_the_folder
    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    @_naming_the_folder
    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class RunningMeans:
    """Running means of the logged training values between two log points."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sums: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.count = 0
        self.t0 = time.monotonic()

    def add(self, values: dict[str, float]) -> None:
        for k, v in values.items():
            self.sums[k] = self.sums.get(k, 0.0) + float(v)
            self.counts[k] = self.counts.get(k, 0) + 1
        self.count += 1

    def means(self) -> dict[str, float]:
        means = {k: v / self.counts[k] for k, v in self.sums.items()}
        if "overflow" in means:  # fraction of fp16 steps whose gradients overflowed
            means["overflow"] = self.sums["overflow"] / self.count
        return means

    def rate(self) -> float:
        return self.count / max(time.monotonic() - self.t0, 1e-9)
