"""Tokens with frame durations -> words and phones intervals (aligner.alignment.tiers)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.alignment.tiers import frame_bounds, optional_tokens, token_tiers

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


TOKENS = ["h", "ə", " ", "j", "u", ",", " ", "ð", "ɛ", "ɹ", ".", "</s>"]
FRAMES = [4, 6, 3, 5, 5, 8, 0, 4, 4, 6, 5, 1]  # token edges 0 4 10 13 18 23 31 31 35 39 45 50 51


def _spans(tier):
    return [x for a in tier for x in (a.start, a.end)]


def test_pauses_from_the_audio_split_the_tokens_outside_words():
    """Silent frames inside the separator (11-12) and the comma (25-28) are pauses; the
    sound before them ends the phone before, the sound after starts the phone after; the
    final ". </s>" has no silence: the last vowel keeps its frames."""
    t = frame_bounds([1] * 51, SEC)  # the time before each frame
    pauses = np.zeros(51, bool)
    pauses[11:13] = pauses[25:29] = True
    tiers = token_tiers(TOKENS, FRAMES, SEC, "phonemes", "Ha, you there.", pauses)
    assert _spans(tiers["phones"]) == pytest.approx(
        t[[0, 4, 4, 11, 13, 18, 18, 25, 29, 35, 35, 39, 39, 51]]
    )
    assert _spans(tiers["words"]) == pytest.approx(t[[0, 11, 13, 25, 29, 51]])
    # the same audio without a silence: no pause at all, the punctuation's frames included
    tiers = token_tiers(TOKENS, FRAMES, SEC, "phonemes", "Ha, you there.", np.zeros(51, bool))
    assert _spans(tiers["words"]) == pytest.approx(t[[0, 13, 13, 31, 31, 51]])
    with pytest.raises(ValueError, match="one value per frame"):
        token_tiers(TOKENS, FRAMES, SEC, "phonemes", pauses=np.zeros(50, bool))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", " ", ",", "</s>"]), st.integers(0, 4)),
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_pauses_leave_phones_ordered_and_gaps_only_where_silent(pairs, data):
    tokens = [tok for tok, _ in pairs]
    frames = [max(n, 1) if tok in ("a", "b") else n for tok, n in pairs]  # phones: a frame
    total = sum(frames)
    pauses = np.array(data.draw(st.lists(st.booleans(), min_size=total, max_size=total)), bool)
    t = frame_bounds([1] * total, SEC)
    phones = token_tiers(tokens, frames, SEC, "phonemes", pauses=pauses).get("phones", [])
    assert len(phones) == sum(tok in ("a", "b") for tok in tokens)
    edges = np.concatenate([[0], np.cumsum(frames)])
    idx = [i for i, tok in enumerate(tokens) if tok in ("a", "b")]
    own = {i: [edges[i], edges[i + 1]] for i in idx}
    for k, side in ((0, 0), (-1, 1)):  # the first phone's silence at the start is a pause
        span = own[idx[k]] if idx and (side or edges[idx[0]] == 0) else None  # the last's too
        sound = np.flatnonzero(~pauses[span[0] : span[1]]) if span else []
        if len(sound):  # up to its sound; a phone without sound keeps its frames
            span[side] = span[0] + (sound[-1] + 1 if side else sound[0])
    for p, i in zip(phones, idx):  # a phone keeps at least its own frames but those
        assert p.start <= t[own[i][0]] + 1e-9 and p.end >= t[own[i][1]] - 1e-9
        assert p.start < p.end
    outside = np.repeat([tok not in ("a", "b") for tok in tokens], frames)
    for p, q in zip(phones, phones[1:]):  # ordered, no overlap; a gap runs from a silent
        assert p.end <= q.start + 1e-9  # frame to a silent frame of tokens outside words
        gap = [f for f in range(total) if t[f] >= p.end - 1e-9 and t[f + 1] <= q.start + 1e-9]
        if gap:
            assert pauses[gap[0]] and pauses[gap[-1]] and outside[gap].all()


def test_the_silence_at_the_recordings_edges_is_no_part_of_a_word():
    """A Tacotron has no <s>: the leading silence (frames 0-2) is in its first phone, and
    the trailing one (frames 12-13) in the last; the words start and end with the sound.
    Where <s> holds the leading frames, the first phone's quiet onset stays a phone's."""
    t = frame_bounds([1] * 14, SEC)
    pauses = np.zeros(14, bool)
    pauses[0:3] = pauses[12:14] = True
    tiers = token_tiers(["h", "ə", " ", "j", "u"], [5, 3, 0, 2, 4], SEC, "phonemes", pauses=pauses)
    assert _spans(tiers["words"]) == pytest.approx(t[[3, 8, 8, 12]])
    assert _spans(tiers["phones"])[:2] == pytest.approx(t[[3, 5]])
    silent = token_tiers(["h", "u"], [3, 3], SEC, "phonemes", pauses=np.ones(6, bool))
    assert _spans(silent["phones"]) == pytest.approx(t[[0, 3, 3, 6]])  # no sound: as they were

    def words_with_s(frames, audio_pauses):
        tokens = ["<s>", "h", "ə", " ", "j", "u", "</s>"]
        return _spans(token_tiers(tokens, frames, SEC, "phonemes", pauses=audio_pauses)["words"])

    assert words_with_s([2, 3, 3, 0, 2, 3, 1], pauses) == pytest.approx(t[[2, 8, 8, 12]])
    # a leading breath that never falls silent: <s> keeps its frames, the word starts after
    breath = np.zeros(14, bool)
    breath[12:14] = True
    assert words_with_s([3, 2, 3, 0, 2, 3, 1], breath) == pytest.approx(t[[3, 8, 8, 12]])


def test_edges_move_only_the_boundaries_between_phones_that_meet():
    tokens = ["<s>", "h", "ə", " ", "j", "u", ".", "</s>"]
    frames = [2, 3, 4, 0, 3, 5, 2, 1]
    edges = np.concatenate([[0], np.cumsum(frames)]).astype(float)
    edges[2], edges[3:5], edges[5] = 5.25, 8.5, 11.75  # h|ə, ə| |j, j|u
    t = lambda e: (e - 0.5) * SEC  # noqa: E731
    for pauses in (None, np.zeros(sum(frames), bool)):
        tiers = token_tiers(tokens, frames, SEC, "phonemes", pauses=pauses, edges=edges)
        got = [(p.start, p.end) for p in tiers["phones"]]
        grid = token_tiers(tokens, frames, SEC, "phonemes", pauses=pauses)["phones"]
        assert got[0][0] == pytest.approx(grid[0].start)  # after <s>: on the grid
        assert got[-1][1] == pytest.approx(grid[-1].end)  # before '.': on the grid
        inner = [got[0][1], got[1][0], got[1][1], got[2][0], got[2][1], got[3][0]]
        assert inner == pytest.approx([t(5.25), t(5.25), t(8.5), t(8.5), t(11.75), t(11.75)])
        words = [x for w in tiers["words"] for x in (w.start, w.end)]
        assert words == pytest.approx([got[0][0], t(8.5), t(8.5), got[-1][1]])
    with pytest.raises(ValueError, match="edges"):
        token_tiers(tokens, frames, SEC, "phonemes", edges=edges[:-1])


def test_a_phone_after_a_pause_takes_what_it_lacks_of_its_usual_length_from_the_silence():
    """``k`` follows the pause (frames 8-15) with 2 frames of sound; usually it holds 5:
    it starts 3 frames into the silence, the pause keeps the rest. A phone as long as its
    usual length, one with none known, and one whose lack exceeds the pause do not move
    past the pause's start; phones that meet stay as they were."""
    tokens = ["h", "ə", " ", "k", "u"]
    frames = [4, 4, 8, 2, 4]  # edges 0 4 8 16 18 22
    t = frame_bounds([1] * 22, SEC)
    pauses = np.zeros(22, bool)
    pauses[8:16] = True

    def phones(usual):
        tiers = token_tiers(tokens, frames, SEC, "phonemes", pauses=pauses, usual=usual)
        return _spans(tiers["phones"])

    plain = phones(None)
    assert plain == pytest.approx(t[[0, 4, 4, 8, 16, 18, 18, 22]])
    assert phones(np.array([4, 4, 0, 5, 4.0])) == pytest.approx(t[[0, 4, 4, 8, 13, 18, 18, 22]])
    assert phones(np.array([9, 9, 0, 2, 9.0])) == pytest.approx(plain)  # long enough
    assert phones(np.array([4, 4, 0, 0, 4.0])) == pytest.approx(plain)  # none known
    assert phones(np.array([4, 4, 0, 30, 4.0])) == pytest.approx(t[[0, 4, 4, 8, 8, 18, 18, 22]])
    # without a silence the usual lengths change nothing
    quiet = np.zeros(22, bool)
    usual = np.array([9, 9, 0, 9, 9.0])
    assert token_tiers(tokens, frames, SEC, "phonemes", pauses=quiet, usual=usual) == (
        token_tiers(tokens, frames, SEC, "phonemes", pauses=quiet)
    )


def test_the_first_phone_takes_what_it_lacks_from_the_leading_silence():
    tokens = ["<s>", "p", "a"]
    frames = [6, 1, 5]  # <s> holds the leading silence 0-5, p only its burst
    pauses = np.zeros(12, bool)
    pauses[:6] = True
    t = frame_bounds([1] * 12, SEC)
    tiers = token_tiers(tokens, frames, SEC, "phonemes", pauses=pauses, usual=np.array([0, 4, 3.0]))
    assert _spans(tiers["phones"]) == pytest.approx(t[[3, 7, 7, 12]])
