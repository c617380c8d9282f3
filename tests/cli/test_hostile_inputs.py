"""What careless or hostile input does to `synthesize`, `convert` and `align`: one line
(no traceback) for bad option values, bad encodings, wrong output kinds and a full disk;
outputs confined to --out; batches that finish the good items; long recordings in pieces."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.audio.trim import split_at_silences
from aligner.inference import conversion
from aligner.inference.synthesis import Decoding

from .test_speech_cli import SR, assert_clean_failure, invoke, make_checkpoint, write_wav


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("hostile")
    return {"tts": make_checkpoint(tmp, "tts"), "vc": make_checkpoint(tmp, "vc"), "root": tmp}


def assert_usage_error(result, *words: str) -> None:
    """Click's refusal of an option value: exit 2, an 'Error:' line naming it."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error = [ln for ln in result.output.splitlines() if "Error" in ln]
    assert len(error) == 1 and all(w in error[0] for w in words), result.output


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--batch-size", "0"),
        ("--batch-size", "-3"),
        ("--griffin-lim-iters", "0"),
        ("--pause", "-1"),
        ("--pause", "1e9"),
        ("--window", "99999999999,3"),
        ("--window", "1"),
        ("--window", "0,0"),  # never past its first token: every output cut at the limit
        ("--device", "foo"),
        ("--device", "cuda:99"),
        ("--max-length-ratio", "0"),
        ("--max-length-ratio", "nan"),  # every comparison with NaN is false
        ("--pause", "NaN"),
        ("--seed", "99999999999999999999"),  # was torch's 'Overflow' traceback
        ("--seed", "-1"),
    ],
)
def test_synthesize_refuses_bad_option_values_before_any_work(ckpts, tmp_path, option, value):
    out = tmp_path / "o.wav"
    r = invoke(
        "synthesize", "--checkpoint", ckpts["tts"], "--text", "hi.", "--out", out, option, value
    )
    assert_usage_error(r, option)
    assert not out.exists()


def test_device_without_a_gpu_is_one_line(ckpts, tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        tmp_path,
        "--out",
        tmp_path / "o",
        "--device",
        "cuda",
    )
    assert_usage_error(r, "--device", "no CUDA GPU")
    r = invoke(
        "align",
        "--checkpoint",
        ckpts["tts"],
        "--in",
        tmp_path / "m.jsonl",
        "--out",
        tmp_path / "a",
        "--batch-size",
        "0",
    )
    assert_usage_error(r, "--batch-size")


def test_text_files_that_are_not_utf8(ckpts, tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("first line\nna\xefve caf\xe9\n".encode("latin-1"))
    r = invoke(
        "synthesize", "--checkpoint", ckpts["tts"], "--in", latin, "--out", tmp_path / "o.wav"
    )
    assert_clean_failure(r, "latin.txt", "line 2", "UTF-8")
    binary = tmp_path / "blob.txt"
    binary.write_bytes(bytes(range(256)))
    r = invoke(
        "synthesize", "--checkpoint", ckpts["tts"], "--in", binary, "--out", tmp_path / "o.wav"
    )
    assert_clean_failure(r, "blob.txt", "binary")


def test_align_reports_every_bad_line_and_aligns_the_good_items(ckpts, tmp_path):
    """A duplicated id, a line that is no JSON and one that is no object: each named with
    its line, counted, and the good items aligned (exit 1: not every item was)."""
    good = (ckpts["root"] / "data_tts" / "train.jsonl").read_text().splitlines()[:2]
    good = [json.loads(g) for g in good]
    for item in good:
        item["audio"] = str(ckpts["root"] / "data_tts" / item["audio"])
    lines = [json.dumps(good[0]), json.dumps(good[0]), "{not json", "[1, 2]", json.dumps(good[1])]
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    out = tmp_path / "al"
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", manifest, "--out", out, "--no-png")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    for n, words in ((2, "duplicate id"), (3, "not valid JSON"), (4, "JSON object")):
        assert f"m.jsonl:{n}: " in r.output and words in r.output
    assert "3 item(s) not aligned" in r.output
    assert all((out / f"{item['id']}.durations.json").is_file() for item in good)


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b'{"id": "a", "audio": "x.wav", "text": "caf\xe9"}', ["m.jsonl:1", "UTF-8"]),
        (b'{"id": "a", "audio": "x.wav", "text": 42}', ["m.jsonl:1", "'text'", "int"]),
        (b'{"id": "a", "audio": "x.wav", "text": ["a", "b"]}', ["m.jsonl:1", "'text'", "list"]),
    ],
)
def test_align_manifests_with_bad_text(ckpts, tmp_path, line, words):
    manifest = tmp_path / "m.jsonl"
    manifest.write_bytes(line + b"\n")
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", manifest, "--out", tmp_path / "al")
    assert_clean_failure(r, *words)
    r = invoke(
        "align",
        "--checkpoint",
        ckpts["tts"],
        "--in",
        tmp_path / "none.jsonl",
        "--out",
        tmp_path / "al",
    )
    assert_clean_failure(r, "none.jsonl", "does not exist")


