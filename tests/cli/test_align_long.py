"""`aligner align --long-form` / `--audio --text` end to end on a tiny randomly initialised
alignment model: one record and TextGrid per recording whose frames tile it, words in
time order inside it, the summary, --force, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from click.testing import CliRunner

from aligner.checkpoint import atomic_save
from aligner.cli import main
from aligner.config import ExperimentConfig
from aligner.tasks import build_task

SR = 8000
MEL = {
    "sample_rate": SR,
    "n_fft": 256,
    "hop_length": 64,
    "win_length": 256,
    "n_mels": 20,
    "f_max": 4000.0,
}
TEXT = "The cat sat on the mat. A good day to you! Where is the dog?"


def _wav(seconds: float, freq: float, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return (0.3 * np.sin(2 * np.pi * freq * t) + 0.01 * rng.standard_normal(len(t))).astype(
        np.float32
    )


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict[str, Path]:
    """A tiny alignment checkpoint, a 'recording' of three tones with pauses, its text."""
    root = tmp_path_factory.mktemp("long")
    rng = np.random.default_rng(0)
    parts = []
    for i in range(3):
        parts += [np.zeros(int(0.4 * SR), np.float32), _wav(0.8 + 0.2 * i, 200 + 80 * i, rng)]
    audio = root / "chapter.wav"
    sf.write(audio, np.concatenate([*parts, np.zeros(int(0.4 * SR), np.float32)]), SR)
    (root / "chapter.txt").write_text(TEXT + "\n", encoding="utf-8")
    item = {"id": "u0", "audio": "chapter.wav", "text": "hello world.", "speaker": "s"}
    for split in ("train", "valid", "test"):
        (root / f"{split}.jsonl").write_text(json.dumps(item) + "\n")
    model = {"channels": 16, "attn_dim": 8, "text_kernels": [1], "mel_kernels": [3, 1]}
    cfg = ExperimentConfig.from_dict(
        {"task": "align", "data": {"mel": MEL, "tokenizer": "chars"}, "model": model}
    )
    built = build_task(cfg, root)
    state = {"model": built.model.state_dict(), "step": 1, "config": cfg.to_dict()}
    atomic_save({**state, "symbols": built.symbols}, root / "align.pt")
    torch.manual_seed(0)
    return {"root": root, "ckpt": root / "align.pt", "audio": audio, "text": root / "chapter.txt"}


def _run(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def found(monkeypatch):
    """The coarse pass of a model that knows the recording: sentence k is tone k (a random
    model finds nothing; `tests/alignment/test_longform.py` tests the coarse pass), and
    no words a sentence's audio lacks (a random model's are chance)."""
    from aligner.inference import long_recording

    frames, spans, t = SR // 64, {}, 0.0
    for k in range(3):
        t += 0.4
        spans[k] = (int(t * frames), int((t + 0.8 + 0.2 * k) * frames))
        t += 0.8 + 0.2 * k
    monkeypatch.setattr(long_recording, "coarse_pass", lambda *a: (spans, [], [], {}, None, None))
    monkeypatch.setattr(long_recording, "sentence_drop", lambda *a: None)
    return spans


def test_a_recording_and_its_text_give_one_record_that_tiles_it(setup, tmp_path, found):
    out = tmp_path / "ali"
    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"]]
    r = _run(*args, "--text", setup["text"], "--out", out)
    assert r.exit_code == 0, r.output
    record = json.loads((out / "chapter.durations.json").read_text(encoding="utf-8"))
    duration = sf.info(str(setup["audio"])).duration
    assert (
        sum(record["frames"])
        == record["total_frames"]
        == len(record["tokens"]) * 0 + (int(duration * SR) // 64 + 1)
    )
    assert abs(record["total_seconds"] - record["total_frames"] * 64 / SR) < 1e-6
    words = record["words"]
    assert all(0 <= s < e <= record["total_seconds"] + 1e-6 for s, e, _ in words)
    assert all(a[1] <= b[0] + 1e-6 for a, b in zip(words, words[1:]))  # in order, no overlap
    assert [s["text"] for s in record["sentences"]] == [
        "The cat sat on the mat.", "A good day to you!", "Where is the dog?"
    ]  # fmt: skip
    spoken = [w for s in record["sentences"] if s["start"] is not None for w in s["text"].split()]
    assert len(words) == len(spoken)
    assert (out / "chapter.TextGrid").is_file() and (out / "durations" / "chapter.npy").is_file()
    frames = np.load(out / "durations" / "chapter.npy")
    assert frames.tolist() == record["frames"]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["utterances"] == 1 and "mismatches" in summary
    assert summary["items"][0]["real_time_factor"] > 0
    again = _run(*args, "--text", setup["text"], "--out", out)
    assert again.exit_code == 1 and "--force" in again.output and "Traceback" not in again.output
    forced = _run(*args, "--text", setup["text"], "--out", out, "--force")
    assert forced.exit_code == 0, forced.output


def test_a_recording_that_stops_inside_a_sentence_aligns_the_words_it_holds(
    setup, tmp_path, found, monkeypatch
):
    """The coarse search ends in sentence 3 after two of its words: those are aligned,
    the rest is text not in the audio at the recording's end, and a note says where."""
    from aligner.inference import long_recording

    spans = found
    monkeypatch.setattr(long_recording, "coarse_pass", lambda *a: (spans, [], [], {}, (2, 2), None))
    out = tmp_path / "ali"
    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"]]
    r = _run(*args, "--text", setup["text"], "--out", out)
    assert r.exit_code == 0, r.output
    assert "it ends inside sentence 3, after 'is'" in r.output
    record = json.loads((out / "chapter.durations.json").read_text(encoding="utf-8"))
    last = record["sentences"][-1]
    assert last["text"] == "Where is"
    assert [w[2] for w in record["words"][last["words"][0] : last["words"][1]]] == ["Where", "is"]
    rest = [m for m in record["mismatches"] if m["text"] == "the dog?"]
    assert len(rest) == 1 and rest[0]["kind"] == "text not in the audio"
    assert rest[0]["start"] == rest[0]["end"] == round(record["total_seconds"], 3)


