"""`aligner segment`: a long recording's alignment cut into an utterance corpus at its
pauses, every utterance within the length range and cut in silence, the mismatches' spans
left out and listed, the text's own words kept, a corpus `read_manifest` reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from aligner.cli import main
from aligner.data.manifest import read_manifest
from aligner.data.segment import SegmentRules, utterances

SR = 16000


def _record(n_sentences: int = 6, mismatch: bool = True) -> dict:
    """Sentences of four 0.4 s words (0.05 s apart), 0.6 s pauses between sentences."""
    words, sentences, t = [], [], 0.5
    for k in range(n_sentences):
        said = [f"w{k}x{j}" for j in range(4)]
        sentences.append({"text": " ".join(said[:-1] + [said[-1] + "."]), "start": t, "end": 0})
        for w in said:
            words.append([round(t, 3), round(t + 0.4, 3), w])
            t += 0.45
        t += 0.55
    record = {"words": words, "total_seconds": round(t + 0.5, 3), "sentences": sentences}
    record["mismatches"] = []
    if mismatch:  # sentence 3's second word is not what the audio says
        s, e = words[13][0], words[13][1]
        record["mismatches"].append(
            {"kind": "word unlike its audio", "start": s, "end": e, "text": "w3x1"}
        )
    return record


def test_utterances_are_cut_in_pauses_within_the_range_and_skip_mismatches():
    record = _record()
    rules = SegmentRules(min_seconds=1.0, max_seconds=4.0, min_pause=0.3, pad=0.15)
    cuts, left = utterances(record, rules)
    words = record["words"]
    for lo, hi, group in cuts:
        assert rules.min_seconds <= words[group[-1]][1] - words[group[0]][0] <= rules.max_seconds
        assert hi - lo <= rules.max_seconds + 2 * rules.pad
        assert lo < words[group[0]][0] and hi > words[group[-1]][1]  # silence at each edge
        assert group == list(range(group[0], group[-1] + 1))
        inside = [w for w in words if lo < w[1] and w[0] < hi]
        assert len(inside) == len(group)  # no word cut in two
    used = {i for _, _, g in cuts for i in g}
    assert 13 not in used  # the mismatched word
    assert not any(g[0] < 13 < g[-1] for _, _, g in cuts)
    assert any("word unlike its audio" in s["reason"] for s in left)
    # two sentences (4.05 s) exceed 4 s: one sentence each, the words of sentence 3 on
    # either side of the mismatched word packed with the sentence beside them
    assert [g for _, _, g in cuts] == [
        [0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11, 12], [14, 15, 16, 17, 18, 19], [20, 21, 22, 23]
    ]  # fmt: skip
    short = utterances(record, SegmentRules(min_seconds=2.0, max_seconds=2.5, min_pause=0.3))
    assert [s["reason"] for s in short[1]].count("shorter than --min-seconds") == 7  # 5 + 2 parts


def test_a_word_that_abuts_a_mismatch_is_left_out_with_it():
    record = _record(mismatch=False)
    words = record["words"]
    # audio not in the text right after word 13 (no pause): its word may be wrong too
    record["mismatches"] = [
        {"kind": "audio not in the text", "start": words[13][1] + 0.001, "end": words[14][0] - 0.001, "text": ""}
    ]  # fmt: skip
    cuts, _ = utterances(record, SegmentRules(min_seconds=0.3, max_seconds=4.0, min_pause=0.3))
    used = {i for _, _, g in cuts for i in g}
    assert 13 not in used and 14 not in used  # both within 20 ms of it
    assert {12, 15} <= used


def test_a_phrase_longer_than_the_range_is_left_out():
    record = _record(2, mismatch=False)
    cuts, left = utterances(record, SegmentRules(min_seconds=0.5, max_seconds=1.0, min_pause=0.3))
    assert (
        cuts == []
        and [s["reason"] for s in left] == ["no pause to cut at within --max-seconds"] * 2
    )


def test_the_cli_writes_a_corpus_train_reads(tmp_path):
    record = _record()
    audio = tmp_path / "chapter.wav"
    sf.write(audio, np.random.default_rng(0).normal(0, 0.1, int(record["total_seconds"] * SR)), SR)
    ali = tmp_path / "chapter.durations.json"
    ali.write_text(json.dumps(record))
    out = tmp_path / "corpus"
    args = ["segment", "--audio", str(audio), "--alignment", str(ali), "--out", str(out)]
    r = CliRunner().invoke(main, [*args, "--max-seconds", "4", "--min-pause", "0.3"])
    assert r.exit_code == 0, r.output
    items = [it for s in ("train", "valid", "test") for it in read_manifest(out / f"{s}.jsonl")]
    assert len(items) == 5  # as in the test above
    for it in items:
        info = sf.info(it["audio"])
        assert abs(info.duration - it["duration"]) < 1e-3 and info.samplerate == SR
        assert it["speaker"] == "chapter" and it["text"].split()[0].startswith("w")
        assert all(0 < s < e < it["duration"] for s, e, _ in it["aligned_words"])
    assert any(it["text"].endswith(".") for it in items)  # the text's own punctuation
    summary = json.loads((out / "summary.json").read_text())
    assert any("word unlike its audio" in w for w in summary["warnings"])
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and "--force" in again.output and "Traceback" not in again.output


@pytest.mark.parametrize(
    "args, words",
    [
        (["--audio", "nope.wav", "--alignment", "x.json"], ["--audio", "does not exist"]),
        (["--in", "m.jsonl"], ["--alignments"]),
        ([], ["--audio", "--alignment"]),
        (["--in", "m.jsonl", "--alignments", "a", "--audio", "x.wav"], ["not both"]),
    ],
)
def test_bad_input_is_one_line(tmp_path, args, words):
    r = CliRunner().invoke(main, ["segment", *args, "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert all(w in r.output for w in words), r.output


def test_a_missing_alignments_folder_is_named(tmp_path):
    """Not the manifest's first bad line: the folder that is not there."""
    (tmp_path / "m.jsonl").write_text(json.dumps({"id": "a", "audio": "a.wav"}) + "\n")
    args = ["--in", str(tmp_path / "m.jsonl"), "--alignments", str(tmp_path / "nope")]
    r = CliRunner().invoke(main, ["segment", *args, "--out", str(tmp_path / "o")])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert f"--alignments {tmp_path / 'nope'} does not exist" in r.output, r.output


