"""Intervals and timings: their JSON form, TextGrids read back, boundary mapping errors."""

from __future__ import annotations

import pytest

from aligner.alignment.intervals import Interval, Timings, mapping_errors
from aligner.alignment.textgrid import read_textgrid


def test_malformed_timings_and_textgrids_are_named(tmp_path):
    with pytest.raises(ValueError, match="malformed timings"):
        Timings.from_dict({"words": [[0, 1]], "phones": [], "duration": 1})
    (tmp_path / "bad.TextGrid").write_text("not a textgrid")
    with pytest.raises(ValueError, match="bad.TextGrid is not a readable TextGrid"):
        read_textgrid(tmp_path / "bad.TextGrid")


def test_mapping_errors_of_a_voice_twice_as_slow():
    """The target says every phone in twice the time: a mapping that gives each source
    position two target frames is exact; one that lags a frame is off by one frame."""
    source = Timings([], [Interval(0.0, 0.1, "a"), Interval(0.1, 0.3, "b")], 0.3)
    target = Timings([], [Interval(0.0, 0.2, "a"), Interval(0.2, 0.6, "b")], 0.6)
    exact = [2] * 6  # 6 source positions of 0.05 s, 2 target frames of 0.05 s each
    assert mapping_errors(exact, 0.05, 0.05, source, target) == pytest.approx([0, 0, 0, 0])
    late = [3, 2, 2, 2, 2, 1]  # the first position holds one frame too many
    assert mapping_errors(late, 0.05, 0.05, source, target) == pytest.approx([0, 0.05, 0.05, 0])
    with pytest.raises(ValueError, match="2 phones in the source, 1 in the target"):
        mapping_errors(exact, 0.05, 0.05, source, Timings([], target.phones[:1], 0.6))
