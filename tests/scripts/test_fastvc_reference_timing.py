"""scripts/fastvc_reference_timing.py: the reference timing of both voices as a FastVC's
target frames per encoder step."""

from __future__ import annotations

import json

import fastvc_reference_timing as ref
import pytest
from click.testing import CliRunner


def timings(duration: float, phones: list[tuple[float, float, str]], words=None) -> dict:
    return {
        "duration": duration,
        "phones": [list(p) for p in phones],
        "words": [list(w) for w in (words or [(phones[0][0], phones[-1][1], "w")])],
    }


def test_the_same_timing_gives_every_source_frame_one_target_frame():
    t = timings(1.0, [(0.1, 0.5, "a"), (0.5, 0.9, "b")])
    steps = ref.reference_step_frames(t, t, 100, 100, 2)
    assert steps.shape == (50,) and steps.sum().item() == pytest.approx(100)
    assert steps.tolist() == pytest.approx([2.0] * 50)
    odd = ref.reference_step_frames(t, t, 101, 101, 2)  # the last step holds one frame
    assert odd.shape == (51,) and odd[-1].item() == pytest.approx(1.0)


def test_each_phone_gets_the_target_frames_of_its_own_length():
    src = timings(1.0, [(0.0, 0.5, "a"), (0.5, 1.0, "b")])
    tgt = timings(2.0, [(0.0, 0.5, "a"), (0.5, 2.0, "b")])  # b three times as long
    steps = ref.reference_step_frames(src, tgt, 100, 200, 1)
    assert steps[:50].sum().item() == pytest.approx(50)  # a: 0.5 s -> 0.5 s of 200 frames
    assert steps[50:].sum().item() == pytest.approx(150)
    assert steps[60].item() == pytest.approx(3.0)


def test_other_phones_fall_back_to_words_and_other_words_are_an_error():
    src = timings(1.0, [(0.0, 0.4, "a"), (0.4, 1.0, "b")], [(0.0, 1.0, "w")])
    tgt = timings(1.0, [(0.0, 0.8, "x"), (0.8, 1.0, "b")], [(0.0, 1.0, "w")])
    steps = ref.reference_step_frames(src, tgt, 10, 10, 1)  # the word only: uniform
    assert steps.tolist() == pytest.approx([1.0] * 10)
    tgt["words"] = [[0.0, 1.0, "v"]]
    with pytest.raises(ValueError, match="words differ"):
        ref.reference_step_frames(src, tgt, 10, 10, 1)


def test_items_without_reference_times_are_one_line(tmp_path):
    (tmp_path / "converted").mkdir()
    (tmp_path / "test.jsonl").write_text(json.dumps({"id": "u1", "audio": "a.wav"}) + "\n")
    (tmp_path / "converted" / "manifest.jsonl").write_text(
        json.dumps({"id": "u1", "audio": "u1.wav"}) + "\n"
    )
    args = [
        "--checkpoint",
        str(tmp_path),
        "--in",
        str(tmp_path / "test.jsonl"),
        "--converted",
        str(tmp_path / "converted"),
        "--out",
        str(tmp_path / "out"),
    ]
    result = CliRunner().invoke(ref.main, args)
    assert result.exit_code == 1 and "item u1 has no 'timings'" in result.output
    assert "Traceback" not in result.output