def test_a_recording_that_begins_inside_a_sentence_aligns_the_words_it_holds(
    setup, tmp_path, found, monkeypatch
):
    """The coarse search begins in sentence 1 after three of its words: the rest of it is
    aligned, the three are text not in the audio at the recording's start, and a note
    says where."""
    from aligner.inference import long_recording

    spans = found
    monkeypatch.setattr(long_recording, "coarse_pass", lambda *a: (spans, [], [], {}, None, 3))
    out = tmp_path / "ali"
    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"]]
    r = _run(*args, "--text", setup["text"], "--out", out)
    assert r.exit_code == 0, r.output
    assert "it begins inside sentence 1, before 'on'" in r.output
    assert "it begins in speech" not in r.output
    record = json.loads((out / "chapter.durations.json").read_text(encoding="utf-8"))
    first = record["sentences"][0]
    assert first["text"] == "on the mat."
    assert [w[2] for w in record["words"][first["words"][0] : first["words"][1]]] == [
        "on", "the", "mat"
    ]  # fmt: skip
    lacked = [m for m in record["mismatches"] if m["text"] == "The cat sat"]
    assert len(lacked) == 1 and lacked[0]["kind"] == "text not in the audio"
    assert lacked[0]["start"] == lacked[0]["end"] == 0.0
    assert [s["text"] for s in record["sentences"][1:]] == [
        "A good day to you!",
        "Where is the dog?",
    ]


@pytest.mark.parametrize(
    ("run", "said", "lacked"),
    [((1, 3), "A to you!", "good day"), ((3, 5), "A good day!", "to you")],
)
def test_words_a_sentence_holds_and_its_audio_lacks_are_reported_not_squeezed(
    setup, tmp_path, found, monkeypatch, run, said, lacked
):
    """Two words of sentence 2 found missing from its audio (`sentence_drop`;
    `tests/alignment/test_dropped.py` tests the search): the sentence is aligned again
    without them (its end mark kept where they were its last), they are text not in the
    audio at the gap between the words beside them, and the other sentences are aligned
    as before."""
    from aligner.inference import long_recording

    def drop(tokens, *args):
        words = "".join(t if t.isalpha() else " " for t in tokens).split()
        return run if words == ["a", "good", "day", "to", "you"] else None

    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"], "--text"]
    r = _run(*args, setup["text"], "--out", tmp_path / "before")
    assert r.exit_code == 0, r.output
    monkeypatch.setattr(long_recording, "sentence_drop", drop)
    r = _run(*args, setup["text"], "--out", tmp_path / "ali")
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "ali" / "chapter.durations.json").read_text("utf-8"))
    before = json.loads((tmp_path / "before" / "chapter.durations.json").read_text("utf-8"))
    assert sum(record["frames"]) == record["total_frames"]
    second = record["sentences"][1]
    assert second["text"] == said
    a, b = second["words"]
    assert [w[2] for w in record["words"][a:b]] == said.rstrip("!").split()
    gap = [m for m in record["mismatches"] if m["text"] == lacked]
    assert len(gap) == 1 and gap[0]["kind"] == "text not in the audio"
    g = a + run[0]  # the first word after the gap
    assert gap[0]["start"] == round(record["words"][g - 1][1], 3)
    assert gap[0]["end"] == round(record["words"][g][0], 3)
    assert record["sentences"][0] == before["sentences"][0]
    assert record["sentences"][2]["text"] == before["sentences"][2]["text"]