def test_convert_checks_the_kind_of_out_before_working(ckpts, tmp_path):
    data = ckpts["root"] / "data_vc"
    folder = tmp_path / "dir"
    folder.mkdir()
    r = invoke(
        "convert", "--checkpoint", ckpts["vc"], "--in", data / "u0.wav", "--out", folder, "--force"
    )
    assert_clean_failure(r, "dir", "folder", "file name")
    afile = tmp_path / "f.wav"
    afile.write_bytes(b"keep")
    for extra in ([], ["--force"]):
        r = invoke(
            "convert",
            "--checkpoint",
            ckpts["vc"],
            "--in",
            data / "test.jsonl",
            "--out",
            afile,
            *extra,
        )
        assert_clean_failure(r, "f.wav", "is a file")
    assert afile.read_bytes() == b"keep"


def test_convert_ids_stay_inside_out(ckpts, tmp_path):
    data = ckpts["root"] / "data_vc"
    items = [
        {"id": "../../escape", "audio": str(data / "u0.wav")},
        {"id": str(tmp_path / "abs"), "audio": str(data / "u1.wav")},
    ]
    manifest = tmp_path / "in" / "list.jsonl"
    manifest.parent.mkdir()
    manifest.write_text("".join(json.dumps(i) + "\n" for i in items))
    out = tmp_path / "deep" / "er" / "out"
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        manifest,
        "--out",
        out,
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "0.5",
    )
    assert r.exit_code == 0, r.output
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.wav"))
    assert all(str(p).startswith("deep/er/out/") for p in written), written
    assert len(written) == 2 and not (tmp_path / "abs.wav").exists()


def test_colliding_names_are_refused(ckpts, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    write_wav(folder / "a.wav", 0.3, 1)
    write_wav(folder / "a.flac", 0.3, 2)
    r = invoke("convert", "--checkpoint", ckpts["vc"], "--in", folder, "--out", tmp_path / "o")
    assert_clean_failure(r, "'a'", "distinct ids")
    assert not (tmp_path / "o").exists()
    wav = ckpts["root"] / "data_tts" / "u0.wav"
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "".join(
            json.dumps({"id": i, "audio": str(wav), "text": "hi"}) + "\n" for i in ("a/b", "a_b")
        )
    )
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", manifest, "--out", tmp_path / "al")
    assert_clean_failure(r, "'a/b'", "'a_b'")


def test_convert_folder_finishes_the_good_files_and_names_the_bad(ckpts, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(3):
        write_wav(folder / f"good{i}.wav", 0.3, i)
    (folder / "empty.wav").write_bytes(b"")
    (folder / "junk.wav").write_bytes(b"RIFF....WAVEjunk")
    out = tmp_path / "out"
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        folder,
        "--out",
        out,
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "0.5",
    )
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert sorted(p.name for p in out.glob("*.wav")) == ["good0.wav", "good1.wav", "good2.wav"]
    errors = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert any("empty" in e for e in errors) and any("junk" in e for e in errors)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["converted"] == 3 and summary["bad"] == 2


