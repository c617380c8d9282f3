"""scripts/pause_edges.py: word boundaries at pauses against a synthetic recording's own
onset and offset."""

from __future__ import annotations

import json

import numpy as np
import pause_edges
import pytest
import soundfile as sf


def tone_item(tmp_path, rate: int, spans, words, phones, name: str = "u1") -> None:
    """A recording at `rate` of tones over `spans` (seconds) in near silence (-100 dB) and
    its manifest line in ref.jsonl (appended)."""
    t = np.arange(int(1.4 * rate)) / rate
    wav = 1e-5 * np.sin(2 * np.pi * 50 * t)
    for a, b in spans:
        a, b = round(a * rate), round(b * rate)
        wav[a:b] = 0.3 * np.sin(2 * np.pi * 220 * t[: b - a])
    sf.write(tmp_path / f"{name}.wav", wav, rate)
    item = {"id": name, "audio": f"{name}.wav", "text": "ma to", "speaker": f"s{rate}"}
    item["timings"] = {"duration": 1.4, "words": words, "phones": phones}
    with open(tmp_path / "ref.jsonl", "a") as fh:
        fh.write(json.dumps(item) + "\n")


@pytest.mark.parametrize("rate", [16000, 22050, 44100])
def test_pause_edges_measures_boundaries_from_the_audios_onset_and_offset(tmp_path, rate):
    """Tones from 0.3 to 0.7 s and from 0.9 to 1.2 s: a reference 10 ms early at the first
    onset and 20 ms late at its offset; the second word starts with a stop (its onset
    untold) and ends exactly; an alignment folder beside it. At every sample rate (the
    2 ms windows are whole samples: their length, not 2 ms, converts them to time)."""
    words = [[0.29, 0.72, "ma"], [0.9, 1.2, "to"]]
    phones = [[0.29, 0.5, "m"], [0.5, 0.72, "a"], [0.9, 1.0, "t"], [1.0, 1.2, "o"]]
    tone_item(tmp_path, rate, [(0.3, 0.7), (0.9, 1.2)], words, phones)
    (tmp_path / "ali").mkdir()
    predicted = {"words": [[0.3, 0.7, "ma"], [0.9, 1.21, "to"]], "phones": phones}
    (tmp_path / "ali/u1.durations.json").write_text(json.dumps(predicted))
    found, beyond = pause_edges.measure(tmp_path / "ref.jsonl", [tmp_path / "ali"], 0.1, True)
    ali, s = str(tmp_path / "ali"), f"s{rate}"
    step = 1000 * round(rate * 0.002) / rate  # one window (ms): the resolution
    assert found[("reference", s, "start")] == pytest.approx([-10.0], abs=step)
    assert found[("reference", s, "end")] == pytest.approx([20.0, 0.0], abs=step)
    assert found[(ali, s, "start")] == pytest.approx([0.0], abs=step)
    assert found[(ali, s, "end")] == pytest.approx([0.0, 10.0], abs=step)
    assert not beyond


def test_pause_edges_leaves_out_what_its_search_cannot_reach(tmp_path, capsys):
    """A reference 50 ms before the onset and 50 ms after the offset: beyond the 30 ms
    search, counted and left out rather than measured as 30 ms; bad options in one line."""
    words = [[0.25, 0.75, "ma"]]
    phones = [[0.25, 0.5, "m"], [0.5, 0.75, "a"]]
    tone_item(tmp_path, 16000, [(0.3, 0.7)], words, phones)
    found, beyond = pause_edges.measure(tmp_path / "ref.jsonl", [], 0.1, False)
    assert not found and beyond == {("all", "start"): 1, ("all", "end"): 1}
    pause_edges.main(["--reference", str(tmp_path / "ref.jsonl")])
    assert "left out: 1 word starts of all" in capsys.readouterr().out
    for argv, message in (
        (["--min-pause", "0"], "--min-pause must be above 0 s"),
        (["--predicted", str(tmp_path / "nowhere")], "is not a folder"),
    ):
        with pytest.raises(SystemExit, match=message):
            pause_edges.main(["--reference", str(tmp_path / "ref.jsonl"), *argv])