def test_a_scene_break_or_lone_ellipsis_is_no_sentence_to_find(setup, tmp_path, found):
    """``* * *`` between paragraphs and a lone ``...`` say nothing: they are not sentences
    the audio lacks; a text of nothing else is one line."""
    text = tmp_path / "breaks.txt"
    text.write_text("The cat sat on the mat.\n\n* * *\n\nA good day to you! ... Where is the dog?")
    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"], "--text", text]
    r = _run(*args, "--out", tmp_path / "a")
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "a" / "chapter.durations.json").read_text(encoding="utf-8"))
    assert [s["text"] for s in record["sentences"]] == [
        "The cat sat on the mat.", "A good day to you!", "Where is the dog?"
    ]  # fmt: skip
    assert not record["mismatches"]
    text.write_text("* * * ... !")
    r = _run(*args, "--out", tmp_path / "b")
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "chapter: its text has no words to align" in r.output, r.output


def test_mismatches_of_narrowband_audio_come_with_a_note_on_its_band(
    setup, tmp_path, found, monkeypatch
):
    """A 4 kHz recording for a model of sound up to 4 kHz: its mismatches (here a sentence
    the coarse pass did not find) may be the band's fault, and the output says so."""
    from aligner.inference import long_recording

    spans = long_recording.coarse_pass()[0]
    monkeypatch.setattr(
        long_recording,
        "coarse_pass",
        lambda *a: ({0: spans[0], 1: spans[1]}, [2], [], {}, None, None),
    )
    wav, rate = sf.read(setup["audio"], dtype="float32")
    narrow = tmp_path / "phone.wav"
    sf.write(narrow, wav[::2], rate // 2)
    r = _run("align", "--checkpoint", setup["ckpt"], "--audio", narrow, "--text",
             setup["text"], "--out", tmp_path / "a")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "1 mismatch(es)" in r.output, r.output
    assert "warning: phone: its audio is 4000 Hz, so it holds nothing above 2000 Hz" in r.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    assert summary["items"][0]["note"].startswith("its audio is 4000 Hz")


def test_a_manifest_item_is_aligned_as_a_whole(setup, tmp_path, found):
    manifest = tmp_path / "long.jsonl"
    item = {"id": "chapter one", "audio": str(setup["audio"]), "text": TEXT}
    manifest.write_text(json.dumps(item) + "\n")
    r = _run(
        "align",
        "--long-form",
        "--checkpoint",
        setup["ckpt"],
        "--in",
        manifest,
        "--out",
        tmp_path / "a",
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a" / "chapter_one.durations.json").is_file()


def test_a_manifests_bad_lines_and_items_are_each_told_and_the_good_one_aligned(
    setup, tmp_path, found
):
    manifest = tmp_path / "long.jsonl"
    good = {"id": "chapter one", "audio": str(setup["audio"]), "text": TEXT}
    no_text = {"id": "chapter two", "audio": str(setup["audio"])}
    manifest.write_text("\n".join([json.dumps(good), "{oops", json.dumps(no_text)]) + "\n")
    out = tmp_path / "a"
    r = _run("align", "--long-form", "--checkpoint", setup["ckpt"], "--in", manifest, "--out", out)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "long.jsonl:2: not valid JSON" in r.output and "chapter two" in r.output
    assert (out / "chapter_one.durations.json").is_file()
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["bad"] == 2


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--text", "missing.txt"], ["--text", "does not exist"]),
        ([], ["--audio", "--text"]),
    ],
)
def test_bad_input_is_one_line(setup, tmp_path, extra, words):
    r = _run(
        "align",
        "--checkpoint",
        setup["ckpt"],
        "--audio",
        setup["audio"],
        "--out",
        tmp_path / "o",
        *extra,
    )
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and all(w in lines[0] for w in words), r.output


