"""`aligner prepare festival`: natural sentences chosen as documented, a corpus whose
reference timings match its audio, items Festival reads as other words reported and
skipped, a missing voice or program one line."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from aligner.alignment.intervals import Interval, Timings
from aligner.audio.festival import FestivalError, FestivalJob, check_voices, installed_voices
from aligner.audio.festival_text import VoiceSetting
from aligner.cli import main
from aligner.data.prepare.festival import _labelled
from aligner.data.prepare.natural_text import fortune_entries, plain_sentence, text_words

HAS_FESTIVAL = shutil.which("festival") is not None
LEXICON = {w: 1 for w in "the cat sat on a mat and it was happy isn't".split()}


@pytest.mark.parametrize(
    "sentence, kept",
    [
        ("The cat sat on a mat.", True),
        ("The cat sat on a mat, and it isn't happy.", True),
        ("The cat sat on a mat", False),  # no final stop
        ("The cat sat on 2 mats.", False),  # a digit
        ("The CAT sat on a mat.", False),  # capitals: spelled out
        ("The cat sat on a mat...", False),  # read "dot dot dot"
        ("The cat sat on a.mat and it was.", False),
        ("The cat 'sat' on a mat.", False),  # quotes, not apostrophes
        ("The cat sat on a dog.", False),  # not in the lexicon
        ("The cat sat.", False),  # too short
    ],
)
def test_plain_sentences_are_those_a_synthesizer_reads_word_for_word(sentence, kept):
    assert plain_sentence(sentence, LEXICON) is kept


def test_fortune_entries_drop_attributions_and_the_offensive_folder(tmp_path):
    (tmp_path / "off").mkdir()
    (tmp_path / "off" / "rude").write_text("Bad words here.\n%\n")
    (tmp_path / "quotes").write_text("First line\nsecond line.\n\t-- Somebody\n%\nAnother one.\n")
    (tmp_path / "quotes.dat").write_bytes(b"\x00\x01")
    assert fortune_entries(tmp_path) == ["First line second line.", "Another one."]
    with pytest.raises(FileNotFoundError, match="apt-get install fortunes"):
        fortune_entries(tmp_path / "nowhere")


def test_a_missing_program_or_voice_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FestivalError, match="apt-get install festival"):
        check_voices(["kal_diphone"])
    result = CliRunner().invoke(main, ["prepare", "festival", str(tmp_path / "c")])
    assert result.exit_code == 1 and "apt-get install festival" in result.output
    assert "Traceback" not in result.output


def test_a_voice_of_another_language_is_not_given_the_english_fortunes(monkeypatch, tmp_path):
    """Without --text the sentences are English fortunes: a Czech voice would read them
    with Czech rules. One line asking for its language's text, nothing written."""
    import aligner.data.prepare.festival as festival

    settings = {"czech_dita": VoiceSetting("czech", "ISO-8859-2"), "kal_diphone": VoiceSetting()}
    monkeypatch.setattr(festival, "check_voices", lambda voices: None)
    monkeypatch.setattr(festival, "voice_settings", lambda voices: {v: settings[v] for v in voices})
    out = tmp_path / "c"
    args = ["prepare", "festival", str(out), "--voices", "kal_diphone", "czech_dita"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "czech_dita (czech)" in result.output and "--text FILE" in result.output
    assert "kal_diphone" not in result.output.split("built-in")[0]
    assert not (out / "wavs").exists()


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_an_unknown_voice_is_named():
    with pytest.raises(FestivalError, match="'no_such_voice' is not installed"):
        check_voices(["no_such_voice"])


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_a_corpus_from_a_text_file_with_a_bad_sentence_reported(tmp_path):
    import soundfile

    text = tmp_path / "s.txt"
    text.write_text(
        "The quick brown fox jumps over the lazy dog.\n\nWe met at 10 Downing St. today.\n"
        "Smith's cat isn't here, so we left.\nA bird in the hand is worth two in the bush.\n"
    )
    out = tmp_path / "corpus"
    args = ["prepare", "festival", str(out), "--text", str(text), "--voices", "kal_diphone"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped 1 bad item" in result.output and "Downing" in result.output
    items = [
        json.loads(ln)
        for s in ("train", "valid", "test")
        for ln in (out / f"{s}.jsonl").read_text().splitlines()
    ]
    assert len(items) == 3 and {it["speaker"] for it in items} == {"kal_diphone"}
    assert not (out / "wavs" / "festival_000001.wav").exists()  # the skipped one's audio
    smith = next(it for it in items if it["text"].startswith("Smith"))
    words = [w[2] for w in smith["timings"]["words"]]
    assert words == ["Smith's", "cat", "isn't", "here", "so", "we", "left"]
    for item in items:
        duration = soundfile.info(str(out / item["audio"])).duration
        assert abs(item["timings"]["duration"] - duration) < 1e-3
        assert all(0 <= s < e <= duration + 1e-6 for s, e, _ in item["timings"]["phones"])
        assert (out / "textgrids" / f"{item['id']}.TextGrid").is_file()
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1 and "--force" in again.output


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_a_parallel_corpus_has_both_voices_timed_and_skips_a_sentence_whole(tmp_path):
    import soundfile

    text = tmp_path / "s.txt"
    text.write_text(
        "The quick brown fox jumps over the lazy dog.\nWe met at 10 Downing St. today.\n"
        "A bird in the hand is worth two in the bush.\nSmith's cat isn't here, so we left.\n"
    )
    out = tmp_path / "vc"
    args = [
        "prepare",
        "festival",
        str(out),
        "--text",
        str(text),
        "--parallel",
        "kal_diphone",
        "ked_diphone",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped 1 bad item" in result.output and "Downing" in result.output
    items = [
        json.loads(ln)
        for s in ("train", "valid", "test")
        for ln in (out / f"{s}.jsonl").read_text().splitlines()
    ]
    assert len(items) == 3
    assert {(it["speaker"], it["target_speaker"]) for it in items} == {
        ("kal_diphone", "ked_diphone")
    }
    assert not list((out / "wavs").glob("festival_000001*"))  # neither voice's audio is left
    for item in items:
        for side, grid in (("", item["id"]), ("target_", f"{item['id']}_target")):
            timings = item[f"{side}timings"]
            duration = soundfile.info(str(out / item[f"{side}audio"])).duration
            assert abs(timings["duration"] - duration) < 1e-3
            assert abs(item[f"{side}duration"] - duration) < 1e-3
            assert (out / "textgrids" / f"{grid}.TextGrid").is_file()
        said = [[w[2] for w in item[k]["words"]] for k in ("timings", "target_timings")]
        assert said[0] == said[1]  # one text, two voices: other times
        assert item["timings"]["phones"] != item["target_timings"]["phones"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["voices"] == {"kal_diphone": 3, "ked_diphone": 3}
    both = CliRunner().invoke(main, [*args, "--voices", "kal_diphone", "--force"])
    assert both.exit_code == 2 and "either --voices or --parallel" in both.output
    same = CliRunner().invoke(main, [*args[:-2], "kal_diphone", "kal_diphone", "--force"])
    assert same.exit_code == 1 and "two voices (source, target)" in same.output


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_a_sentence_festival_crashes_on_costs_only_itself(tmp_path):
    text = tmp_path / "s.txt"
    text.write_text("Hello there my friend.\n!!! ...\nNaïve café owners smile.\n", encoding="utf-8")
    out = tmp_path / "c"
    args = ["prepare", "festival", str(out), "--text", str(text), "--voices", "kal_diphone"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped 1 bad item" in result.output and "festival_000001" in result.output
    lines = (out / "train.jsonl").read_text(encoding="utf-8").splitlines()
    words = sorted(w[2] for ln in lines for w in json.loads(ln)["timings"]["words"])
    assert "Naïve" in words and "café" in words and "Hello" in words  # spoken as naive, cafe
    assert "Traceback" not in result.output


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_festival_names_each_voice_language():
    from aligner.audio.festival import voice_languages

    assert voice_languages(["kal_diphone"]) == {"kal_diphone": "english"}


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_text_without_words_utf16_and_stale_items_of_a_forced_run(tmp_path):
    """Lines with nothing to speak are reported before Festival; a corpus none of whose lines
    can be spoken says why; a UTF-16 file is named; --force with fewer sentences leaves no
    item of the run before; a corpus too small to split says so."""
    runner, out = CliRunner(), tmp_path / "c"
    text = tmp_path / "s.txt"
    text.write_text("...\nПривет мир.\n", encoding="utf-8")
    args = ["prepare", "festival", str(out), "--text", str(text), "--voices", "kal_diphone"]
    result = runner.invoke(main, args)
    assert result.exit_code == 1 and "none of the 2 sentences" in result.output, result.output
    assert "no words to speak" in result.output and "crashed" not in result.output
    utf16 = tmp_path / "u.txt"
    utf16.write_text("Hello there my friend.\n", encoding="utf-16")
    bad = runner.invoke(main, ["prepare", "festival", str(tmp_path / "u"), "--text", str(utf16)])
    assert bad.exit_code == 1 and "UTF-16" in bad.output, bad.output
    text.write_text("Hello there my friend.\nThe cat sat on the mat.\nWe left at dawn.\n")
    assert runner.invoke(main, [*args, "--force"]).exit_code == 0
    assert len(list((out / "wavs").glob("*.wav"))) == 3
    text.write_text("Hello there my friend.\n")
    small = runner.invoke(main, [*args, "--force"])
    assert small.exit_code == 0 and "valid and test need 3 or more" in small.output
    assert [p.name for p in (out / "wavs").glob("*.wav")] == ["festival_000000.wav"]
    assert [p.name for p in (out / "textgrids").glob("*")] == ["festival_000000.TextGrid"]
    text.write_text("!!!\n")  # a forced run that fails leaves no manifest of the old audio
    assert runner.invoke(main, [*args, "--force"]).exit_code == 1
    assert not (out / "train.jsonl").exists() and not list((out / "wavs").glob("*.wav"))


def test_a_parallel_sentence_the_target_voice_fails_on_is_left_out_whole(tmp_path, monkeypatch):
    """The source voice spoke, the target's Festival failed: neither wav is kept, and the
    report names the target's file and its voice."""
    import numpy as np
    import soundfile

    from aligner.alignment.intervals import Interval, Timings
    from aligner.audio.festival import FestivalJob
    from aligner.data.prepare import festival
    from aligner.data.report import BadItemReport

    said = Timings([Interval(0.0, 0.5, "Hello")], [Interval(0.0, 0.5, "hh")], 0.5)
    monkeypatch.setattr(festival, "festival_timings", lambda result, duration: said)
    jobs = [
        FestivalJob("Hello.", voice, str(tmp_path / f"festival_000000{suffix}.wav"), "english")
        for voice, suffix in (("kal_diphone", ""), ("ked_diphone", "_target"))
    ]
    for job in jobs:
        soundfile.write(job.path, np.zeros(8000, np.float32), 16000)
    bad = BadItemReport()
    item = festival._item(jobs, [object(), FestivalError("ked_diphone crashed")], tmp_path, bad)
    assert item is None and not list(tmp_path.glob("*.wav"))
    assert len(bad) == 1 and "festival_000000_target (ked_diphone" in str(bad.items[0])


HAS_CZECH = HAS_FESTIVAL and "czech_dita" in installed_voices()


@pytest.mark.skipif(not HAS_CZECH, reason="Festival's Czech voice (festvox-czech-dita) is missing")
def test_czech_text_is_spoken_as_written_and_a_foreign_letter_is_one_bad_item(tmp_path):
    """czech_dita is given ISO-8859-2: the words it said are the text's (``poměr``, not
    ``pomer``); a sentence with a letter ISO-8859-2 lacks is reported with that letter; one
    whose number Festival reads as a word is reported by the word check."""
    text = tmp_path / "czech.txt"
    text.write_text(
        "Poměr sil se změnil počtem hlasů.\nTo je ten nejužitečnější nástroj.\n"
        "Žluťoučký kůň úpěl ďábelské ódy.\nŘekl mi to Søren.\nMám 12 koní.\n"
        "Je to ± deset.\n",
        encoding="utf-8",
    )
    out = tmp_path / "c"
    args = ["prepare", "festival", str(out), "--text", str(text), "--voices", "czech_dita"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "skipped 3 bad item(s): 2 characters the voice cannot read, 1 Festival read" in (
        result.output
    ), result.output
    assert "'ø' (U+00F8)" in result.output and "ISO-8859-2" in result.output
    assert "'±' (U+00B1)" in result.output  # a sign is named, not spoken as a space
    assert "dvanáct" in result.output  # what Festival said for 12
    items = [
        json.loads(ln)
        for s in ("train", "valid", "test")
        for ln in (out / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    words = {w[2] for it in items for w in it["timings"]["words"]}
    assert {"Poměr", "počtem", "nejužitečnější", "Žluťoučký", "kůň", "úpěl"} <= words
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert "czech" in json.dumps(summary)


def test_words_festival_splits_at_an_apostrophe_are_the_texts_word():
    """Catalan's Festival says ``L'àvia`` as ``L'`` and ``àvia``: one word of the text,
    spanning both; a word it drops is still reported."""
    job = FestivalJob("L’àvia va a l'hort.", "upc_ca_ona_hts", "x.wav", "catalan", "ISO-8859-15")
    said = [("L'", 0.1, 0.2), ("àvia", 0.2, 0.5), ("va", 0.5, 0.6), ("a", 0.6, 0.7)]
    said += [("l", 0.7, 0.75), ("hort", 0.75, 1.0)]
    timings = Timings([Interval(a, b, w) for w, a, b in said], [], 1.2)
    words = _labelled(timings, job).words
    assert words == [
        Interval(0.1, 0.5, "L’àvia"),
        Interval(0.5, 0.6, "va"),
        Interval(0.6, 0.7, "a"),
        Interval(0.7, 1.0, "l'hort"),
    ]
    dropped = Timings([Interval(a, b, w) for w, a, b in said[:-1]], [], 1.2)
    with pytest.raises(ValueError, match="other words"):
        _labelled(dropped, job)


def test_words_of_scripts_written_with_marks_are_whole():
    assert text_words("मुझे हिंदी पढ़ना पसंद है।") == ["मुझे", "हिंदी", "पढ़ना", "पसंद", "है"]
    assert text_words("నమస్కారం, Съешь же ещё 12 l’hort") == [
        "నమస్కారం", "Съешь", "же", "ещё", "l’hort"
    ]  # fmt: skip


OTHER_VOICES = {  # Debian's voices of other scripts and encodings, where installed
    "hindi_NSK_diphone": ("भारत एक विशाल देश है।\nआज मौसम बहुत अच्छा है।\n", "भारत", "hi"),
    "upc_ca_ona_hts": ("L'àvia cuina a la plaça.\nM'agrada la música.\n", "L'àvia", "ca"),
    "msu_ru_nsh_clunits": ("Съешь же ещё этих мягких булок.\nМороз и солнце.\n", "этих", "ru"),
}


@pytest.mark.parametrize("voice", sorted(OTHER_VOICES))
def test_a_voice_of_another_script_speaks_its_text_word_for_word(tmp_path, voice):
    if not HAS_FESTIVAL or voice not in installed_voices():
        pytest.skip(f"Festival's {voice} is not installed")
    text, word, code = OTHER_VOICES[voice]
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "c"
    args = ["prepare", "festival", str(out), "--text", str(tmp_path / "t.txt"), "--voices", voice]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "bad item" not in result.output and f"language={code}" in result.output
    items = [
        json.loads(ln)
        for s in ("train", "valid", "test")
        for ln in (out / f"{s}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(items) == 2
    for item in items:
        spoken = [w[2] for w in item["timings"]["words"]]
        assert spoken == text_words(item["text"]) and item["timings"]["phones"]
    assert word in {w[2] for it in items for w in it["timings"]["words"]}