def test_a_record_named_after_the_audio_file_points_at_the_one_align_wrote(tmp_path):
    """``aligner align`` writes ``Mein Kapitel – 1.wav``'s record as
    ``Mein_Kapitel___1.durations.json``; the name a user types from the audio's is
    answered with the one written."""
    wav = tmp_path / "Mein Kapitel \u2013 1.wav"
    sf.write(wav, np.zeros(SR, np.float32), SR)
    written = tmp_path / "Mein_Kapitel___1.durations.json"
    written.write_text(json.dumps(_record()))
    typed = tmp_path / "Mein Kapitel \u2013 1.durations.json"
    args = ["--audio", str(wav), "--alignment", str(typed), "--out", str(tmp_path / "o")]
    r = CliRunner().invoke(main, ["segment", *args])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert f"does not exist; aligner align wrote its record as {written}" in r.output, r.output


def test_nothing_to_cut_says_why_the_first_span_was_left_out(tmp_path):
    """A --min-pause longer than every pause leaves one phrase too long to keep: the error
    names --min-pause and the span's reason, not the length range alone."""
    record = _record(mismatch=False)
    wav = tmp_path / "chapter.wav"
    sf.write(wav, np.zeros(int(record["total_seconds"] * SR), np.float32), SR)
    ali = tmp_path / "chapter.durations.json"
    ali.write_text(json.dumps(record))
    args = ["--audio", str(wav), "--alignment", str(ali), "--out", str(tmp_path / "o")]
    r = CliRunner().invoke(main, ["segment", *args, "--min-pause", "100", "--max-seconds", "5"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "--min-pause (chapter 0.50-" in r.output, r.output
    assert "no pause to cut at within --max-seconds)" in r.output, r.output


def test_a_sentence_said_in_other_words_than_its_text_goes_whole_or_not_at_all():
    """Sentence 1's text is three written words for four aligned ones (``$3.50`` is said
    as several): an utterance holding all of it gets its text whole; the words of an
    utterance that would hold part of it are trimmed off it; no token string is a text."""
    from aligner.data.segment import sentence_labels

    record = _record(mismatch=False)
    for k, sentence in enumerate(record["sentences"]):
        sentence["end"] = record["words"][4 * k + 3][1]
    record["sentences"][1]["text"] = "It costs $3.50."
    labels = sentence_labels(record)
    assert labels.words[:4] == ["w0x0", "w0x1", "w0x2", "w0x3."] and labels.words[4] is None
    assert labels.text(list(range(0, 8))) == "w0x0 w0x1 w0x2 w0x3. It costs $3.50."
    assert labels.text(list(range(0, 6))) is None
    assert labels.trimmed(list(range(0, 6))) == [0, 1, 2, 3]
    assert labels.trimmed(list(range(5, 12))) == [8, 9, 10, 11]


def test_a_sentence_whose_first_word_starts_before_its_span_keeps_it():
    """The fine pass may start a sentence's first word before the span the search found
    the sentence in: by the span, the word was its neighbour's, and the text read
    ``I I could hear``; by the sentence's word indices each word is its own once."""
    from aligner.data.segment import sentence_labels

    record = _record(mismatch=False)
    for k, sentence in enumerate(record["sentences"]):
        sentence["end"] = record["words"][4 * k + 3][1]
        sentence["words"] = [4 * k, 4 * k + 4]
    record["sentences"][1]["text"] = "It costs $3.50."  # words and text differ in number
    record["sentences"][1]["start"] += 0.3  # past the middle of its first word
    labels = sentence_labels(record)
    assert labels.text(list(range(0, 8))) == "w0x0 w0x1 w0x2 w0x3. It costs $3.50."
    assert labels.text(list(range(4, 12))) == "It costs $3.50. w2x0 w2x1 w2x2 w2x3."


def test_segment_tells_a_wrong_recording_and_a_missing_alignment_and_cuts_the_rest(tmp_path):
    record = _record()
    noise = np.random.default_rng(0).normal(0, 0.1, int(record["total_seconds"] * SR))
    lines = []
    for name, seconds in (("good", record["total_seconds"]), ("short", 3.0), ("lost", None)):
        sf.write(tmp_path / f"{name}.wav", noise[: int((seconds or 1.0) * SR)], SR)
        if seconds is not None:
            (tmp_path / f"{name}.durations.json").write_text(json.dumps(record))
        lines.append(json.dumps({"id": name, "audio": f"{name}.wav"}))
    (tmp_path / "long.jsonl").write_text("\n".join([*lines, "{oops"]) + "\n")
    out = tmp_path / "corpus"
    args = ["segment", "--in", tmp_path / "long.jsonl", "--alignments", tmp_path, "--out", out]
    r = CliRunner().invoke(main, [str(a) for a in args] + ["--max-seconds", "4"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output  # the good one is cut
    assert "skipped 3 bad item(s)" in r.output, r.output
    assert "Error: " in r.output and "long.jsonl:4: not valid JSON" in r.output
    summary = json.loads((out / "summary.json").read_text())
    reasons = json.dumps(summary)
    assert "short.wav is 3.00 s long, but its alignment covers" in reasons
    assert "lost.durations.json" in reasons and "long.jsonl:4: not valid JSON" in reasons
    items = [it for s in ("train", "valid", "test") for it in read_manifest(out / f"{s}.jsonl")]
    assert items and all(it["recording"] == "good" for it in items)


@pytest.mark.parametrize("audio", ["empty", "short"])
def test_a_recording_that_cannot_be_cut_is_named_and_nothing_is_written(tmp_path, audio):
    """A 0-byte file or another recording than the one aligned: the error says so (not
    the length range), and --out is not created."""
    record = _record()
    wav = tmp_path / "chapter.wav"
    if audio == "empty":
        wav.write_bytes(b"")
    else:
        sf.write(wav, np.zeros(SR, np.float32), SR)
    ali = tmp_path / "chapter.durations.json"
    ali.write_text(json.dumps(record))
    out = tmp_path / "corpus"
    args = ["segment", "--audio", str(wav), "--alignment", str(ali), "--out", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "no recording could be cut (1 bad)" in r.output and "--min-seconds" not in r.output
    reason = "file is empty (0 bytes)" if audio == "empty" else "give the recording that was"
    assert reason in r.output
    assert not out.exists()


def test_a_full_disk_is_one_line_naming_the_utterance(tmp_path, wav_disk_full):
    """libsndfile's 'System error.' was a traceback; the utterances are now written as
    every other WAV is (atomically, a full disk named)."""
    record = _record()
    audio = tmp_path / "chapter.wav"
    sf.write(audio, np.random.default_rng(0).normal(0, 0.1, int(record["total_seconds"] * SR)), SR)
    ali = tmp_path / "chapter.durations.json"
    ali.write_text(json.dumps(record))
    out = tmp_path / "corpus"
    args = ["segment", "--audio", str(audio), "--alignment", str(ali), "--out", str(out)]
    r = CliRunner().invoke(main, [*args, "--max-seconds", "4", "--min-pause", "0.3"])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "no space left on" in r.output and "chapter_00000.wav" in r.output
    assert not [p for p in out.rglob("*") if ".tmp" in p.name]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: r.update(words=[["a", "b", 1]]), "word 1 is ['a', 'b', 1]"),
        (lambda r: r.update(words=[[0, 1]]), "not [start, end, word]"),
        (lambda r: r.update(words=r["words"][::-1]), "not in time order"),
        (
            lambda r: r.update(words=[[w[0] + 99, w[1] + 99, w[2]] for w in r["words"]]),
            "ends after",
        ),
        (lambda r: r.update(mismatches=[{"start": "x"}]), "mismatches is no list of objects"),
        (lambda r: r.update(sentences=[1, 2]), "sentences is no list of objects"),
        (lambda r: r.update(total_seconds="x"), "total_seconds is 'x'"),
    ],
)
def test_a_record_that_is_no_long_form_alignment_is_one_line(tmp_path, change, words):
    """Tampered records were a TypeError, IndexError, KeyError or AttributeError traceback,
    or (words past the recording's end) utterances cut from nothing."""
    record = _record()
    audio = tmp_path / "chapter.wav"
    sf.write(audio, np.zeros(int(record["total_seconds"] * SR), np.float32), SR)
    change(record)
    ali = tmp_path / "chapter.durations.json"
    ali.write_text(json.dumps(record))
    out = tmp_path / "corpus"
    r = CliRunner().invoke(
        main, ["segment", "--audio", str(audio), "--alignment", str(ali), "--out", str(out)]
    )
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "chapter.durations.json is no durations record" in r.output and words in r.output
    assert not out.exists()


def test_a_sentence_the_audio_lacks_leaves_the_words_beside_it_whole():
    """A sentence of the text that the audio lacks is reported over the gap between the
    words beside it: they are kept (the gap holds none of them), and no utterance crosses
    it; words left out inside a sentence (a cut may have taken part of a word beside them)
    still take the words they abut with them."""
    record = _record(mismatch=False)
    words = record["words"]
    gap = {"kind": "text not in the audio", "start": words[11][1], "end": words[12][0]}
    record["sentences"].insert(3, {"text": "Not said at all.", "start": None, "end": None})
    record["mismatches"] = [{**gap, "text": "Not said at all."}]
    rules = SegmentRules(min_seconds=0.3, max_seconds=9.0, min_pause=0.3)
    cuts, left = utterances(record, rules)
    used = {i for _, _, g in cuts for i in g}
    assert {11, 12} <= used and not any(g[0] <= 11 < g[-1] for _, _, g in cuts)
    assert any(s["reason"] == "text not in the audio: Not said at all." for s in left)
    record["mismatches"] = [{**gap, "text": "some words"}]
    cuts, _ = utterances(record, rules)
    used = {i for _, _, g in cuts for i in g}
    assert 11 not in used and 12 not in used
