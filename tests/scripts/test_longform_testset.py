"""scripts/longform_testset.py: the joined recordings hold each utterance's samples where
the shifted references say, the versions lack what they should, and the scorer gives 0 ms
and finds the put-in mismatch for a prediction equal to the references."""

from __future__ import annotations

import json
from pathlib import Path

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


def _built(corpus: Path, *flags: str) -> tuple[Path, dict[str, dict]]:
    """`build` of 0.1 minutes of the corpus with `flags` -> (its folder, its items by id)."""
    out = corpus / "long"
    args = ["--in", str(corpus / "test.jsonl"), "--out", str(out), "--minutes", "0.1"]
    longform_testset.main(["build", *args, *flags, "--force"])
    lines = (out / "long.jsonl").read_text().splitlines()
    return out, {json.loads(ln)["id"]: json.loads(ln) for ln in lines}


def test_the_music_version_is_the_full_one_after_its_intro(corpus):
    out, items = _built(corpus, "--music", "3")
    full, music = items["long_0.1min_full"], items["long_0.1min_music"]
    assert music["text"] == full["text"]
    put = {"kind": "audio not in the text", "start": 0.0, "end": 3.0, "text": ""}
    assert music["mismatch"] == put
    for side in ("words", "phones"):
        for (s0, e0, a), (s1, e1, b) in zip(full["timings"][side], music["timings"][side]):
            assert a == b and s1 == pytest.approx(s0 + 3.0) and e1 == pytest.approx(e0 + 3.0)
    wav_full, _ = sf.read(out / full["audio"])
    wav, sr = sf.read(out / music["audio"])
    assert np.allclose(wav[3 * sr :], wav_full, atol=1e-4)  # the same speech after the intro
    intro = wav[: 3 * sr]
    speech = wav_full[np.abs(wav_full) > 0.001]
    level = np.sqrt(np.mean(intro**2)) / np.sqrt(np.mean(speech**2))
    assert 0.5 < level < 2.0  # as loud as the speech
    # tones, not noise: most of a chord's energy lies in a few spectral peaks
    spectrum = np.abs(np.fft.rfft(intro[: sr // 2])) ** 2
    assert np.sort(spectrum)[-40:].sum() > 0.8 * spectrum.sum()


def test_the_cut_versions_stop_in_the_middle_of_a_word(corpus):
    out, items = _built(corpus, "--cut")
    full = items["long_0.1min_full"]
    words = full["timings"]["words"]
    wav_full, sr = sf.read(out / full["audio"])
    for version, word in (("cut", 2 * len(words) // 3), ("cutlast", len(words) - 2 + 2 // 3)):
        item = items[f"long_0.1min_{version}"]
        start, end, label = words[word]
        at = (start + end) / 2
        assert item["text"] == full["text"]
        assert item["timings"]["words"] == words[:word]  # the words that end before it
        assert item["timings"]["duration"] == pytest.approx(at, abs=1e-4)
        wav, _ = sf.read(out / item["audio"])
        assert len(wav) == int(at * sr) and np.allclose(wav, wav_full[: len(wav)], atol=1e-4)
        put = item["mismatch"]
        assert put["kind"] == "text not in the audio" and put["start"] == put["end"]
        assert put["text"].split()[0] == label and len(put["text"].split()) == len(words) - word


def test_the_cutfirst_version_begins_in_the_middle_of_a_word_of_its_first_sentence(corpus):
    out, items = _built(corpus, "--cut")
    full, item = items["long_0.1min_full"], items["long_0.1min_cutfirst"]
    words = full["timings"]["words"]
    wav_full, sr = sf.read(out / full["audio"])
    wav, _ = sf.read(out / item["audio"])
    first = len(wav_full) - len(wav)  # the samples left out
    at = first / sr
    start, end, label = next(w for w in words if w[0] < at < w[1])  # a word cut in two
    assert at == pytest.approx((start + end) / 2, abs=1 / sr)
    assert np.allclose(wav, wav_full[first:], atol=1e-4)
    assert item["text"] == full["text"]
    kept = [w for w in words if w[0] >= at]
    assert len(item["timings"]["words"]) == len(kept) and len(kept) < len(words) - 1
    for (s0, e0, a), (s1, e1, b) in zip(kept, item["timings"]["words"]):
        assert (
            a == b
            and s1 == pytest.approx(s0 - at, abs=1e-4)
            and e1 == pytest.approx(e0 - at, abs=1e-4)
        )
    assert item["timings"]["duration"] == pytest.approx(full["timings"]["duration"] - at, abs=1e-4)
    put = item["mismatch"]
    assert put == {"kind": "text not in the audio", "start": 0.0, "end": 0.0, "text": put["text"]}
    assert put["text"].split()[-1] == label
    assert len(put["text"].split()) == len(words) - len(kept)


def test_segments_are_scored_against_the_reference_words_of_their_span():
    words = [[0.5, 0.9, "One"], [1.0, 1.4, "two."], [2.5, 2.9, "three"], [3.0, 3.6, "four"]]
    refs = {
        "rec": {"id": "rec", "timings": {"words": words}},
        "bad": {"id": "bad", "timings": {"words": words}, "mismatch": {"start": 2.4, "end": 3.7}},
    }
    good = {  # the first two words, 10 ms late each, cut in the pauses
        "recording": "rec", "recording_start": 0.3, "recording_end": 1.6, "text": "One two.",
        "aligned_words": [[0.21, 0.61, "One"], [0.71, 1.11, "two"]],
    }  # fmt: skip
    cut = {  # cut inside "three", its text says four only
        "recording": "rec", "recording_start": 2.7, "recording_end": 3.8, "text": "four",
        "aligned_words": [[0.3, 0.9, "four"]],
    }  # fmt: skip
    on_mismatch = {**good, "recording": "bad", "recording_start": 2.4, "recording_end": 3.7}
    out = longform_testset.score_segments(refs, [good, cut, on_mismatch])
    assert out["utterances"] == 3
    assert out["text_matches"] == 1  # the cut one holds part of "three"
    assert out["cuts_in_a_word"] == 1
    assert out["on_a_mismatch"] == 1
    # good: four boundaries 10 ms off; cut: "four" exact; on_mismatch: no word pairs by label
    assert out["words_ms"] == pytest.approx(40 / 6, abs=0.01)
    assert out["reference_words_held_pct"] == pytest.approx(100 * (2 + 2 + 2) / 8)  # both cut


@pytest.mark.parametrize("where", ["first", "last"])
def test_the_wrong_word_can_be_a_sentences_first_or_last(corpus, where):
    out = corpus / where
    args = ["--out", str(out), "--minutes", "0.1", "--wrong-word", where]
    longform_testset.main(["build", "--in", str(corpus / "test.jsonl"), *args])
    items = [json.loads(ln) for ln in (out / "long.jsonl").read_text().splitlines()]
    full, wrong = items[0], items[-1]
    said = wrong["mismatch"]["text"]
    position = 0 if where == "first" else 1  # each utterance: two words, `a<i> b<i>.`
    assert said.startswith("ab"[position]) and said in full["text"] and said not in wrong["text"]


def test_the_foreign_version_writes_the_word_in_cyrillic_where_its_audio_is(corpus):
    out = corpus / "foreign"
    args = ["--out", str(out), "--minutes", "0.1", "--wrong-word", "last", "--foreign"]
    longform_testset.main(["build", "--in", str(corpus / "test.jsonl"), *args])
    lines = (out / "long.jsonl").read_text().splitlines()
    items = {json.loads(ln)["id"].rsplit("_", 1)[1]: json.loads(ln) for ln in lines}
    full, foreign, wrong = items["full"], items["foreign"], items["wrongword"]
    said = foreign["mismatch"]["text"]
    assert foreign["mismatch"]["kind"] == "word the model cannot read"
    assert foreign["mismatch"]["start"] == wrong["mismatch"]["start"]
    written = longform_testset._in_cyrillic({"text": said, "timings": {"words": [[0, 1, said]]}}, 0)
    assert written == "б" + said[1:] and written in foreign["text"] and said not in foreign["text"]
    assert foreign["text"].replace(written, said, 1) == full["text"]
    assert foreign["audio"] != full["audio"] and foreign["timings"] == full["timings"]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_noclause_version_lacks_the_audio_of_n_words_of_a_sentence(tmp_path, n):
    """Sentences of 7 words, each word at its own level: the `noclause` version keeps the
    text, lacks the audio of `n` words in a row of one sentence (`--clause-words`) and
    their references, the later references shifted by their length."""
    lines, word = [], 0.12
    for i in range(10):
        labels = [f"w{i}x{j}" for j in range(7)]
        wav = np.concatenate(
            [np.full(int(word * SR), 0.01 * (7 * i + j + 1), np.float32) for j in range(7)]
        )
        sf.write(tmp_path / f"u{i}.wav", wav, SR)
        words = [
            [round(j * word, 5), round((j + 1) * word, 5), lab] for j, lab in enumerate(labels)
        ]
        item = {
            "id": f"u{i}",
            "audio": f"u{i}.wav",
            "text": " ".join(labels) + ".",
            "duration": 7 * word,
        }
        lines.append(json.dumps({**item, "timings": {"words": words, "phones": words}}))
    (tmp_path / "test.jsonl").write_text("\n".join(lines) + "\n")
    out, items = _built(tmp_path, "--clause", "--clause-words", str(n))
    full, cut = items["long_0.1min_full"], items["long_0.1min_noclause"]
    put = cut["mismatch"]
    assert cut["text"] == full["text"] and put["kind"] == "text not in the audio"
    gone = put["text"].split()
    assert len(gone) == n and " ".join(gone) in full["text"]
    before = [w for w in full["timings"]["words"] if w[2] not in gone]
    assert [w[2] for w in cut["timings"]["words"]] == [w[2] for w in before]
    wav_full, sr = sf.read(out / full["audio"])
    wav, _ = sf.read(out / cut["audio"])
    assert len(wav_full) - len(wav) == pytest.approx(n * word * sr, abs=2)
    for s, e, label in cut["timings"]["words"]:
        i, j = (int(x) for x in label[1:].split("x"))
        assert np.allclose(
            wav[int(s * sr) + 2 : int(e * sr) - 2], 0.01 * (7 * i + j + 1), atol=1e-4
        )


def test_the_replaced_version_says_another_utterance_in_place_of_one(corpus):
    """`--replaced`: the full version's audio, its text with the utterance `noaudio` lacks
    replaced by one of the corpus the recording does not hold, reported as text not in
    the audio over that utterance's span."""
    out, items = _built(corpus, "--replaced")
    full, noaudio = items["long_0.1min_full"], items["long_0.1min_noaudio"]
    item = items["long_0.1min_replaced"]
    assert item["audio"] != full["audio"]
    assert np.allclose(sf.read(out / item["audio"])[0], sf.read(out / full["audio"])[0])
    assert item["timings"] == full["timings"]
    put, lacked = item["mismatch"], noaudio["mismatch"]
    assert put["kind"] == "text not in the audio" and put["text"] not in full["text"]
    assert item["text"] == full["text"].replace(lacked["text"], put["text"])
    said = [w for w in full["timings"]["words"] if w[2] in lacked["text"].rstrip(".").split()]
    assert (put["start"], put["end"]) == (said[0][0], said[-1][1])