def test_a_text_found_nowhere_in_the_audio_is_a_bad_item(setup, tmp_path):
    """The random model finds no sentence: the recording is named with the reason, exit 1."""
    args = ["--audio", setup["audio"], "--text", setup["text"], "--out", tmp_path / "o"]
    r = _run("align", "--checkpoint", setup["ckpt"], *args)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "chapter: none of the 3 sentences" in r.output
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["bad"] == 1 and summary["utterances"] == 0


def test_a_silent_recording_is_a_bad_item(setup, tmp_path):
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(3 * SR, np.float32), SR)
    r = _run("align", "--checkpoint", setup["ckpt"], "--audio", silent, "--text", setup["text"],
             "--out", tmp_path / "o")  # fmt: skip
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "silent: the recording is silent" in r.output and "silent: silent" not in r.output


def test_a_sentence_found_in_fewer_frames_than_its_phones_is_a_bad_item(
    setup, tmp_path, monkeypatch
):
    """A sentence placed in 4 frames (far more text than audio) was a ValueError from the
    monotonic search ('items [0]: ...'); now the recording is named with the sentence."""
    from aligner.inference import long_recording

    spans = {0: (0, 4), 1: (4, 120), 2: (140, 200)}
    monkeypatch.setattr(long_recording, "coarse_pass", lambda *a: (spans, [], [], {}, None, None))
    args = ["--audio", setup["audio"], "--text", setup["text"], "--out", tmp_path / "o"]
    r = _run("align", "--checkpoint", setup["ckpt"], *args)
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert "chapter: sentence 1 ('The cat sat on the mat.') has" in r.output
    assert "found in 4 frames" in r.output and "items [0]" not in r.output


def test_a_word_the_dictionary_lacks_is_said_by_rules_and_listed(setup, tmp_path, found):
    """An ARPAbet model trained to refuse words CMUdict lacks (``oov: error``) reads one
    such word by eSpeak NG's rules: the recording and an utterance of a manifest are
    aligned, each command names the word, and summary.json lists it."""
    model = {"channels": 16, "attn_dim": 8, "text_kernels": [1], "mel_kernels": [3, 1]}
    data = {"mel": MEL, "tokenizer": "arpabet", "tokenizer_opts": {"oov": "error"}}
    cfg = ExperimentConfig.from_dict({"task": "align", "data": data, "model": model})
    built = build_task(cfg, setup["root"])
    assert built.symbols["tokenizer"]["oov"] == "error"
    ckpt = tmp_path / "arpabet.pt"
    state = {"model": built.model.state_dict(), "step": 1, "config": cfg.to_dict()}
    atomic_save({**state, "symbols": built.symbols}, ckpt)
    text = tmp_path / "chapter.txt"
    text.write_text(TEXT.replace("mat", "zorblax"), encoding="utf-8")
    args = ["align", "--checkpoint", ckpt, "--audio", setup["audio"], "--text", text]
    r = _run(*args, "--out", tmp_path / "long")
    assert r.exit_code == 0, r.output
    assert "said by eSpeak NG's rules" in r.output and "zorblax" in r.output
    summary = json.loads((tmp_path / "long" / "summary.json").read_text(encoding="utf-8"))
    assert summary["guessed_words"] == ["zorblax"]
    manifest = tmp_path / "items.jsonl"
    item = {"id": "u1", "audio": str(setup["audio"]), "text": "The cat sat on the zorblax."}
    manifest.write_text(json.dumps(item) + "\n")
    r = _run("align", "--checkpoint", ckpt, "--in", manifest, "--out", tmp_path / "utt", "--no-png")
    assert r.exit_code == 0, r.output
    summary = json.loads((tmp_path / "utt" / "summary.json").read_text(encoding="utf-8"))
    assert summary["guessed_words"] == ["zorblax"] and "zorblax" in r.output