def full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_full_disk_is_one_line_and_leaves_no_temporary(ckpts, tmp_path, wav_disk_full):
    out = tmp_path / "o.wav"
    r = invoke(
        "synthesize",
        "--checkpoint",
        ckpts["tts"],
        "--text",
        "hi.",
        "--out",
        out,
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "1",
    )
    assert_clean_failure(r, "no space left on", "o.wav")
    assert list(tmp_path.iterdir()) == []
    data = ckpts["root"] / "data_vc"
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        data / "test.jsonl",
        "--out",
        tmp_path / "c",
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "0.5",
    )
    assert_clean_failure(r, "no space left on", "u0.wav")


def test_align_on_a_full_disk(ckpts, tmp_path, monkeypatch):
    monkeypatch.setattr("aligner.inference.alignment_files.np.save", full_disk)
    data = ckpts["root"] / "data_tts"
    r = invoke(
        "align",
        "--checkpoint",
        ckpts["tts"],
        "--in",
        data / "test.jsonl",
        "--out",
        tmp_path / "al",
        "--no-png",
    )
    assert_clean_failure(r, "no space left on", "u0.npy")
    assert not [p for p in (tmp_path / "al").rglob("*") if ".tmp" in p.name]


# ------------------------------------------------------------------ long recordings
@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.05, 4.0), st.floats(0.0, 1.0)), min_size=1, max_size=12),
    st.floats(0.5, 5.0),
)
def test_pieces_cover_the_recording_and_respect_the_limit(parts, max_seconds):
    sr = 1000
    rng = np.random.default_rng(0)
    wav = np.concatenate(
        [
            np.concatenate([0.5 * rng.standard_normal(int(s * sr)), np.zeros(int(g * sr))])
            for s, g in parts
        ]
    ).astype(np.float32)
    if len(wav) == 0:
        return
    pieces = split_at_silences(torch.from_numpy(wav), sr, max_seconds)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(wav)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert all(0 < e - s <= max(1, int(max_seconds * sr)) for s, e in pieces)


def test_a_long_recording_is_converted_in_bounded_pieces(ckpts, tmp_path, monkeypatch):
    """Speech bursts with pauses, 30 s: decoded in pieces of at most 4 s, joined in order."""
    sr, rng = SR, np.random.default_rng(1)
    bursts = [
        np.concatenate(
            [
                0.3 * np.sin(np.arange(int(sr * rng.uniform(0.4, 1.5))) * 0.2),
                np.zeros(int(sr * 0.3)),
            ]
        )
        for _ in range(25)
    ]
    wav = np.concatenate(bursts)[: 30 * sr].astype(np.float32)
    src = tmp_path / "long.wav"
    sf.write(src, wav, sr)
    seen: list[int] = []
    from aligner.inference.tacotron import VCModel

    real = VCModel.generate

    def spy(self, sources, *args, **kwargs):
        seen.extend(len(s) for s in sources)
        return real(self, sources, *args, **kwargs)

    monkeypatch.setattr(VCModel, "generate", spy)
    run = conversion.convert(
        ckpts["vc"],
        src,
        tmp_path / "o.wav",
        decoding=Decoding(4, 0.3, None, 1, 0),
        max_piece_seconds=4.0,
    )
    assert len(seen) >= 8 and max(seen) <= 4 * sr // 64 + 2
    assert sum(seen) == pytest.approx(len(wav) / 64, abs=2 * len(seen))
    assert run.outputs == [tmp_path / "o.wav"] and sf.info(tmp_path / "o.wav").frames > 0


