"""Saved alignments read back and drawn: `plot_file` from a ``.npy`` and its durations JSON."""

import json

import numpy as np
import pytest

from aligner.alignment.plotting import plot_file
from aligner.alignment.reading import read_alignment


def diagonal(steps: int, tokens: int) -> np.ndarray:
    """(steps, tokens) alignment moving evenly from the first token to the last."""
    w = np.zeros((steps, tokens), np.float32)
    w[np.arange(steps), np.arange(steps) * tokens // steps] = 1.0
    return w


def write_align_outputs(folder, weights, tokens, frames):
    """What `aligner align` writes for one utterance: ID.npy and ID.durations.json."""
    np.save(folder / "u1.npy", weights)
    record = {
        "id": "u1",
        "tokens": tokens,
        "frames": frames,
        "r": 2,
        "hop_length": 256,
        "sample_rate": 16000,
    }
    (folder / "u1.durations.json").write_text(json.dumps(record))


def test_plot_file_takes_tokens_and_seconds_from_the_durations_json(tmp_path):
    write_align_outputs(tmp_path, diagonal(10, 3), ["h", " ", "i"], [8, 6, 6])
    found = read_alignment(tmp_path / "u1.npy")
    assert found.tokens == ["h", " ", "i"] and found.r == 2 and found.title == "u1"
    assert plot_file(tmp_path / "u1.npy", tmp_path / "u1.png").is_file()
    # the JSON alone (no .npy beside it): its hard alignment, frames x tokens
    (tmp_path / "u1.npy").unlink()
    found = read_alignment(tmp_path / "u1.durations.json")
    assert found.weights.shape == (20, 3) and found.r == 1
    assert found.weights[:8, 0].all() and found.weights[8:14, 1].all()
    assert plot_file(tmp_path / "u1.durations.json", tmp_path / "u1.png", force=True).is_file()


def test_plot_file_refuses_mismatched_or_bad_inputs(tmp_path):
    write_align_outputs(tmp_path, diagonal(10, 4), ["h", "i"], [8, 12])
    with pytest.raises(ValueError, match="2 tokens for an alignment of 4 columns"):
        plot_file(tmp_path / "u1.npy", tmp_path / "u1.png")
    np.save(tmp_path / "nan.npy", np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="finite"):
        plot_file(tmp_path / "nan.npy", tmp_path / "nan.png")
    (tmp_path / "bad.durations.json").write_text("{}")
    with pytest.raises(ValueError, match="'tokens' and 'frames'"):
        plot_file(tmp_path / "bad.durations.json", tmp_path / "bad.png")