def test_a_held_edge_word_is_aligned_again_inside_the_recording(
    setup, tmp_path, found, monkeypatch
):
    """The second fine pass (a sentence's first or last word held to the audio beyond a
    pause, `hold_edge_words`): sentence 1's first word held to the pause before it, the
    recording still tiled by one record, every word inside its sentence's piece."""
    from aligner.inference import long_recording

    def hold(spans, extra, wrong, pause, run, skipped):
        a, b = spans[1]
        return {**spans, 1: (a - 10, b)}, extra, {1: [(0, 0, a - 10, a)]}

    monkeypatch.setattr(long_recording, "hold_edge_words", hold)
    out = tmp_path / "ali"
    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"], "--text"]
    r = _run(*args, setup["text"], "--out", out)
    assert r.exit_code == 0, r.output
    record = json.loads((out / "chapter.durations.json").read_text(encoding="utf-8"))
    assert sum(record["frames"]) == record["total_frames"]
    words = record["words"]
    assert all(a[1] <= b[0] + 1e-6 for a, b in zip(words, words[1:]))
    second = record["sentences"][1]
    a, b = second["words"]  # the sentence spans its words, found from the held span on
    assert (second["start"], second["end"]) == (words[a][0], words[b - 1][1])
    held = found[1][0] * 64 / SR - 10 * 64 / SR
    assert held - 0.2 - 1e-6 <= second["start"] <= held + 0.2


def _arpabet_checkpoint(root: Path, path: Path, tokenizer: str = "arpabet") -> Path:
    model = {"channels": 16, "attn_dim": 8, "text_kernels": [1], "mel_kernels": [3, 1]}
    data = {"mel": MEL, "tokenizer": tokenizer}
    if tokenizer == "arpabet":
        data["tokenizer_opts"] = {"oov": "error"}
    cfg = ExperimentConfig.from_dict({"task": "align", "data": data, "model": model})
    built = build_task(cfg, root)
    state = {"model": built.model.state_dict(), "step": 1, "config": cfg.to_dict()}
    atomic_save({**state, "symbols": built.symbols}, path)
    return path


def test_a_word_the_model_cannot_read_is_a_mismatch_not_a_stop(setup, tmp_path, found):
    """An English ARPAbet model given a Cyrillic word and an emoji in a long recording's
    text: the recording is aligned, the word keeps its own label and span inside its
    sentence and is reported as a word the model cannot read; the emoji is no word. A
    sentence mostly of such words stops the recording with the model's own message."""
    ckpt = _arpabet_checkpoint(setup["root"], tmp_path / "arpabet.pt")
    text = tmp_path / "chapter.txt"
    text.write_text(TEXT.replace("good day", "good 😀 привет,"), encoding="utf-8")
    args = ["align", "--checkpoint", ckpt, "--audio", setup["audio"], "--text", text]
    r = _run(*args, "--out", tmp_path / "long")
    assert r.exit_code == 0, r.output
    assert "word the model cannot read: 'привет'" in r.output
    record = json.loads((tmp_path / "long" / "chapter.durations.json").read_text("utf-8"))
    labels = [w[2] for w in record["words"]]
    assert "привет" in labels and "😀" not in labels and "good" in labels
    word = record["words"][labels.index("привет")]
    (kind,) = [m for m in record["mismatches"] if m["kind"] == "word the model cannot read"]
    assert (kind["start"], kind["end"]) == pytest.approx((word[0], word[1]), abs=2e-3)
    second = record["sentences"][1]
    assert second["text"].startswith("A good 😀 привет")
    assert second["start"] - 1e-6 <= word[0] < word[1] <= second["end"] + 1e-6
    text.write_text(TEXT.replace("A good day to you!", "Добрый день, друг мой!"), "utf-8")
    r = _run(*args, "--out", tmp_path / "long2")
    assert r.exit_code == 1 and "Добрый" in r.output and "Traceback" not in r.output


def test_the_text_the_model_reads_in_place_of_words_it_cannot(setup, tmp_path):
    """A word it cannot read becomes the text's shortest readable word (its punctuation
    kept); a symbol alone or beside a word is left out, the word beside it kept; a
    sentence of mostly such words is the model's own error."""
    from aligner.inference.common import InferenceError
    from aligner.inference.loading import load_speech_model
    from aligner.inference.unreadable import readable_text

    speech = load_speech_model(_arpabet_checkpoint(setup["root"], tmp_path / "a.pt"), "align")
    got = readable_text(speech, ["I love😀 it, привет!", "A (привет) day.", "Go \u2192 now."])
    stand_in = got.texts[1].split()[1].strip("()")  # a word of one phone: A or I
    assert stand_in in ("A", "I")
    assert got.texts == [f"I love it, {stand_in}!", f"A ({stand_in}) day.", "Go now."]
    assert got.unread == {0: {3: "привет"}, 1: {1: "привет"}}
    assert got.left_out == ["😀", "\u2192"]
    with pytest.raises(InferenceError, match="Добрый"):
        readable_text(speech, ["Добрый день, друг!", "A day."])


