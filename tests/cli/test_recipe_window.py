"""The monotonic window a recipe names for synthesis (``model.decoder.window``): applied by
`aligner synthesize`, `aligner convert` and the Python API unless ``--window`` says
otherwise (``none``: no window); the report names the window used. The free-running
validation never applies it (tests/tasks/test_free_running.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from aligner.attention.base import window_mask
from aligner.inference.common import RECIPE_WINDOW
from aligner.inference.loading import load_speech_model
from aligner.models.tacotron.decoder import TacotronDecoder
from tests.cli.test_speech_cli import invoke, make_checkpoint


@pytest.fixture(scope="module")
def windowed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("window")
    return {
        "tts": make_checkpoint(tmp, "tts", window=[0, 1]),
        "plain": make_checkpoint(tmp, "tts"),
        "vc": make_checkpoint(tmp, "vc", window=[0, 1]),
        "root": tmp,
    }


def decode(ckpt, window, texts=("hello world, a good day", "the cat sat")):
    speech = load_speech_model(ckpt, "synthesize")
    ids = [speech.encode_text(t) for t in texts]
    torch.manual_seed(3)
    return speech, speech.generate(ids, batch_size=2, max_length_ratio=2.0, window=window)


def outside_window(alignment: torch.Tensor, window: tuple[int, int]) -> float:
    """Attention mass of each step outside ``window`` around the previous step's argmax."""
    total = 0.0
    for t in range(1, alignment.size(0)):
        last = alignment[:t].argmax(1)[-1:]  # the previous step's focus
        allowed = window_mask(last, alignment.size(1), window)[0]
        total += float(alignment[t][~allowed].sum())
    return total


def test_the_recipes_window_is_the_default_and_none_turns_it_off(windowed):
    speech, default = decode(windowed["tts"], RECIPE_WINDOW)
    assert speech.model.decoder.synthesis_window == (0, 1)
    _, explicit = decode(windowed["tts"], (0, 1))
    _, off = decode(windowed["tts"], None)
    for d, e in zip(default, explicit):
        torch.testing.assert_close(d.mel, e.mel)
        torch.testing.assert_close(d.alignment, e.alignment)
        assert outside_window(d.alignment, (0, 1)) < 1e-6
    # an untrained attention spreads over every token: without the window it leaves it
    assert sum(outside_window(o.alignment, (0, 1)) for o in off) > 0.1


def test_a_recipe_without_a_window_decodes_without_one(windowed):
    speech, default = decode(windowed["plain"], RECIPE_WINDOW)
    assert speech.model.decoder.synthesis_window is None
    _, off = decode(windowed["plain"], None)
    for d, o in zip(default, off):
        torch.testing.assert_close(d.alignment, o.alignment)


def synthesize_mel(ckpt, folder, *window: str) -> np.ndarray:
    """The mel `aligner synthesize` writes, after checking the report names the window."""
    r = invoke(
        "synthesize",
        "--checkpoint",
        ckpt,
        "--text",
        "Hello world, a good day.",
        "--out",
        folder / "s.wav",
        "--save-mel",
        folder,
        "--griffin-lim-iters",
        "2",
        "--max-length-ratio",
        "2",
        *window,
    )
    assert r.exit_code == 0, r.output
    said = {(): "window 0,1", ("--window", "0,1"): "window 0,1", ("--window", "none"): "no window"}
    assert said[window] in r.output
    (mel,) = [np.load(p) for p in folder.glob("*.npy")]
    return mel


def test_synthesize_takes_the_recipes_window_unless_told(windowed, tmp_path):
    ckpt = windowed["tts"]
    default = synthesize_mel(ckpt, tmp_path / "default")
    np.testing.assert_array_equal(
        default, synthesize_mel(ckpt, tmp_path / "same", "--window", "0,1")
    )
    off = synthesize_mel(ckpt, tmp_path / "off", "--window", "none")
    assert off.shape == default.shape and not np.array_equal(off, default)


def convert_mel(ckpt, src, folder, *window: str) -> np.ndarray:
    args = ["convert", "--checkpoint", ckpt, "--in", src, "--out", folder / "c.wav"]
    r = invoke(*args, "--save-mel", folder, "--griffin-lim-iters", "2", *window)
    assert r.exit_code == 0, r.output
    assert ("no window" if window else "window 0,1") in r.output
    (mel,) = [np.load(p) for p in folder.glob("*.npy")]
    return mel


def test_convert_takes_the_recipes_window_unless_told(windowed, tmp_path):
    ckpt, src = windowed["vc"], windowed["root"] / "data_vc" / "u1.wav"
    default = convert_mel(ckpt, src, tmp_path / "default")
    speech = load_speech_model(ckpt, "convert")
    assert speech.decoding_window(RECIPE_WINDOW) == (0, 1)
    off = convert_mel(ckpt, src, tmp_path / "off", "--window", "none")
    assert off.shape == default.shape and not np.array_equal(off, default)


@pytest.mark.parametrize("bad", [[1], [0, -1], "0,2", [0, 1, 2], [10_001, 0]])
def test_a_bad_recipe_window_names_the_key(bad):
    with pytest.raises(ValueError, match=r"model\.decoder\.window"):
        TacotronDecoder(n_mels=4, memory_dim=8, prenet_dims=(8,), attn_rnn_dim=8, window=bad)
