"""`aligner synthesize | convert | align | plot` on tiny randomly initialised checkpoints built
through the real tasks, models and checkpoint writer; text splitting and batching helpers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from aligner.audio.io import join_waves
from aligner.checkpoint import atomic_save
from aligner.cli import main
from aligner.config import ExperimentConfig
from aligner.data.collate import length_batches
from aligner.inference import InferenceError, load_speech_model
from aligner.tasks import build_task
from aligner.text.sentences import split_sentences

SR = 8000
MEL = {
    "sample_rate": SR,
    "n_fft": 256,
    "win_length": 256,
    "hop_length": 64,
    "n_mels": 16,
    "f_max": 4000.0,
}
TINY_MODEL = {
    "r": 2,
    "encoder": {"embed_dim": 16, "out_dim": 16, "n_convs": 1, "kernel_size": 3},
    "decoder": {
        "prenet_dims": [16],
        "attn_rnn_dim": 16,
        "attn_dim": 8,
        "dec_dim": 16,
        "attention_opts": {"filters": 4, "kernel_size": 3},
    },
    "postnet": {"channels": 8, "n_convs": 2, "kernel_size": 3},
}
TEXTS = ["hello world.", "a good day!", "the cat sat, hi?"]


def write_wav(path: Path, seconds: float, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * SR)) / SR
    wav = 0.3 * np.sin(2 * np.pi * (200 + 50 * seed) * t) + 0.01 * rng.standard_normal(len(t))
    sf.write(path, wav.astype(np.float32), SR)
    return path


def write_corpus(root: Path, vc: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, text in enumerate(TEXTS):
        item = {
            "id": f"u{i}",
            "audio": write_wav(root / f"u{i}.wav", 0.3 + 0.05 * i, i).name,
            "text": text,
            "speaker": "s",
        }
        if vc:
            item["target_audio"] = write_wav(root / f"t{i}.wav", 0.35 + 0.05 * i, i + 5).name
        lines.append(json.dumps(item))
    for split in ("train", "valid", "test"):
        (root / f"{split}.jsonl").write_text("\n".join(lines) + "\n")
    return root


def make_checkpoint(tmp: Path, task: str, window: list[int] | None = None) -> Path:
    """A randomly initialised checkpoint of `task` written as the trainer writes it (the stop
    logit biased to "never stop", so output lengths are known); `window`: the recipe's
    ``model.decoder.window``."""
    data = write_corpus(tmp / f"data_{task}", vc=task == "vc")
    model = dict(TINY_MODEL)
    if window is not None:
        model["decoder"] = {**TINY_MODEL["decoder"], "window": window}
    if task == "vc":
        model["encoder"] = {
            "kind": "mel",
            "prenet_dims": [16],
            "conv_dim": 16,
            "out_dim": 16,
            "n_convs": 1,
            "kernel_size": 3,
        }
    cfg = ExperimentConfig.from_dict({"task": task, "data": {"mel": MEL}, "model": model})
    built = build_task(cfg, data)
    with torch.no_grad():  # never predict the end: every decode runs to the length limit
        built.model.decoder.stop.bias.fill_(-50.0)
    state = {
        "model": built.model.state_dict(),
        "step": 7,
        "config": cfg.to_dict(),
        "symbols": built.symbols,
    }
    path = tmp / f"{task}{'' if window is None else '_window'}.pt"
    atomic_save(state, path)
    return path


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("ckpt")
    return {"tts": make_checkpoint(tmp, "tts"), "vc": make_checkpoint(tmp, "vc"), "root": tmp}


def invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def assert_clean_failure(result, *words: str) -> None:
    """Exit code 1, one 'Error:' line naming the words, no traceback."""
    assert result.exit_code == 1, result.output
    lines = [ln for ln in result.output.strip().splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1, result.output
    assert "Traceback" not in result.output
    for w in words:
        assert w in lines[0], lines[0]


# ------------------------------------------------------------------ helpers
def test_split_sentences_keeps_abbreviations_and_initials():
    text = "Mr. Smith met Dr. Who at 3.5 p.m. today! Did J. Doe come?  Yes.\n\nNext part"
    assert split_sentences(text) == [
        "Mr. Smith met Dr. Who at 3.5 p.m. today!",
        "Did J. Doe come?",
        "Yes.",
        "Next part",
    ]
    assert split_sentences("  \n ") == []


@given(st.lists(st.sampled_from(["one,", "two", "three;", "four."]), min_size=1, max_size=80))
def test_split_sentences_loses_no_word_and_respects_the_limit(words):
    text = " ".join(words)
    pieces = split_sentences(text, max_chars=30)
    assert " ".join(pieces).split() == text.split()
    assert all(len(p) <= 30 for p in pieces if " " in p)


@given(st.lists(st.integers(1, 50), max_size=30), st.integers(1, 7))
def test_length_batches_cover_each_index_once_longest_first(lengths, size):
    batches = length_batches(lengths, size, longest_first=True)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    assert all(len(b) <= size for b in batches)
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_join_waves_inserts_the_pause():
    out = join_waves([torch.ones(3), torch.ones(2)], sample_rate=10, pause=0.2)
    assert out.tolist() == [1, 1, 1, 0, 0, 1, 1]


# ------------------------------------------------------------------ loading
def test_loaded_model_equals_the_saved_one(ckpts):
    """On the CPU the decoder's LSTM cells load fused (`aligner.models.tacotron.fused`): their
    one weight is the saved input and hidden weights side by side, their bias the sum."""
    speech = load_speech_model(ckpts["tts"], "synthesize")
    saved = torch.load(ckpts["tts"], weights_only=True)["model"]
    fused = {"decoder.attn_rnn", *(f"decoder.dec_rnns.{k}" for k in range(3))}
    state = speech.model.state_dict()
    for name, value in state.items():
        cell = name.rpartition(".gates.")[0]
        if cell:
            assert cell in fused, name
            if name.endswith("weight"):
                want = torch.cat([saved[f"{cell}.weight_ih"], saved[f"{cell}.weight_hh"]], 1)
            else:
                want = saved[f"{cell}.bias_ih"] + saved[f"{cell}.bias_hh"]
            assert torch.equal(value, want), name
        else:
            assert torch.equal(value, saved[name]), name
    assert "decoder.attn_rnn.gates.weight" in state
    assert speech.step == 7 and speech.r == 2 and not speech.model.training


def test_load_model_takes_an_experiment_folder_and_returns_the_family(ckpts, tmp_path):
    """One resolver for Python users as for the CLI: a folder means its best.pt, else its
    latest checkpoint; the checkpoint's task picks the family's class."""
    import shutil

    from aligner.inference import TTSModel, VCModel, load_model

    exp = tmp_path / "exp"
    (exp / "checkpoints").mkdir(parents=True)
    shutil.copy(ckpts["tts"], exp / "checkpoints" / "ckpt-00000007.pt")
    tts = load_model(exp)
    assert isinstance(tts, TTSModel) and tts.path == exp / "checkpoints" / "ckpt-00000007.pt"
    assert load_speech_model(exp, "synthesize").path == tts.path
    shutil.copy(ckpts["vc"], exp / "checkpoints" / "best.pt")  # best.pt wins over the latest
    vc = load_model(exp / "checkpoints")
    assert isinstance(vc, VCModel) and vc.path.name == "best.pt" and not vc.has_text
    with pytest.raises(
        InferenceError,
        match="is a tacotron vc checkpoint, which cannot synthesize; use `aligner convert`",
    ):
        load_speech_model(exp, "synthesize")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InferenceError, match="without best.pt or ckpt-STEP.pt"):
        load_model(tmp_path / "empty")


def test_batched_generation_equals_one_by_one(ckpts):
    speech = load_speech_model(ckpts["tts"], "synthesize")
    speech.model.decoder.prenet.always_dropout = False  # deterministic for the comparison
    ids = [speech.encode_text(t) for t in ["hello", "a good day, the cat", "cat"]]
    together = speech.generate(ids, batch_size=3, max_length_ratio=2.0)
    for x, res in zip(ids, together):
        alone = speech.generate([x], batch_size=1, max_length_ratio=2.0)[0]
        assert res.mel.shape == alone.mel.shape
        assert torch.allclose(res.mel, alone.mel, atol=1e-4)
        assert torch.allclose(res.alignment, alone.alignment, atol=1e-5)
        assert res.alignment.shape[1] == len(x)


# ------------------------------------------------------------------ synthesize
def test_synthesize_writes_audio_and_reports_length_hits(ckpts, tmp_path):
    out, png = tmp_path / "s.wav", tmp_path / "s.png"
    text = "Hello world. A good day!"
    r = invoke(
        "synthesize",
        "--checkpoint",
        ckpts["tts"],
        "--text",
        text,
        "--out",
        out,
        "--alignment",
        png,
        "--max-length-ratio",
        "1.5",
        "--griffin-lim-iters",
        "2",
    )
    assert r.exit_code == 0, r.output
    wav, sr = sf.read(out)
    assert sr == SR and len(wav) > int(0.25 * SR)  # two sentences + the 0.25 s pause
    # an untrained model never predicts its stop: both sentences hit the limit, both reported
    assert "sentence 1 ('Hello world.')" in r.output and "sentence 2" in r.output
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("task", ["tts", "vc"])
def test_fast_precisions_decode_the_same_lengths_as_fp32(ckpts, tmp_path, task):
    """--precision fp16 / int8 on synthesize and convert: the same output lengths as fp32
    (the stop disabled, so all run to the length limit), the mels within rounding."""
    import numpy as np

    mels = {}
    for precision in ("fp32", "fp16", "int8"):
        folder = tmp_path / precision
        if task == "tts":
            args = ["synthesize", "--text", "Hello world. A good day!", "--out", folder / "s.wav"]
        else:
            src = ckpts["root"] / "data_vc" / "u1.wav"
            args = ["convert", "--in", src, "--out", folder / "c.wav"]
        r = invoke(
            *args,
            "--checkpoint",
            ckpts[task],
            "--precision",
            precision,
            "--save-mel",
            folder,
            "--griffin-lim-iters",
            "2",
            "--seed",
            "1",
        )
        assert r.exit_code == 0, r.output
        mels[precision] = {p.name: np.load(p) for p in sorted(folder.glob("*.npy"))}
    for precision in ("fp16", "int8"):
        assert mels["fp32"].keys() == mels[precision].keys() and mels["fp32"]
        for name, mel in mels["fp32"].items():
            assert mel.shape == mels[precision][name].shape
            assert np.abs(mel - mels[precision][name]).mean() < 0.1 * mel.std() + 1e-3


def test_int8_refused_on_an_unknown_value_and_for_the_alignment_family(ckpts, tmp_path):
    r = invoke(
        "synthesize", "--checkpoint", ckpts["tts"], "--text", "hi.", "--out", tmp_path / "a.wav",
        "--precision", "int4",
    )  # fmt: skip
    assert r.exit_code == 2 and "int4" in r.output and "Traceback" not in r.output
    with pytest.raises(InferenceError, match="CPU only"):
        load_speech_model(ckpts["tts"], "synthesize", "cuda", "int8")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--text", "   "], ["empty"]),
        (["--text", "hello ~ world"], ["unknown symbol", "'~'"]),
        (["--text", "hi", "--in", "x.txt"], ["exactly one"]),
        (["--in", "missing.txt"], ["missing.txt", "does not exist"]),
    ],
)
def test_synthesize_bad_text(ckpts, tmp_path, args, words):
    r = invoke("synthesize", "--checkpoint", ckpts["tts"], *args, "--out", tmp_path / "o.wav")
    assert_clean_failure(r, *words)


def test_synthesize_bad_checkpoints(ckpts, tmp_path):
    out = tmp_path / "o.wav"
    missing = invoke(
        "synthesize", "--checkpoint", tmp_path / "none.pt", "--text", "hi", "--out", out
    )
    assert_clean_failure(missing, "none.pt", "does not exist")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    assert_clean_failure(
        invoke("synthesize", "--checkpoint", junk, "--text", "hi", "--out", out), "junk.pt"
    )
    wrong = invoke("synthesize", "--checkpoint", ckpts["vc"], "--text", "hi", "--out", out)
    assert_clean_failure(wrong, "vc checkpoint", "aligner convert")
    text_ckpt = tmp_path / "g2p.pt"
    atomic_save(
        {"model": {}, "step": 0, "config": {"task": "g2p"}, "symbols": {"task": "g2p"}}, text_ckpt
    )
    assert_clean_failure(
        invoke("synthesize", "--checkpoint", text_ckpt, "--text", "hi", "--out", out),
        "rnn_seq2seq g2p checkpoint",
    )


def test_synthesize_refuses_to_overwrite(ckpts, tmp_path):
    out = tmp_path / "o.wav"
    out.write_bytes(b"keep me")
    r = invoke("synthesize", "--checkpoint", ckpts["tts"], "--text", "hi", "--out", out)
    assert_clean_failure(r, "o.wav", "--force")
    assert out.read_bytes() == b"keep me"


# ------------------------------------------------------------------ convert
def test_convert_file_folder_and_manifest(ckpts, tmp_path):
    data = ckpts["root"] / "data_vc"
    one = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        data / "u0.wav",
        "--out",
        tmp_path / "one.wav",
        "--griffin-lim-iters",
        "2",
    )
    assert one.exit_code == 0, one.output
    assert sf.info(tmp_path / "one.wav").samplerate == SR
    many = invoke(
        "convert",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        data / "test.jsonl",
        "--out",
        tmp_path / "conv",
        "--griffin-lim-iters",
        "2",
    )
    assert many.exit_code == 0, many.output
    written = json.loads((tmp_path / "conv" / "manifest.jsonl").read_text().splitlines()[0])
    assert written["id"] == "u0" and Path(written["source_audio"]).name == "u0.wav"
    assert sorted(p.name for p in (tmp_path / "conv").glob("*.wav")) == [
        "u0.wav",
        "u1.wav",
        "u2.wav",
    ]


def test_convert_failures(ckpts, tmp_path):
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"RIFF....not really")
    r = invoke("convert", "--checkpoint", ckpts["vc"], "--in", bad, "--out", tmp_path / "o.wav")
    assert_clean_failure(r, "bad.wav")
    r = invoke("convert", "--checkpoint", ckpts["tts"], "--in", bad, "--out", tmp_path / "o.wav")
    assert_clean_failure(r, "tts checkpoint", "aligner synthesize")
    r = invoke(
        "convert", "--checkpoint", ckpts["vc"], "--in", tmp_path / "nope.wav", "--out", "x.wav"
    )
    assert_clean_failure(r, "nope.wav", "does not exist")


# ------------------------------------------------------------------ align
def test_align_writes_consistent_files(ckpts, tmp_path):
    data = ckpts["root"] / "data_tts"
    out = tmp_path / "al"
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", data / "test.jsonl", "--out", out)
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utterances"] == 3 and len(summary["items"]) == 3
    assert "3 utterances" in r.output
    for i in range(3):
        rec = json.loads((out / f"u{i}.durations.json").read_text())
        frames = sf.info(data / f"u{i}.wav").frames // MEL["hop_length"] + 1  # centred frames
        assert sum(rec["frames"]) == rec["total_frames"] == frames
        assert rec["tokens"][-1] == "</s>"  # the recipe default add_eos
        assert len(rec["tokens"]) == len(TEXTS[i]) + 1
        assert sum(rec["seconds"]) == pytest.approx(frames * MEL["hop_length"] / SR, abs=1e-4)
        weights = np.load(out / f"u{i}.npy")
        assert weights.shape == (-(-frames // 2), len(rec["tokens"]))
        assert np.allclose(weights.sum(1), 1.0, atol=1e-4)
        assert (out / f"u{i}.TextGrid").exists() and (out / f"u{i}.png").exists()
    again = invoke("align", "--checkpoint", ckpts["tts"], "--in", data / "test.jsonl", "--out", out)
    assert_clean_failure(again, "not empty", "--force")
    # pauses from the audio move only the words and phones tiers, never the frames
    plain = tmp_path / "plain"
    r = invoke(
        "align",
        "--checkpoint",
        ckpts["tts"],
        "--in",
        data / "test.jsonl",
        "--out",
        plain,
        "--silence-db",
        "0",
        "--no-png",
    )
    assert r.exit_code == 0, r.output
    for i in range(3):
        a, b = (json.loads((d / f"u{i}.durations.json").read_text()) for d in (out, plain))
        assert a["frames"] == b["frames"] and len(a["words"]) == len(b["words"])
    for bad in (["--silence-db", "-1"], ["--min-pause", "x"]):
        r = invoke(
            "align",
            "--checkpoint",
            ckpts["tts"],
            "--in",
            data / "test.jsonl",
            "--out",
            tmp_path / "x",
            *bad,
        )
        assert r.exit_code == 2 and bad[0] in r.output and "Traceback" not in r.output


def test_align_vc_and_bad_items(ckpts, tmp_path):
    data = ckpts["root"] / "data_vc"
    r = invoke(
        "align",
        "--checkpoint",
        ckpts["vc"],
        "--in",
        data / "test.jsonl",
        "--out",
        tmp_path / "vc",
        "--no-png",
    )
    assert r.exit_code == 0, r.output
    assert not list((tmp_path / "vc").glob("*.png"))
    # a batch with bad items aligns the good ones, names every bad one and exits 1
    tts = ckpts["root"] / "data_tts"
    good = [json.loads(line) for line in (tts / "test.jsonl").read_text().splitlines()]
    lines = [
        {**good[0], "audio": str(tts / good[0]["audio"])},
        {"id": "x", "audio": str(tts / "u0.wav")},  # no text
        {"id": "y", "audio": str(tmp_path / "gone.wav"), "text": "hi"},  # no audio file
        {**good[1], "audio": str(tts / good[1]["audio"])},
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(it) + "\n" for it in lines))
    out = tmp_path / "b"
    r = invoke("align", "--checkpoint", ckpts["tts"], "--in", bad, "--out", out)
    assert r.exit_code == 1 and "Traceback" not in r.output
    errors = [ln for ln in r.output.splitlines() if ln.startswith("Error:")]
    assert "x" in errors[0] and "no text" in errors[0]
    assert "y" in errors[1] and "gone.wav" in errors[1] and "2 item(s)" in errors[2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["utterances"] == 2 and summary["bad"] == 2
    assert [b["id"] for b in summary["bad_items"]] == ["x", "y"]
    assert (out / "u0.TextGrid").exists() and (out / "u1.TextGrid").exists()


def test_vc_skips_are_counted_not_suspected(ckpts, tmp_path, monkeypatch):
    """A VC decoder passes over source frames where the source is slower: `align` counts
    them in summary.json but flags no item for them (a TTS skip would be suspect)."""
    from aligner.inference.speech import SpeechModel

    real = SpeechModel.teacher_force

    def every_other_position(self, *args, **kwargs):  # a path over even positions only
        out = []
        for w in real(self, *args, **kwargs):
            steps, n = w.shape
            path = torch.clamp(torch.arange(steps) * 2, max=n - 1)
            out.append(torch.nn.functional.one_hot(path, n).float())
        return out

    monkeypatch.setattr(SpeechModel, "teacher_force", every_other_position)
    data = ckpts["root"] / "data_vc"
    out = tmp_path / "vc"
    r = invoke("align", "--checkpoint", ckpts["vc"], "--in", data / "test.jsonl", "--out", out)
    assert r.exit_code == 0, r.output
    utterances = json.loads((out / "summary.json").read_text())["items"]
    assert all(u["skipped"] > 0 for u in utterances)
    assert not any("skipped" in why for u in utterances for why in u["suspect"])


def test_align_audio_key_aligns_the_target_voice(ckpts, tmp_path):
    """--audio-key target_audio: the text against the parallel item's other recording (how
    a VC corpus gets the alignment model's durations of both voices); an item without
    that recording is named and counted."""
    import soundfile as sf

    data = ckpts["root"] / "data_vc"
    args = ["--checkpoint", ckpts["tts"], "--in", data / "test.jsonl", "--no-png"]
    assert invoke("align", *args, "--out", tmp_path / "src").exit_code == 0
    r = invoke("align", *args, "--out", tmp_path / "tgt", "--audio-key", "target_audio")
    assert r.exit_code == 0, r.output
    for side, key in (("src", "audio"), ("tgt", "target_audio")):
        record = json.loads((tmp_path / side / "u1.durations.json").read_text())
        item = json.loads((data / "test.jsonl").read_text().splitlines()[1])
        frames = 1 + sf.info(data / item[key]).frames // MEL["hop_length"]
        assert record["total_frames"] == sum(record["frames"]) == frames
    r = invoke("align", *args, "--out", tmp_path / "none", "--audio-key", "other_audio")
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "item(s) not aligned" in r.output and "no audio" in r.output


# ------------------------------------------------------------------ plot
def test_plot(tmp_path):
    weights = np.eye(5, 4, dtype=np.float32)
    np.save(tmp_path / "a.npy", weights)
    r = invoke("plot", tmp_path / "a.npy", "--out", tmp_path / "a.png")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert_clean_failure(invoke("plot", tmp_path / "a.npy", "--out", tmp_path / "a.png"), "--force")
    np.save(tmp_path / "b.npy", np.zeros(3))
    assert_clean_failure(
        invoke("plot", tmp_path / "b.npy", "--out", tmp_path / "b.png"), "(T_dec, T_enc)"
    )
    r = invoke("plot", tmp_path / "a.npy", "--out", tmp_path / "a.jpg")  # the suffix's format
    assert r.exit_code == 0 and (tmp_path / "a.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    r = invoke("plot", tmp_path / "a.npy", "--out", tmp_path / "a.xyz")
    assert_clean_failure(r, "cannot write a .xyz image")
    assert not (tmp_path / "a.xyz").exists()


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("e.npy", np.zeros((0, 4), np.float32), ["e.npy", "(0, 4)"]),
        ("m.npy", b'{"id": "a"}\n', ["m.npy", "not a .npy file", "aligner align"]),
        ("z.durations.json", {"tokens": ["a"], "frames": [0]}, ["z.durations.json", "whole"]),
        ("n.durations.json", {"tokens": ["a", "b"], "frames": [-3, 4]}, ["n.durations.json"]),
        ("f.durations.json", {"tokens": [], "frames": []}, ["f.durations.json", "lists"]),
        ("l.durations.json", {"tokens": ["a", "b"], "frames": [2]}, ["2 tokens but 1 frame"]),
    ],
)
def test_plot_names_an_alignment_it_cannot_draw(tmp_path, name, content, words):
    """An empty matrix, a file that is no .npy, a record with no frames, negative frames
    or a token without its count: one line naming the file, and no (blank) PNG."""
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        np.save(path, content)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(json.dumps(content))
    out = tmp_path / "o.png"
    assert_clean_failure(invoke("plot", path, "--out", out), *words)
    assert not out.exists()


def test_python_api_synthesizes_as_the_command_line_does(ckpts, tmp_path):
    """`synthesize_text` (the README's Python API) gives the wave `aligner synthesize` writes."""
    from aligner.audio.io import load_audio
    from aligner.inference import Decoding, synthesize_text

    out = tmp_path / "cli.wav"
    text = "Hello there. How are you?"
    result = invoke(
        "synthesize",
        "--checkpoint",
        ckpts["tts"],
        "--text",
        text,
        "--out",
        out,
        "--griffin-lim-iters",
        2,
        "--max-length-ratio",
        2,
    )
    assert result.exit_code == 0, result.output
    torch.manual_seed(0)  # as the command's --seed 0
    speech = load_speech_model(ckpts["tts"], "synthesize")
    wave, utterances, sentences = synthesize_text(
        speech, text, Decoding(max_length_ratio=2, griffin_lim_iters=2)
    )
    assert sentences == ["Hello there.", "How are you?"] and len(utterances) == 2
    written, _ = load_audio(out, speech.mel_cfg.sample_rate)
    assert written.shape == wave.shape
    torch.testing.assert_close(written, wave, atol=1e-4, rtol=0)  # 16-bit file vs float


def test_teacher_forcing_is_a_measurement_the_same_every_time(ckpts):
    """The prenet's dropout (on for synthesis) is off while aligning known audio, and back
    on afterwards."""
    speech = load_speech_model(ckpts["tts"], "synthesize")
    ids = [speech.encode_text("a bee"), speech.encode_text("dab")]
    mels = [torch.randn(9, speech.mel_cfg.n_mels), torch.randn(6, speech.mel_cfg.n_mels)]
    first, second = speech.teacher_force(ids, mels), speech.teacher_force(ids, mels)
    for a, b in zip(first, second):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert speech.model.decoder.prenet.always_dropout


def test_check_precision_script_compares_the_fast_decoders(ckpts, tmp_path, capsys):
    """scripts/check_precision.py on a TTS checkpoint: fp32 first, then fp16 and int8 with
    their stop, last token and mel distortion against it."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "scripts" / "check_precision.py"
    spec = importlib.util.spec_from_file_location("check_precision", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    manifest = ckpts["root"] / "data_tts" / "test.jsonl"
    out = tmp_path / "p.json"
    assert (
        module.main([str(ckpts["tts"]), "--in", str(manifest), "--batch", "2", "--json", str(out)])
        == 0
    )
    rows = json.loads(out.read_text())
    assert list(rows) == ["fp32", "fp16", "int8"]
    assert rows["fp16"]["same_stop"] == 1.0  # the stop is disabled: every decode hits the limit
    assert 0.0 <= rows["fp16"]["mel_distortion_db"] <= rows["int8"]["mel_distortion_db"] + 1.0
    assert rows["fp32"]["frames"] == rows["int8"]["frames"]