def test_words_left_out_are_found_in_the_text_where_the_rest_sounds_otherwise(setup, tmp_path):
    """eSpeak NG links an r across words (`senter after` reads `sˈɛntɚɹ ˈæftɚ`, `senter so`
    does not): the written words a sentence's audio lacks are still found when what is
    left sounds a token or two otherwise where they were, never a run that leaves another
    number of words."""
    from aligner.alignment.tiers import optional_tokens, word_runs
    from aligner.inference.left_out import without_words
    from aligner.inference.loading import load_speech_model
    from aligner.inference.longform import _sentence_tokens
    from aligner.inference.unreadable import readable_text

    ckpt = _arpabet_checkpoint(setup["root"], tmp_path / "p.pt", "phonemes")
    speech = load_speech_model(ckpt, "align")
    text = "My main senter after his tight scholarship so his fedder would coil these waters."
    tokens = _sentence_tokens(speech, readable_text(speech, [text]).ids)[0][1]
    assert len(word_runs(optional_tokens(tokens))) == 14
    rest, gone, _ = without_words(speech, text, tokens, 3, 7)
    assert gone == "after his tight scholarship"
    assert rest == "My main senter so his fedder would coil these waters."
    rest, gone, _ = without_words(speech, text, tokens, 11, 14)
    assert gone == "coil these waters"
    assert rest == "My main senter after his tight scholarship so his fedder would."


def test_a_sentence_not_what_its_audio_says_is_reported_as_both(
    setup, tmp_path, found, monkeypatch
):
    """A sentence the coarse search put on audio that says something else (`not_said`):
    the text's sentence is reported as text not in the audio, its audio as audio not in
    the text, the other sentences aligned as before; where no sentence is said, the
    recording is the one-line error of a text that does not belong to it."""
    from aligner.inference import long_recording

    args = ["align", "--checkpoint", setup["ckpt"], "--audio", setup["audio"], "--text"]
    r = _run(*args, setup["text"], "--out", tmp_path / "before")
    assert r.exit_code == 0, r.output
    monkeypatch.setattr(long_recording, "not_said", lambda scores, every: len(scores) == 5)
    r = _run(*args, setup["text"], "--out", tmp_path / "ali")
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "ali" / "chapter.durations.json").read_text("utf-8"))
    before = json.loads((tmp_path / "before" / "chapter.durations.json").read_text("utf-8"))
    assert sum(record["frames"]) == record["total_frames"]
    assert record["sentences"][1] == {"text": "A good day to you!", "start": None, "end": None}
    for k in (0, 2):  # the same times (their words counted without sentence 2's)
        times = [record["sentences"][k][key] for key in ("text", "start", "end")]
        assert times == [before["sentences"][k][key] for key in ("text", "start", "end")]
    kinds = {(m["kind"], m["text"]) for m in record["mismatches"]}
    assert ("text not in the audio", "A good day to you!") in kinds
    heard = [m for m in record["mismatches"] if m["kind"] == "audio not in the text"]
    start, end = found[1]
    sec = 64 / SR
    assert len(heard) == 1 and heard[0]["start"] <= start * sec + 0.05
    assert heard[0]["end"] >= end * sec - 0.05
    assert "good" not in [w[2] for w in record["words"]]
    monkeypatch.setattr(long_recording, "not_said", lambda scores, every: True)
    r = _run(*args, setup["text"], "--out", tmp_path / "none")
    assert r.exit_code == 1 and "none of the 3 sentences" in r.output
    assert "Traceback" not in r.output


def test_the_audio_of_a_sentence_not_said_is_one_span_with_the_audio_beside_it():
    """`_audio_in_place`: the sentence's span leaves `spans` and joins the runs of audio
    the text does not hold between the sentences beside it, not those beyond them."""
    from aligner.inference.long_recording import _audio_in_place

    spans = {0: (0, 10), 1: (20, 30), 2: (50, 60)}
    extra = _audio_in_place(spans, [(12, 18), (32, 40), (62, 70)], 1, 80)
    assert spans == {0: (0, 10), 2: (50, 60)}
    assert sorted(extra) == [(12, 40), (62, 70)]
    extra = _audio_in_place(spans, extra, 2, 80)  # the last: up to the recording's end
    assert spans == {0: (0, 10)} and sorted(extra) == [(12, 70)]
