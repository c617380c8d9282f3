"""Tokens with frame durations -> words and phones intervals (aligner.text.tiers)."""

from __future__ import annotations

import numpy as np
import pytest

from aligner.text.tiers import frame_bounds, optional_tokens, token_tiers

SEC = 0.01  # seconds per frame


def test_frame_bounds_lie_half_a_frame_before_each_token():
    assert frame_bounds([2, 3, 1], SEC) == pytest.approx([0.0, 0.015, 0.045, 0.055])


def test_phonemes_words_phones_pauses_and_separators():
    tokens = ["h", "ə", " ", "j", "u", ",", " ", "ð", "ɛ", "ɹ", ".", "</s>"]
    frames = [4, 6, 3, 5, 5, 8, 0, 4, 4, 6, 5, 1]
    assert optional_tokens(tokens).tolist() == [t in " ,.</s>" for t in tokens]
    b = frame_bounds(frames, SEC)
    tiers = token_tiers(tokens, frames, SEC, "phonemes", text="Ha, you there.")
    # the bare separator after "hə" is no pause: the word ends where "ju" starts; the
    # comma is one: "ju" ends where its frames end, and "ðɛɹ" starts after the pause
    got = [x for w in tiers["words"] for x in (w.start, w.end)]
    assert got == pytest.approx([b[0], b[3], b[3], b[5], b[7], b[10]])
    assert [w.label for w in tiers["words"]] == ["Ha", "you", "there"]  # the text's words
    assert [p.label for p in tiers["phones"]] == ["h", "ə", "j", "u", "ð", "ɛ", "ɹ"]
    assert tiers["phones"][1].end == pytest.approx(b[3])  # the word's last phone too


def test_labels_come_from_the_text_when_the_words_agree():
    tokens, frames = ["a", "b", " ", "c"], [2, 2, 1, 3]
    assert [w.label for w in token_tiers(tokens, frames, SEC, "chars", "Ab, c!")["words"]] == [
        "Ab",
        "c",
    ]
    assert [
        w.label for w in token_tiers(tokens, frames, SEC, "chars", "one two three")["words"]
    ] == [
        "ab",
        "c",
    ]


def test_characters_have_no_phones_and_vc_positions_nothing():
    assert set(token_tiers(["a", " ", "b"], [1, 1, 1], SEC, "chars")) == {"words"}
    assert token_tiers(["0", "1"], [2, 2], SEC, "positions") == {}


def test_tokens_without_frames_give_no_interval():
    tiers = token_tiers(["a", "b", " ", "c"], [3, 0, 2, 0], SEC, "phonemes")
    assert [p.label for p in tiers["phones"]] == ["a"]
    assert [w.label for w in tiers["words"]] == ["a b"]  # "c" had no frame: no word
    assert np.isclose(tiers["words"][0].end, frame_bounds([3, 0, 2, 0], SEC)[1])
