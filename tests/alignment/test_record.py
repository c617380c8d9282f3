"""aligner.alignment.record: one utterance's alignment, its durations record and TextGrid."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from praatio import textgrid

from aligner.alignment.record import (
    UtteranceAlignment,
    resolve,
    write_record_textgrid,
)


def _record_of(utt):
    return resolve(utt).record


def hard_alignment(path: list[int], n: int) -> np.ndarray:
    """(S, N) one-hot rows: step s attends token path[s]."""
    w = np.zeros((len(path), n), dtype=np.float32)
    w[np.arange(len(path)), path] = 1.0
    return w


def utt(path, tokens, n_frames, r=1, hop=256, sr=22050) -> UtteranceAlignment:
    return UtteranceAlignment(
        "u1", list(tokens), hard_alignment(path, len(tokens)), n_frames, r, hop, sr
    )


def test_durations_by_hand_with_reduction_factor():
    # 5 steps of r=2 -> up to 10 frames; 9 true frames: the last step covers one frame.
    rec = _record_of(utt([0, 0, 1, 2, 2], "abc", n_frames=9, r=2, hop=200, sr=16000))
    assert rec["frames"] == [4, 2, 3]
    assert rec["seconds"] == pytest.approx([4 * 200 / 16000, 2 * 200 / 16000, 3 * 200 / 16000])
    assert rec["start_seconds"] == pytest.approx([0.0, 0.05, 0.075])
    assert rec["total_seconds"] == pytest.approx(9 * 200 / 16000)


def test_shape_mismatch_is_reported():
    with pytest.raises(ValueError, match="decoder steps"):
        utt([0, 1, 2], "abc", n_frames=9, r=2)
    with pytest.raises(ValueError, match="tokens"):
        UtteranceAlignment("x", ["a"], np.ones((3, 2)), 3, 1, 256, 22050)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    steps=st.integers(1, 30),
    r=st.integers(1, 4),
    cut=st.integers(0, 3),
    seed=st.integers(0, 1000),
)
def test_durations_sum_to_the_utterance(n, steps, r, cut, seed):
    """Any soft alignment: frames sum to n_frames, seconds to total, intervals tile the time."""
    w = torch.softmax(torch.randn(steps, n, generator=torch.Generator().manual_seed(seed)) * 3, -1)
    n_frames = steps * r - min(cut, r - 1)
    rec = _record_of(UtteranceAlignment("x", ["t"] * n, w.numpy(), n_frames, r, 256, 22050))
    assert sum(rec["frames"]) == n_frames
    assert min(rec["frames"]) >= 0
    assert sum(rec["seconds"]) == pytest.approx(rec["total_seconds"], abs=1e-5)
    ends = np.array(rec["start_seconds"]) + np.array(rec["seconds"])
    assert np.allclose(ends[:-1], rec["start_seconds"][1:], atol=1e-5)


def test_textgrid_round_trip(tmp_path):
    # token 1 (a space) -> "sp"; token 3 never attended -> no interval; boundaries half a
    # frame (0.05 s) before the first frame of a token: frames are centred on their hop
    u = utt([0, 0, 1, 2, 2, 2, 4], ["h", " ", "i", "x", "!"], n_frames=7, hop=100, sr=1000)
    rec = _record_of(u)
    write_record_textgrid(rec, tmp_path / "u.TextGrid")
    tg = textgrid.openTextgrid(str(tmp_path / "u.TextGrid"), includeEmptyIntervals=False)
    entries = [(round(e.start, 6), round(e.end, 6), e.label) for e in tg.getTier("tokens").entries]
    assert entries == [(0.0, 0.15, "h"), (0.15, 0.25, "sp"), (0.25, 0.55, "i"), (0.55, 0.65, "!")]
    assert tg.maxTimestamp == pytest.approx(0.7)


def test_textgrid_boundaries_never_overlap_from_rounding(tmp_path):
    """Frames whose seconds round differently as start + duration than as the next start
    (0.2322 + 0.092880 != 0.325079 at hop 256 / 22050 Hz) still give touching intervals."""
    sec = 256 / 22050
    frames = [20, 8, 4, 0, 7, 13]
    starts = [0, 20, 28, 32, 32, 39]
    record = {
        "tokens": ["a", " ", "b", "c", "d", "e"],
        "frames": frames,
        "start_seconds": [round(s * sec, 6) for s in starts],
        "seconds": [round(f * sec, 6) for f in frames],
        "total_seconds": round(sum(frames) * sec, 6),
        "hop_length": 256,
        "sample_rate": 22050,
    }
    write_record_textgrid(record, tmp_path / "x.TextGrid")
    tier = textgrid.openTextgrid(str(tmp_path / "x.TextGrid"), False).getTier("tokens")
    entries = [e for e in tier.entries if e.label]
    assert [e.label for e in entries] == ["a", "sp", "b", "d", "e"]
    assert all(a.end == b.start for a, b in zip(entries, entries[1:]))
    assert entries[-1].end == pytest.approx((sum(frames) - 0.5) * sec, abs=1e-6)


def _sub_frame_record(tier_edges: dict[int, float], labels: dict[int, str] | None = None) -> dict:
    """A record of `` h ə | l oʊ .`` (hop 256 at 22.05 kHz) whose phones tier puts the
    boundary before token k at ``tier_edges[k]`` frames (the frame grid elsewhere)."""
    tokens = ["<s>", "h", "ə", " ", "l", "oʊ", ".", "</s>"]
    frames = [2, 3, 4, 0, 3, 5, 4, 2]
    seconds = 256 / 22050
    edges = np.concatenate([[0], np.cumsum(frames)]).astype(float)
    moved = {k: tier_edges.get(k, edges[k]) for k in range(len(tokens) + 1)}
    moved[3] = moved[4] = tier_edges.get(4, edges[4])  # the separator holds no frame

    def time(k: int) -> float:
        return max(moved[k] - 0.5, 0.0) * seconds

    names = labels or {}
    phones = [[time(k), time(k + 1), names.get(k, tokens[k])] for k in (1, 2)]
    phones += [[time(4), time(5), names.get(4, "l")], [time(5), time(6) - 0.03, "oʊ"]]
    return {
        "tokens": tokens,
        "frames": frames,
        "hop_length": 256,
        "sample_rate": 22050,
        "phones": phones,
    }


def test_sub_frame_durations_move_the_boundaries_between_phones_that_meet():
    from aligner.alignment.reading import sub_frame_durations

    record = _sub_frame_record({2: 4.7, 4: 9.4})
    got = sub_frame_durations(record)
    # h|ə at 4.7 frames, ə|l (across the empty separator) at 9.4; l|oʊ on the grid; the
    # end of oʊ, moved in the tier to where the sound stops, is at a pause: the grid's
    np.testing.assert_allclose(got, [2, 2.7, 4.7, 0, 2.6, 5, 4, 2], atol=1e-6)
    assert got.sum() == pytest.approx(sum(record["frames"]))


def test_sub_frame_durations_keep_the_frames_of_a_tier_that_does_not_pair():
    from aligner.alignment.reading import sub_frame_durations

    frames = [2, 3, 4, 0, 3, 5, 4, 2]
    other = _sub_frame_record({2: 4.7}, labels={2: "a"})
    np.testing.assert_array_equal(sub_frame_durations(other), frames)
    bare = {k: v for k, v in _sub_frame_record({2: 4.7}).items() if k != "phones"}
    np.testing.assert_array_equal(sub_frame_durations(bare), frames)


@settings(max_examples=40, deadline=None)
@given(st.floats(-3.0, 12.0), st.floats(6.0, 15.0))
def test_sub_frame_durations_sum_to_the_frames_and_keep_half_a_frame(first, second):
    from aligner.alignment.reading import sub_frame_durations

    record = _sub_frame_record({2: first, 4: second})
    got = sub_frame_durations(record)
    assert got.sum() == pytest.approx(sum(record["frames"]))
    phones = [1, 2, 4, 5]
    assert (got[phones] >= 0.5 - 1e-9).all()
