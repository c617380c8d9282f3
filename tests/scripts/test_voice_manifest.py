"""scripts/voice_manifest.py: one voice of a parallel corpus as a TTS manifest."""

from __future__ import annotations

import json

import voice_manifest


def write(path, items):
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")


def test_the_target_voice_keeps_ids_text_and_its_own_timings(tmp_path):
    (tmp_path / "wavs").mkdir()
    pair = {
        "id": "u1", "audio": "wavs/u1_src.wav", "target_audio": "wavs/u1_tgt.wav",
        "text": "Hello there.", "speaker": "m3", "target_speaker": "f2",
        "timings": {"duration": 2.0, "words": [[0.0, 2.0, "Hello"]]},
        "target_timings": {"duration": 1.5, "words": [[0.0, 1.5, "Hello"]]},
    }  # fmt: skip
    write(tmp_path / "train.jsonl", [pair])
    out = tmp_path / "tts" / "target_train.jsonl"
    assert voice_manifest.main(["--in", str(tmp_path / "train.jsonl"), "--out", str(out)]) == 0
    (item,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert item == {
        "id": "u1", "audio": "../wavs/u1_tgt.wav", "text": "Hello there.",
        "timings": pair["target_timings"], "speaker": "f2",
    }  # fmt: skip
    source = tmp_path / "source.jsonl"
    assert voice_manifest.main(["--in", str(tmp_path / "train.jsonl"), "--out", str(source),
                                "--key", "audio"]) == 0  # fmt: skip
    assert json.loads(source.read_text())["timings"] == pair["timings"]


def test_an_item_without_the_voice_or_an_existing_output_is_one_line(tmp_path, capsys):
    write(tmp_path / "train.jsonl", [{"id": "u1", "audio": "a.wav", "text": "x"}])
    out = tmp_path / "t.jsonl"
    assert voice_manifest.main(["--in", str(tmp_path / "train.jsonl"), "--out", str(out)]) == 1
    assert "item 'u1' has no 'target_audio' recording" in capsys.readouterr().err
    assert not out.exists()
    out.write_text("keep\n")
    assert voice_manifest.main(["--in", str(tmp_path / "train.jsonl"), "--out", str(out),
                                "--key", "audio"]) == 1  # fmt: skip
    assert "pass --force" in capsys.readouterr().err and out.read_text() == "keep\n"