@pytest.mark.parametrize(
    "options",
    [{"pace": float("nan")}, {"pace": -1.0}, {"max_length_ratio": float("nan")}, {"batch_size": 0}],
)
def test_the_api_refuses_decoding_options_out_of_range(options):
    """`Decoding` names the option (NaN included) before any model runs."""
    from aligner.inference.common import InferenceError
    from aligner.inference.synthesis import Decoding

    with pytest.raises(InferenceError, match=next(iter(options))):
        Decoding(**options)


def test_synthesize_names_every_sentence_it_cannot_say(ckpts, tmp_path):
    """Two sentences with symbols the model lacks: both named in one line, nothing written."""
    book = tmp_path / "book.txt"
    book.write_text("hi there.\nsay \u00a7 now.\nhi again.\nand \u00b6 too.\n", encoding="utf-8")
    out = tmp_path / "book.wav"
    r = invoke("synthesize", "--checkpoint", ckpts["tts"], "--in", book, "--out", out)
    assert_clean_failure(r, "2 of 4 sentences cannot be said", "sentence 2", "sentence 4")
    assert r.output.count("the model's symbol table") == 1 and not out.exists()


def test_words_said_otherwise_than_written_are_labelled_with_the_cleaned_text():
    """``Dr. Smith paid $3.`` is said as five words: the tiers' words get the cleaned
    text's (not the tokens joined), each written word as written (``Smith``, not
    ``smith``); a text whose words are the tokens' keeps its own."""
    from types import SimpleNamespace

    from aligner.inference.align import _label_text

    speech = SimpleNamespace(tokenizer=SimpleNamespace(cleaner="english"))
    tokens = ["<s>", "a", " ", "b", " ", "c", " ", "d", "e", " ", "f", ".", "</s>"]
    assert _label_text(speech, "Dr. Smith paid $3.", tokens) == "doctor Smith paid three dollars."
    assert _label_text(speech, "One two three four five.", tokens) == "One two three four five."
    assert _label_text(speech, "Too few.", tokens) == "Too few."
    five = "One two three four years.[1]"  # a footnote's mark is no word of the tiers
    assert _label_text(speech, five, tokens) == "One two three four years."


def test_an_item_of_minutes_is_pointed_to_the_long_form(tmp_path):
    from aligner.inference.align import long_item_notes

    sf.write(tmp_path / "chapter.wav", np.zeros(8000 * 130, np.float32), 8000)
    sf.write(tmp_path / "short.wav", np.zeros(8000, np.float32), 8000)
    items = [
        {"id": "chapter", "audio": str(tmp_path / "chapter.wav")},
        {"id": "short", "audio": str(tmp_path / "short.wav")},
        {"id": "gone", "audio": str(tmp_path / "gone.wav")},
    ]
    (note,) = long_item_notes(items)
    assert "chapter is 2.2 min long" in note and "--long-form" in note


@pytest.mark.parametrize("text", ["?!...", "\U0001f600\U0001f389", "***"])
def test_synthesize_refuses_a_text_without_words(ckpts, tmp_path, text):
    """Punctuation or symbols alone: decoded, they are noise; one line, no file."""
    out = tmp_path / "o.wav"
    r = invoke("synthesize", "--checkpoint", ckpts["tts"], "--text", text, "--out", out)
    assert_clean_failure(r, "no words, only punctuation or symbols")
    assert not out.exists()


def test_synthesize_leaves_out_a_sentence_of_punctuation_alone(ckpts):
    """``...`` between two sentences is a pause, not a sentence to decode."""
    from aligner.inference import load_speech_model
    from aligner.inference.synthesis import split_text

    speech = load_speech_model(ckpts["tts"], "synthesize")
    assert split_text(speech, "Hello there. ... Good day. ***") == ["Hello there.", "Good day."]


