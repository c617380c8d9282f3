"""Alignment figures: landscape, token tick labels, seconds on x, one panel per
sentence, bounded memory for huge alignments, and thinned labels."""

import tracemalloc

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from aligner.attention.plot import (
    alignment_figure,
    alignment_image,
    alignments_figure,
    panel_paths,
    save_alignment_panels,
)
from aligner.attention.plot_matrix import MAX_PIXELS, pooled


def diagonal(steps: int, tokens: int) -> np.ndarray:
    """(steps, tokens) alignment moving evenly from the first token to the last."""
    w = np.zeros((steps, tokens), np.float32)
    w[np.arange(steps), np.arange(steps) * tokens // steps] = 1.0
    return w


class LazyDiagonal:
    """A (n, n) identity alignment that makes only the rows asked for (never n x n)."""

    def __init__(self, n: int):
        self.shape = (n, n)

    def __getitem__(self, rows: slice) -> np.ndarray:
        idx = np.arange(*rows.indices(self.shape[0]))
        out = np.zeros((len(idx), self.shape[1]), np.float32)
        out[np.arange(len(idx)), idx] = 1.0
        return out


def ticks(labels) -> list[str]:
    return [t.get_text() for t in labels]


def test_figure_is_landscape_with_token_tick_labels():
    tokens = list("hello")
    fig = alignment_figure(torch.tensor(diagonal(40, 5)), tokens, "hello")
    width, height = fig.get_size_inches()
    ax = fig.axes[0]
    assert width > height
    assert ticks(ax.get_yticklabels()) == tokens
    assert ax.get_title() == "hello" and ax.get_xlabel() == "decoder step"
    assert fig.axes[1].get_ylabel() == "attention weight"  # the colour bar
    plt.close(fig)
    image = alignment_image(diagonal(40, 5), tokens)
    assert image.shape[1] > image.shape[0] and image.dtype == np.uint8


def test_whitespace_tokens_are_visible_and_many_tokens_are_thinned():
    fig = alignment_figure(diagonal(300, 200), [" " if i % 5 == 0 else "a" for i in range(200)])
    labels = ticks(fig.axes[0].get_yticklabels())
    assert 5 <= len(labels) < 200 and labels[0] == "␣"
    assert "every" in fig.axes[0].get_ylabel()
    plt.close(fig)


def test_seconds_or_frames_on_the_horizontal_axis():
    fig = alignment_figure(diagonal(50, 5), list("abcde"), r=2, hop_length=256, sample_rate=16000)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time (s)"
    assert ax.get_xlim() == pytest.approx((0.0, 50 * 2 * 256 / 16000))
    plt.close(fig)
    fig = alignment_figure(diagonal(50, 5), r=3)
    assert fig.axes[0].get_xlabel().startswith("mel frame") and fig.axes[0].get_xlim()[1] == 150
    plt.close(fig)


def test_long_titles_are_shortened():
    fig = alignment_figure(diagonal(10, 3), title="word " * 100)
    assert len(fig.axes[0].get_title()) <= 80
    plt.close(fig)


def test_huge_alignment_is_pooled_in_bounded_memory():
    tracemalloc.start()
    fig = alignment_figure(LazyDiagonal(20000), title="huge")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    drawn = fig.axes[0].get_images()[0].get_array()
    assert max(drawn.shape) <= MAX_PIXELS
    assert peak < 100e6  # the full matrix would be 1.6 GB in float32
    plt.close(fig)


def test_pooling_keeps_the_maximum_of_each_block():
    w = torch.zeros(3001, 10, dtype=torch.bfloat16)
    w[1234, 7] = 1
    matrix, f_dec, f_enc = pooled(w, max_pixels=500)
    assert (f_dec, f_enc) == (7, 1) and matrix.shape == (429, 10)
    assert matrix[1234 // 7, 7] == 1 and matrix.sum() == 1


def test_one_panel_per_sentence_and_files_of_at_most_max_panels(tmp_path):
    weights = [diagonal(30, 4), diagonal(60, 6), diagonal(20, 2)]
    tokens = [list("abcd"), list("abcdef"), list("ab")]
    fig = alignments_figure(
        weights, tokens, ["one", "two", "three"], hop_length=256, sample_rate=16000
    )
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert len(panels) == 3
    assert [ticks(ax.get_yticklabels()) for ax in panels] == tokens
    assert panels[1].get_title() == "2. two" and panels[2].get_xlabel() == "time (s)"
    plt.close(fig)
    paths = save_alignment_panels([diagonal(10, 3)] * 13, tmp_path / "a.png")
    assert (
        paths == panel_paths(tmp_path / "a.png", 13) == [tmp_path / "a.png", tmp_path / "a-2.png"]
    )
    assert all(p.is_file() for p in paths)
    with pytest.raises(FileExistsError):
        save_alignment_panels([diagonal(10, 3)], tmp_path / "a.png")
