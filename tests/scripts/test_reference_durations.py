"""scripts/reference_durations.py: an alignment model's durations files rewritten with the
manifest's reference phone times, against hand-counted frames."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import reference_durations

from aligner.alignment.reading import sub_frame_durations

HOP, RATE = 256, 22050
FRAME = HOP / RATE  # 11.61 ms


def _record(uid: str, tokens: list[str], total: int) -> dict:
    frames = [total // len(tokens)] * len(tokens)
    frames[-1] += total - sum(frames)
    return {
        "id": uid,
        "tokens": tokens,
        "frames": frames,
        "total_frames": total,
        "hop_length": HOP,
        "sample_rate": RATE,
        "phones": [],
        "words": [],
    }


def test_frames_follow_the_reference_phones_rounded_along_the_utterance() -> None:
    record = _record("u", ["<s>", "a", " ", "b", "c", ".", "</s>"], 40)
    # a pause of 0.1 s before "a", one between the words, c ends 0.05 s before the end
    phones = [[0.1, 0.2, "a"], [0.25, 0.3, "b"], [0.3, 0.4144, "c"]]
    frames, _ = reference_durations.reference_frames(record, phones)
    ends = [round(t / FRAME + 0.5) for t in (0.1, 0.2, 0.25, 0.3, 0.4144)]  # frame edges
    assert ends == [9, 18, 22, 26, 36]
    # <s> up to a's start, a, the separator up to b's start, b, c, "." 0 frames, </s> the rest
    assert frames == [9, 9, 4, 4, 10, 0, 4]
    assert sum(frames) == record["total_frames"]


def test_phones_that_do_not_pair_give_nothing() -> None:
    record = _record("u", ["<s>", "a", " ", "b", "</s>"], 20)
    assert reference_durations.reference_frames(record, [[0.0, 0.1, "a"]]) is None
    assert reference_durations.reference_frames(record, []) is None


def test_writes_each_split_and_counts_the_items_left_out(tmp_path: Path, capsys) -> None:
    timings = {
        "words": [[0.1, 0.2, "a"], [0.25, 0.4144, "bc"]],
        "phones": [[0.1, 0.2, "a"], [0.25, 0.3, "b"], [0.3, 0.4144, "c"]],
    }
    items = [
        {"id": "u0", "audio": "u0.wav", "text": "a bc.", "timings": timings},
        {"id": "u1", "audio": "u1.wav", "text": "a b.", "timings": timings},
    ]
    for split in ("train", "valid"):
        (tmp_path / f"{split}.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
        folder = tmp_path / "durations" / split
        folder.mkdir(parents=True)
        for uid, tokens in (
            ("u0", ["<s>", "a", " ", "b", "c", ".", "</s>"]),
            ("u1", ["<s>", "a", " ", "b", ".", "</s>"]),
        ):
            record = _record(uid, tokens, 40)
            (folder / f"{uid}.durations.json").write_text(json.dumps(record))
    assert reference_durations.main(["--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "train: 1 written" in out and "1 left out" in out
    written = json.loads((tmp_path / "durations_reference/valid/u0.durations.json").read_text())
    assert not (tmp_path / "durations_reference/valid/u1.durations.json").exists()
    assert written["frames"] == [9, 9, 4, 4, 10, 0, 4] and written["method"] == "reference"
    assert written["words"] == timings["words"]
    # the phones tier pairs with the tokens: sub-frame targets are the reference's boundaries
    sub = sub_frame_durations(written)
    np.testing.assert_allclose(sub.sum(), 40)
    edges = np.cumsum(sub)
    np.testing.assert_allclose(edges[3], 0.3 / FRAME + 0.5)  # b | c: the reference's, below a frame


def test_a_missing_folder_is_one_line(tmp_path: Path, capsys) -> None:
    assert reference_durations.main(["--data", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_bad_manifest_line_is_named(tmp_path: Path) -> None:
    (tmp_path / "durations" / "train").mkdir(parents=True)
    (tmp_path / "train.jsonl").write_text('{"id": "u0"}\n{not json\n')
    with pytest.raises(SystemExit, match=r"train.jsonl:2: not a manifest item"):
        reference_durations.main(["--data", str(tmp_path), "--splits", "train"])