def test_align_names_an_item_whose_audio_is_too_short_for_its_text(ckpts, tmp_path):
    """0.3 s of audio for 120 words: no monotonic path exists; the item is named and
    counted, the others aligned (was a traceback from the search)."""
    data = ckpts["root"] / "data_tts"
    good = json.loads((data / "test.jsonl").read_text().splitlines()[0])
    good["audio"] = str(data / good["audio"])
    long = {**good, "id": "long", "text": " ".join(["a good day"] * 40) + "."}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps(long) + "\n" + json.dumps(good) + "\n")
    out = tmp_path / "al"
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", manifest, "--out", out, "--no-png")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "item long: its audio" in r.output and "is too short for its text" in r.output
    assert "1 item(s) not aligned" in r.output
    assert (out / f"{good['id']}.durations.json").is_file()


def test_convert_manifest_with_bad_lines_converts_the_good_items(ckpts, tmp_path):
    """A line that is no JSON and one without an id are named and counted, as `align`
    does; the good items are converted (was: the whole manifest refused)."""
    data = ckpts["root"] / "data_vc"
    lines = [
        json.dumps({"id": "a", "audio": str(data / "u0.wav")}),
        "{not json",
        json.dumps({"audio": str(data / "u1.wav")}),
        json.dumps({"id": "b", "audio": str(data / "u1.wav")}),
    ]
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    out = tmp_path / "conv"
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        manifest,
        "--out",
        out,
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "0.5",
    )
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "m.jsonl:2: not valid JSON" in r.output and "m.jsonl:3: " in r.output
    assert "2 bad input(s) skipped" in r.output
    assert sorted(p.name for p in out.glob("*.wav")) == ["a.wav", "b.wav"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["converted"] == 2 and summary["bad"] == 2


@pytest.mark.parametrize("command", ["align", "convert"])
@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_a_manifest_without_items_is_one_line(ckpts, tmp_path, command, content):
    """An empty manifest was 'done' with nothing written but summary.json (exit 0)."""
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(content)
    ckpt = ckpts["tts" if command == "align" else "vc"]
    out = tmp_path / "o"
    r = invoke(command, "--checkpoint", ckpt, "--in", manifest, "--out", out)
    assert_clean_failure(r, "m.jsonl holds no items")
    assert not out.exists()


@pytest.mark.parametrize("side", ["--save-mel", "--alignment"])
def test_a_side_output_that_cannot_be_written_stops_before_the_wav(ckpts, tmp_path, side):
    """--save-mel or --alignment under a file: one line, and no WAV left behind (the WAV
    was written first, then the command failed)."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    target = blocker / ("mels" if side == "--save-mel" else "a.png")
    out = tmp_path / "o.wav"
    r = invoke(
        "synthesize",
        "--checkpoint",
        ckpts["tts"],
        "--text",
        "hi.",
        "--out",
        out,
        side,
        target,
        "--griffin-lim-iters",
        "1",
        "--max-length-ratio",
        "1",
    )
    assert_clean_failure(r, "afile is a file, not a folder")
    assert not out.exists()
    r = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        ckpts["root"] / "data_vc" / "u0.wav",
        "--out",
        out,
        side,
        target,
    )
    assert_clean_failure(r, "afile is a file, not a folder")
    assert not out.exists()


def test_a_full_disk_while_drawing_a_heatmap_names_the_png(ckpts, tmp_path, monkeypatch):
    """PIL reports a full disk without a file name: the line named no file."""
    import matplotlib.figure

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", no_room)
    data = ckpts["root"] / "data_tts"
    out = tmp_path / "al"
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", data / "test.jsonl", "--out", out)
    assert_clean_failure(r, "no space left on", "u0.png")


def test_an_emoji_inside_a_sentence_is_named_not_read_out():
    """'I love it 😀.' was said as 'I love it grinning face.' by an English phonemes model
    (synthesize and align both read text through `encode_text`)."""
    from types import SimpleNamespace

    from aligner.inference.common import InferenceError
    from aligner.inference.speech import TextInput
    from aligner.text.tokenizers import build_tokenizer

    speech = SimpleNamespace(tokenizer=build_tokenizer("phonemes"))
    with pytest.raises(InferenceError, match=r"sentence 1: symbols .* say by name: .*U\+1F600"):
        TextInput.encode_text(speech, "I love it \U0001f600.", "sentence 1")


def test_a_word_whose_phones_the_table_lacks_is_named():
    """A Czech phonemes model given a Cyrillic word: eSpeak NG reads it in another
    language's phones, which the table lacks; the error names the word, not only them."""
    from types import SimpleNamespace

    from aligner.inference.common import InferenceError
    from aligner.inference.speech import TextInput
    from aligner.text.symbols import SymbolTable
    from aligner.text.tokenizers import build_tokenizer

    tokenizer = build_tokenizer("phonemes", language="cs")
    table = SymbolTable(tokenizer.tokenize("Dobrý den, přátelé. Ahoj světe."))
    speech = SimpleNamespace(tokenizer=tokenizer, symbols=table, add_bos=False, add_eos=False)
    speech._known_stress = lambda t: TextInput._known_stress(speech, t)
    speech._unsayable_words = lambda t: TextInput._unsayable_words(speech, t)
    with pytest.raises(
        InferenceError, match=r"sentence 1: unknown symbol\(s\) in the word\(s\) 'привет'"
    ):
        TextInput.encode_text(speech, "Dobrý den привет přátelé.", "sentence 1")


def test_convert_out_of_the_wrong_kind_by_its_name(ckpts, tmp_path):
    """``--out conv/`` for one file wrote a WAV file called ``conv``; ``--out all.wav`` for
    a manifest made a folder ``all.wav``: both refused before any work."""
    data = ckpts["root"] / "data_vc"
    base = ["convert", "--checkpoint", ckpts["vc"], "--in"]
    r = invoke(*base, data / "u0.wav", "--out", tmp_path / "conv")
    assert_clean_failure(r, "conv has no suffix", "OUT.wav")
    r = invoke(*base, data / "test.jsonl", "--out", tmp_path / "all.wav")
    assert_clean_failure(r, "all.wav names an audio file", "give a folder")
    assert not (tmp_path / "conv").exists() and not (tmp_path / "all.wav").exists()


def test_outputs_that_collide_or_an_image_of_no_format_are_refused_before_decoding(ckpts, tmp_path):
    """``--alignment a.bmpx`` failed with a traceback after the WAV was written;
    ``--alignment`` on ``--out``'s path, or ``--out`` inside ``--save-mel`` where a mel is
    written, overwrote one output with another."""
    base = ["synthesize", "--checkpoint", ckpts["tts"], "--text", "Hello there."]
    r = invoke(*base, "--out", tmp_path / "a.wav", "--alignment", tmp_path / "a.bmpx")
    assert_clean_failure(r, "cannot write a .bmpx image")
    r = invoke(*base, "--out", tmp_path / "s.wav", "--alignment", tmp_path / "s.wav")
    assert_clean_failure(r, "two outputs would be written to", "s.wav")
    mels = tmp_path / "mels"
    r = invoke(*base, "--out", mels / "sentence-1.npy", "--save-mel", mels)
    assert_clean_failure(r, "two outputs would be written to", "sentence-1.npy")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_mels_of_an_earlier_run_left_in_save_mel_are_named(ckpts, tmp_path):
    """--force over a longer text's mels kept its sentence-2.npy: `vocode` would say it."""
    base = ["synthesize", "--checkpoint", ckpts["tts"], "--out", tmp_path / "a.wav"]
    base += ["--save-mel", tmp_path / "mels", "--griffin-lim-iters", "2", "--force"]
    assert invoke(*base, "--text", "Hello there. A good day.").exit_code == 0
    r = invoke(*base, "--text", "Hello there.")
    assert r.exit_code == 0 and "also holds 1 mel(s) of another run (sentence-2.npy)" in r.output
