"""scripts/longform_testset.py: the joined recordings hold each utterance's samples where
the shifted references say, the versions lack what they should, and the scorer gives 0 ms
and finds the put-in mismatch for a prediction equal to the references."""

from __future__ import annotations

import json

import longform_testset
import numpy as np
import pytest
import soundfile as sf

SR = 8000


@pytest.fixture
def corpus(tmp_path):
    lines = []
    for i in range(12):
        n = int((0.5 + 0.05 * i) * SR)
        wav = np.full(n, 0.01 * (i + 1), np.float32)  # each utterance its own level
        sf.write(tmp_path / f"u{i}.wav", wav, SR)
        half = round(n / SR / 2, 5)
        words = [[0.0, half, f"a{i}"], [half, round(n / SR, 5), f"b{i}"]]
        item = {"id": f"u{i}", "audio": f"u{i}.wav", "text": f"a{i} b{i}.", "duration": n / SR}
        lines.append(json.dumps({**item, "timings": {"words": words, "phones": words}}))
    (tmp_path / "test.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_built_recordings_match_their_shifted_references(corpus):
    out = corpus / "long"
    longform_testset.main(
        ["build", "--in", str(corpus / "test.jsonl"), "--out", str(out), "--minutes", "0.1"]
    )
    items = {
        json.loads(ln)["id"]: json.loads(ln) for ln in (out / "long.jsonl").read_text().splitlines()
    }
    assert set(items) == {f"long_0.1min_{v}" for v in ("full", "noaudio", "notext", "wrongword")}
    full = items["long_0.1min_full"]
    wav, sr = sf.read(out / full["audio"])
    assert abs(len(wav) / sr - full["timings"]["duration"]) < 1e-4
    for s, e, label in full["timings"]["words"][::2]:  # each utterance's first word
        level = 0.01 * (int(label[1:]) + 1)
        assert np.allclose(wav[int(s * sr) + 2 : int(e * sr) - 2], level, atol=1e-4)
    parts = full["text"].count(".")
    noaudio, notext = items["long_0.1min_noaudio"], items["long_0.1min_notext"]
    assert noaudio["text"] == full["text"] and len(noaudio["timings"]["words"]) == 2 * parts - 2
    assert notext["text"].count(".") == parts - 1 and len(notext["timings"]["words"]) == 2 * parts
    dropped = notext["mismatch"]["text"]
    assert dropped in full["text"] and dropped not in notext["text"]
    wrong = items["long_0.1min_wrongword"]
    assert wrong["text"] != full["text"] and wrong["mismatch"]["kind"] == "word unlike its audio"
    record = {"words": notext["timings"]["words"], "mismatches": [notext["mismatch"]]}
    score = longform_testset.score_item(notext, record)
    assert score["mean_ms"] == 0.0 and score["mismatch_found"] and score["beside_max_ms"] == 0.0
    missing = longform_testset.score_item(notext, {"words": record["words"], "mismatches": []})
    assert missing["mismatch_found"] is False
