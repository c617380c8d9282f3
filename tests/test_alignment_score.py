"""aligner score-alignment: boundary errors against reference timings, for TextGrids of
any tool (other tier order, extra tiers) and aligner's durations JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from praatio import textgrid

from aligner.alignment.intervals import Interval, Timings
from aligner.cli import main

WORDS = [(0.10, 0.40, "hello"), (0.45, 0.90, "big"), (0.90, 1.30, "world")]
PHONES = [(0.10, 0.20, "h"), (0.20, 0.40, "o"), (0.45, 0.90, "b"), (0.90, 1.30, "w")]


def reference(tmp: Path, ids=("a", "b", "c", "d")) -> Path:
    t = Timings([Interval(*w) for w in WORDS], [Interval(*p) for p in PHONES], 1.5)
    items = [
        {"id": i, "audio": f"{i}.wav", "text": "hello big world", "timings": t.to_dict()}
        for i in ids
    ]
    path = tmp / "valid.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    return path


def grid(path: Path, tiers: dict[str, list[tuple[float, float, str]]], end: float = 1.5) -> None:
    """A TextGrid as another tool writes it: tiers in the given order and spelling."""
    tg = textgrid.Textgrid(0.0, end)
    for name, entries in tiers.items():
        tg.addTier(textgrid.IntervalTier(name, entries, 0.0, end))
    tg.save(str(path), format="short_textgrid", includeBlankSpaces=True)


def shift(entries, by: float):
    return [(s + by, e + by, label) for s, e, label in entries]


def score(*args: str):
    return CliRunner().invoke(main, ["score-alignment", *map(str, args)])


def test_a_tier_shifted_by_30_ms_scores_30_ms(tmp_path):
    ref = reference(tmp_path, ids=("a",))
    pred = tmp_path / "pred"
    pred.mkdir()
    grid(pred / "a.TextGrid", {"words": shift(WORDS, 0.03), "phones": PHONES})
    out = tmp_path / "summary.json"
    result = score("--reference", ref, "--predicted", pred, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    words, phones = report["words"], report["phones"]
    assert words["boundaries"] == 6 and words["mean_ms"] == pytest.approx(30.0, abs=1e-6)
    assert words["bias_ms"] == pytest.approx(30.0, abs=1e-6) and words["within_20ms"] == 0.0
    assert words["within_50ms"] == 100.0 and phones["mean_ms"] == 0.0
    assert "words" in result.output and "30.0" in result.output
    again = score("--reference", ref, "--predicted", pred, "--out", out)
    assert again.exit_code == 1 and "--force" in again.output


def test_another_tools_textgrid_and_unmatched_items(tmp_path):
    """Tier order, case and extra tiers do not matter; silences are left out; an item with
    another word count, one without a phones tier and a missing one are each named."""
    ref = reference(tmp_path)
    pred = tmp_path / "mfa"
    pred.mkdir()
    with_sil = [(0.0, 0.05, "sil"), *shift(WORDS, -0.01), (1.3, 1.5, "sp")]
    grid(
        pred / "a.TextGrid",
        {"Phones": shift(PHONES, 0.02), "extra": [(0, 1.5, "x")], "WORDS": with_sil},
    )
    grid(pred / "b.TextGrid", {"words": WORDS[:2], "phones": PHONES})
    grid(pred / "c.TextGrid", {"words": WORDS})
    result = score("--reference", ref, "--predicted", pred, "--out", tmp_path / "s.json")
    assert result.exit_code == 0, result.output
    assert "unmatched words: b: 2 words predicted, 3 in the reference" in result.output
    report = json.loads((tmp_path / "s.json").read_text())
    words, phones = report["words"], report["phones"]
    assert words["items"] == 2 and words["mean_ms"] == pytest.approx(5.0, abs=1e-6)
    assert phones["items"] == 2 and phones["mean_ms"] == pytest.approx(10.0, abs=1e-6)
    assert {u["id"]: u["reason"] for u in words["unmatched"]} == {
        "b": "2 words predicted, 3 in the reference",
        "d": "no prediction",
    }
    assert {u["id"]: u["reason"] for u in phones["unmatched"]} == {
        "c": "no 'phones' tier (its tiers: 'words')",
        "d": "no prediction",
    }
    assert report["words"]["worst"][0]["id"] in ("a", "c")


def test_reference_textgrid_folder_and_durations_json(tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    grid(refs / "u.TextGrid", {"words": WORDS, "phones": PHONES})
    pred = tmp_path / "ali"
    pred.mkdir()
    record = {"words": [list(w) for w in shift(WORDS, 0.01)], "phones": [list(p) for p in PHONES]}
    (pred / "u.durations.json").write_text(json.dumps(record))
    result = score("--reference", refs, "--predicted", pred)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].split()[:4] == ["words", "1", "6", "10.0"]


def test_bad_inputs_are_one_line(tmp_path):
    ref = reference(tmp_path)
    no_timings = tmp_path / "plain.jsonl"
    no_timings.write_text(json.dumps({"id": "a", "audio": "a.wav", "text": "x"}) + "\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "a.TextGrid").write_text("garbage")
    for args, words in [
        (["--reference", no_timings, "--predicted", tmp_path], "no item with 'timings'"),
        (["--reference", tmp_path / "nope.jsonl", "--predicted", tmp_path], "does not exist"),
        (["--reference", tmp_path / "empty", "--predicted", tmp_path], "no .TextGrid"),
        (["--reference", ref, "--predicted", tmp_path / "broken"], "not a readable TextGrid"),
    ]:
        result = score(*args)
        assert result.exit_code == 1 and words in result.output, result.output
        assert "Traceback" not in result.output


def test_by_speaker_scores_each_speaker_of_the_reference_on_its_own(tmp_path):
    ref = reference(tmp_path, ids=("a", "b", "c"))
    items = [json.loads(line) for line in ref.read_text().splitlines()]
    for item, spk in zip(items, ("kal", "slt", "kal")):
        item["speaker"] = spk
    ref.write_text("".join(json.dumps(it) + "\n" for it in items))
    pred = tmp_path / "pred"
    pred.mkdir()
    grid(pred / "a.TextGrid", {"words": shift(WORDS, 0.01), "phones": PHONES})
    grid(pred / "b.TextGrid", {"words": shift(WORDS, 0.04), "phones": PHONES})
    grid(pred / "c.TextGrid", {"words": shift(WORDS, 0.03), "phones": PHONES})
    out = tmp_path / "s.json"
    result = score("--reference", ref, "--predicted", pred, "--out", out, "--by-speaker")
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["words"]["mean_ms"] == pytest.approx(80 / 3, abs=0.01)
    assert report["speakers"]["kal"]["words"]["mean_ms"] == pytest.approx(20.0, abs=1e-6)
    assert report["speakers"]["slt"]["words"]["mean_ms"] == pytest.approx(40.0, abs=1e-6)
    assert report["speakers"]["kal"]["words"]["items"] == 2
    assert "speaker kal" in result.output and "speaker slt" in result.output


def test_montreal_forced_aligner_layouts(tmp_path):
    """A folder per speaker, tiers named ``speaker - words``/``speaker - phones`` or
    ``Word``/``phone``, a lower-case suffix: all found and paired; a reference folder of
    such TextGrids likewise."""
    ref = reference(tmp_path, ids=("a", "b", "c"))
    pred = tmp_path / "mfa"
    (pred / "spk1").mkdir(parents=True)
    (pred / "spk2").mkdir()
    grid(
        pred / "spk1" / "a.TextGrid",
        {"spk1 - words": shift(WORDS, 0.01), "spk1 - phones": PHONES},
    )
    grid(pred / "spk2" / "b.TextGrid", {"Word": shift(WORDS, 0.01), "phone": PHONES})
    grid(pred / "spk2" / "c.textgrid", {"words": shift(WORDS, 0.01), "Phonemes": PHONES})
    out = tmp_path / "s.json"
    result = score("--reference", ref, "--predicted", pred, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["words"]["items"] == 3 and report["phones"]["items"] == 3
    assert report["words"]["mean_ms"] == pytest.approx(10.0, abs=1e-6)
    assert not report["words"]["unmatched"] and not report["phones"]["unmatched"]
    refs = tmp_path / "refs"
    (refs / "spk").mkdir(parents=True)
    grid(refs / "spk" / "a.TextGrid", {"word": WORDS, "phone": PHONES})
    again = score("--reference", refs, "--predicted", pred)
    assert again.exit_code == 0 and again.output.splitlines()[2].split()[:4] == [
        "words",
        "1",
        "6",
        "10.0",
    ], again.output


def test_nothing_to_pair_is_an_error(tmp_path):
    """An empty --predicted folder, two files of one item, and a folder whose files pair
    with no item: one line each and exit status 1."""
    ref = reference(tmp_path, ids=("a",))
    empty = tmp_path / "empty"
    empty.mkdir()
    twice = tmp_path / "twice"
    (twice / "x").mkdir(parents=True)
    (twice / "y").mkdir()
    grid(twice / "y" / "a.TextGrid", {"words": WORDS})
    grid(twice / "x" / "a.TextGrid", {"words": WORDS})
    other = tmp_path / "other"
    other.mkdir()
    grid(other / "zzz.TextGrid", {"words": WORDS, "phones": PHONES})
    for folder, words in [
        (empty, "holds no .TextGrid"),
        (twice, "are both item 'a'"),
        (other, "could be paired"),
    ]:
        result = score("--reference", ref, "--predicted", folder)
        assert result.exit_code == 1 and words in result.output, result.output
        assert "Traceback" not in result.output


def test_speakers_tiers_of_one_file_merge_and_the_top_folder_comes_first(tmp_path):
    """MFA's conversation layout (``A - words``, ``B - words`` in one file) merges in time;
    predictions in a subfolder of a reference folder of TextGrids are not references."""
    ref = reference(tmp_path, ids=("a",))
    pred = tmp_path / "pred"
    pred.mkdir()
    grid(
        pred / "a.TextGrid",
        {
            "A - words": [WORDS[0], WORDS[2]],
            "B - words": [WORDS[1]],
            "A - phones": PHONES[:2],
            "B - phones": PHONES[2:],
        },
    )
    result = score("--reference", ref, "--predicted", pred)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].split()[:4] == ["words", "1", "6", "0.0"]
    refs = tmp_path / "refs"
    (refs / "aligned").mkdir(parents=True)
    grid(refs / "a.TextGrid", {"words": WORDS, "phones": PHONES})
    grid(refs / "aligned" / "a.TextGrid", {"words": shift(WORDS, 0.02), "phones": PHONES})
    nested = score("--reference", refs, "--predicted", refs / "aligned")
    assert nested.exit_code == 0 and nested.output.splitlines()[2].split()[3] == "20.0"


def test_an_unreadable_predicted_file_is_one_unmatched_item_not_the_end(tmp_path):
    ref = reference(tmp_path, ids=("a", "b"))
    pred = tmp_path / "pred"
    pred.mkdir()
    grid(pred / "a.TextGrid", {"words": WORDS, "phones": PHONES})
    (pred / "b.TextGrid").write_text('File type = "ooTextFile"\nObject class = "TextGrid"\n\n0\n')
    result = score("--reference", ref, "--predicted", pred, "--out", tmp_path / "s.json")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["words"]["items"] == 1
    (bad,) = report["words"]["unmatched"]
    assert bad["id"] == "b" and "b.TextGrid is not a readable TextGrid" in bad["reason"]


def test_webmaus_tiers_are_words_and_phones(tmp_path):
    """WebMAUS (BAS) writes ORT-MAU (words), KAN-MAU and MAU (segments)."""
    ref = reference(tmp_path, ids=("a",))
    pred = tmp_path / "maus"
    pred.mkdir()
    kan = [(s, e, "x") for s, e, _ in WORDS]
    grid(pred / "a.TextGrid", {"ORT-MAU": WORDS, "KAN-MAU": kan, "MAU": PHONES})
    result = score("--reference", ref, "--predicted", pred, "--out", tmp_path / "s.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["words"]["items"] == 1 and report["phones"]["items"] == 1
    assert report["words"]["mean_ms"] == 0.0


def test_words_of_another_text_are_scored_and_named(tmp_path):
    """Paired by count alone, a TextGrid of other words scored as if right; now the item
    is still scored but named, with its first differing word (case and punctuation
    aside: ``Hello,`` is ``hello``)."""
    ref = reference(tmp_path, ids=("a", "b"))
    pred = tmp_path / "pred"
    pred.mkdir()
    same = [(0.10, 0.40, "Hello,"), *WORDS[1:]]
    grid(pred / "a.TextGrid", {"words": same, "phones": PHONES})
    other = [(s, e, "banana") for s, e, _ in WORDS]
    grid(pred / "b.TextGrid", {"words": other, "phones": PHONES})
    out = tmp_path / "report.json"
    result = score("--reference", ref, "--predicted", pred, "--out", out)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["words"]["items"] == 2 and report["words"]["mean_ms"] == 0.0
    assert report["words"]["relabelled"] == [
        {"id": "b", "words": "3", "first": "'banana' for 'hello'"}
    ]
    assert "note: 1 item(s) scored with words that differ" in result.output
    assert "relabelled" not in report["phones"]


def test_by_speaker_needs_a_manifest_reference(tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    grid(refs / "a.TextGrid", {"words": WORDS, "phones": PHONES})
    result = score("--reference", refs, "--predicted", refs, "--by-speaker")
    assert result.exit_code == 1 and "--by-speaker needs a manifest" in result.output
    assert "Traceback" not in result.output


def test_a_bad_reference_line_is_named_and_the_rest_scored(tmp_path):
    ref = reference(tmp_path, ids=("a",))
    ref.write_text(ref.read_text() + "{oops\n")
    pred = tmp_path / "pred"
    pred.mkdir()
    grid(pred / "a.TextGrid", {"words": WORDS, "phones": PHONES})
    result = score("--reference", ref, "--predicted", pred)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "skipped reference line" in result.output and "valid.jsonl:2" in result.output
    assert "words       1       6     0.0" in result.output
