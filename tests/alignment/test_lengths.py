"""Each phone's usual length inside words (aligner.alignment.lengths)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.alignment.lengths import token_lengths, usual_frames


def test_only_phones_between_two_timed_phones_count():
    # "k" inside "a k a" three times (4, 6, 8 frames); after a separator or at an edge
    # it does not count, nor between a phone with no frames
    utts = [
        (["a", "k", "a"], [3, 4, 3]),
        (["a", "k", "a", " ", "k", "a"], [3, 6, 3, 5, 1, 3]),
        (["<s>", "k", "a", "k", "a"], [2, 1, 3, 8, 2]),
        (["a", "k", "a"], [0, 20, 2]),
    ]
    got = usual_frames(utts, quantile=0.5, min_count=1)
    assert got["k"] == pytest.approx(6.0)
    assert got["a"] == pytest.approx(3.0)  # only once between two timed phones ("k a k")
    assert "k" not in usual_frames(utts, quantile=0.5, min_count=4)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 30), min_size=5, max_size=40), st.floats(0.0, 1.0))
def test_the_quantile_of_the_lengths_inside_words(lengths, q):
    utts = [(["a", "k", "a"], [2, n, 2]) for n in lengths]
    assert usual_frames(utts, quantile=q)["k"] == pytest.approx(np.quantile(lengths, q), abs=1e-3)


def test_token_lengths_per_token_and_zero_where_unknown():
    assert token_lengths(["k", " ", "x"], {"k": 4.5}).tolist() == [4.5, 0.0, 0.0]
    assert token_lengths(["k"], None) is None and token_lengths(["k"], {}) is None
