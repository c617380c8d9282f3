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
