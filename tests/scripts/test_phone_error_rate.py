"""scripts/phone_error_rate.py and `aligner.inference.recognizer`: the phone error rate of
recordings against their texts, items left out one line each, and (end to end: `aligner
train` of the shipped recipe on a tiny corpus, then the script) a recognizer that tells
the matching recordings from noise and from a wrong text."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import phone_error_rate as script
import pytest
import soundfile as sf
import torch
from click.testing import CliRunner

from aligner.audio.features import MelConfig
from aligner.cli import main as aligner
from aligner.data.manifest import read_manifest, write_manifest
from aligner.inference import recognizer
from aligner.inference.recognizer import CONTROLS, PERReport, control, phone_error_rate
from aligner.text.metrics import edit_distance

SR = 8000
# each letter a tone of its own; a space a short silence
TONES = {"a": 300.0, "b": 520.0, "c": 800.0, "d": 1250.0, "e": 1900.0}
MEL = {
    "sample_rate": SR,
    "n_fft": 256,
    "win_length": 256,
    "hop_length": 80,
    "n_mels": 24,
    "f_max": 4000.0,
}


def tones(text: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pieces = []
    for ch in text:
        n = int((0.03 if ch == " " else 0.07) * SR)
        t = np.arange(n) / SR
        wave = 0.3 * np.sin(2 * np.pi * TONES[ch] * t) if ch in TONES else np.zeros(n)
        pieces.append(wave * np.hanning(n) ** 0.2 + 0.003 * rng.standard_normal(n))
    return np.concatenate(pieces).astype(np.float32)


def tone_corpus(root: Path, n_train: int = 32, n_valid: int = 6) -> Path:
    """Texts of random words over `TONES`, spoken as tones: ``train.jsonl``,
    ``valid.jsonl`` under `root`."""
    rng = np.random.default_rng(0)
    (root / "wavs").mkdir(parents=True)
    items = []
    for i in range(n_train + n_valid):
        words = ["".join(rng.choice(list(TONES), rng.integers(1, 4))) for _ in range(3)]
        text = " ".join(words)
        sf.write(root / "wavs" / f"u{i}.wav", tones(text, i), SR)
        items.append({"id": f"u{i}", "audio": str(root / "wavs" / f"u{i}.wav"), "text": text})
    write_manifest(root / "train.jsonl", items[:n_train])
    write_manifest(root / "valid.jsonl", items[n_train:])
    return root


class StubRecognizer:
    """Hears each recording's file stem as the sounds of item ``hears[stem]``."""

    def __init__(self, hears: dict[str, list[str]]):
        self.hears = hears

    def reference(self, text: str) -> list[str]:
        return [c for c in text if c != " "]

    def load(self, path):
        if not Path(path).is_file():
            raise ValueError(f"{path}: file not found")
        return Path(path).stem

    def recognize(self, wavs, batch_size=16):
        return [self.hears[w] for w in wavs]


def test_the_rate_sums_edits_over_phones_and_leaves_bad_items_out(tmp_path, monkeypatch) -> None:
    for name in ("u0", "u1"):
        (tmp_path / f"{name}.wav").write_bytes(b"")
    items = [
        {"id": "u0", "text": "ab cd", "audio": str(tmp_path / "u0.wav")},
        {"id": "u1", "text": "bad", "audio": str(tmp_path / "u1.wav")},
        {"id": "u2", "text": "cab", "audio": str(tmp_path / "u2.wav")},  # no such file
        {"id": "u3", "text": " ", "audio": str(tmp_path / "u0.wav")},  # no sounds
        {"id": "u4", "text": "ace"},  # no audio
    ]
    hears = {"u0": list("abd"), "u1": list("bbad")}
    report = phone_error_rate(StubRecognizer(hears), items)
    assert report.items == 2 and report.phones == 4 + 3
    assert report.edits == edit_distance("abd", "abcd") + edit_distance("bbad", "bad") == 2
    assert report.per == pytest.approx(100 * 2 / 7)
    assert [b.split(":")[0] for b in report.bad] == ["u2", "u3", "u4"]
    assert "no 'audio' in the manifest item" in report.bad[2]
    # a folder of ID.wav in place of the manifest's audio
    folder = phone_error_rate(StubRecognizer(hears), items[:2], audio_dir=tmp_path)
    assert folder.per == report.per and folder.items == 2
    assert PERReport().per == 0.0 and PERReport().items == 0
    # recognized a few recordings at a time: the same
    monkeypatch.setattr(recognizer, "IN_MEMORY", 1)
    again = phone_error_rate(StubRecognizer(hears), items)
    assert (again.edits, again.phones, again.scored, again.bad) == (
        report.edits,
        report.phones,
        report.scored,
        report.bad,
    )


def test_the_controls_keep_what_they_should() -> None:
    model = SimpleNamespace(mel_cfg=MelConfig(**MEL), device=torch.device("cpu"))
    items = [{"id": f"u{i}", "text": t} for i, t in enumerate(["ab", "cd", "e"])]
    moved, none = control(model, items, "wrong-text")
    assert [it["text"] for it in moved] == ["cd", "e", "ab"] and none is None
    assert [it["text"] for it in items] == ["ab", "cd", "e"]  # the items are not changed
    wav = torch.from_numpy(tones("abc de", 0))
    _, noise = control(model, items, "noise")
    fake = noise(wav)
    assert fake.shape == wav.shape and abs(fake.std() / wav.pow(2).mean().sqrt() - 1) < 0.05
    assert abs(float((fake[:-1] * fake[1:]).mean() / fake.var())) < 0.05  # white
    _, griffin_lim = control(model, items, "griffin-lim")
    assert abs(griffin_lim(wav).numel() - wav.numel()) <= MEL["hop_length"]
    with pytest.raises(ValueError, match="unknown control 'hum'; choose one of griffin-lim"):
        control(model, items, "hum")
    choices = next(p for p in script.main.params if p.name == "control").type.choices
    assert tuple(choices) == CONTROLS


def run(command, *args):
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)


SMALL = [
    "data.tokenizer=chars",
    *(f"data.mel.{k}={v}" for k, v in MEL.items()),
    "data.stats_items=0",
    "model.channels=48",
    "model.conv_layers=2",
    "model.spec_augment.freq_masks=0",
    "model.spec_augment.time_masks=0",
    "train.batch_size=8",
    "train.max_steps=120",
    "train.max_minutes=null",
    "train.lr=0.004",
    "train.eval_every=60",
    "train.checkpoint_every=60",
    "train.progress=false",
]


@pytest.mark.slow
def test_a_trained_recognizer_tells_speech_from_noise_and_from_a_wrong_text(
    tmp_path: Path,
) -> None:
    data = tone_corpus(tmp_path / "data")
    sets = [arg for s in SMALL for arg in ("--set", s)]
    exp = tmp_path / "exp"
    res = run(
        aligner, "train", "recipes/recognize/ctc_small.yaml", "--data", data, "--out", exp, *sets
    )
    assert res.exit_code == 0, res.output
    assert "stopped at step 120" in res.output

    valid = data / "valid.jsonl"
    out = run(script.main, "--checkpoint", exp, "--manifest", valid, "--json", tmp_path / "m.json")
    assert out.exit_code == 0, out.output
    matching = json.loads((tmp_path / "m.json").read_text())["totals"]
    assert matching["items"] == 6 and matching["per"] < 25, out.output
    assert f"PER {matching['per']:.2f}% (" in out.output and "over 6 items" in out.output
    again = run(
        script.main, "--checkpoint", exp, "--manifest", valid, "--json", tmp_path / "m.json"
    )
    assert again.exit_code == 1 and "exists; pass --force" in again.output
    broken = data / "broken.jsonl"  # a bad line is told and counted; the items still scored
    broken.write_text(valid.read_text() + "{not json\n")
    res = run(script.main, "--checkpoint", exp, "--manifest", broken)
    assert res.exit_code == 0 and "broken.jsonl:7: not valid JSON" in res.output, res.output
    assert "over 6 items; 1 left out" in res.output

    # white noise as loud as the tones, under each item's name (a folder of ID.wav)
    noise = tmp_path / "noise"
    noise.mkdir()
    rng = np.random.default_rng(1)
    items = read_manifest(valid)
    for item in items[1:]:  # the first has no file: left out, one line
        n = sf.info(item["audio"]).frames
        sf.write(noise / f"{item['id']}.wav", 0.2 * rng.standard_normal(n).astype("f4"), SR)
    sf.write(noise / "stray.wav", np.zeros(SR, "f4"), SR)  # named by no item: told, not scored
    res = run(script.main, "--checkpoint", exp, "--manifest", valid, "--audio-dir", noise)
    assert res.exit_code == 0, res.output
    assert "not scored: 1 file(s) of" in res.output and "stray.wav" in res.output
    assert (
        f"left out: {items[0]['id']}: " in res.output and "over 5 items; 1 left out" in res.output
    )
    assert float(res.output.split("PER ")[1].split("%")[0]) > matching["per"] + 40

    # the right recordings against the texts of other items; noise and the Griffin-Lim
    # floor made by the script
    rates = {}
    for condition in CONTROLS:
        res = run(script.main, "--checkpoint", exp, "--manifest", valid, "--control", condition)
        assert res.exit_code == 0, res.output
        rates[condition] = float(res.output.split("PER ")[1].split("%")[0])
    assert rates["wrong-text"] > matching["per"] + 40 and rates["noise"] > matching["per"] + 40
    assert rates["griffin-lim"] < 30, rates


def test_the_script_refuses_a_checkpoint_that_is_no_recognizer_in_one_line(tmp_path: Path) -> None:
    res = run(script.main, "--checkpoint", tmp_path, "--manifest", __file__)
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.startswith("Error: ") and len(res.output.strip().splitlines()) == 1
    assert script.main.name and "--audio-dir" in run(script.main, "--help").output
    assert "--audio-dir" in run(script.main, "-h").output


@pytest.mark.parametrize(("option", "value"), [("--batch-size", "0"), ("--device", "foo"),
                                               ("--limit", "-1")])  # fmt: skip
def test_a_bad_option_value_is_one_usage_line(tmp_path: Path, option: str, value: str) -> None:
    res = run(script.main, "--checkpoint", tmp_path, "--manifest", __file__, option, value)
    assert res.exit_code == 2 and f"Invalid value for '{option}'" in res.output
    assert "Traceback" not in res.output


def test_the_vc_table_gains_each_rows_phone_error_rate(tmp_path) -> None:
    """`set_per`: each row's audio (the source row: its source audio) against the texts,
    edits summed over phones; an item the recognizer could not score is left out."""
    from aligner.evaluation.vc import VcTable, markdown, set_per

    for name in ("s0", "s1", "c0", "c1"):
        (tmp_path / f"{name}.wav").write_bytes(b"")
    items = [
        {"id": "u0", "text": "abc", "audio": str(tmp_path / "c0.wav")},
        {"id": "u1", "text": "dab", "audio": str(tmp_path / "c1.wav")},
        {"id": "u2", "text": "cab", "audio": str(tmp_path / "gone.wav")},
    ]
    for k, item in enumerate(items):
        item["source_audio"] = str(tmp_path / f"s{min(k, 1)}.wav")
    row = {"mcd": 5.0, "duration_diff": 0.0, "duration_ratio": 1.0}
    rows = {name: [{"id": it["id"], **row} for it in items] for name in ("source", "fastvc")}
    table = VcTable(items=rows, sources={"source": items, "fastvc": items})
    hears = {"s0": list("xyz"), "s1": list("dab"), "c0": list("abc"), "c1": list("da")}
    report = phone_error_rate(StubRecognizer(hears), table.sources["fastvc"])
    assert report.bad and report.bad[0].startswith("u2")
    set_per(table, "fastvc", report.scored)
    assert table.totals["fastvc"]["per"] == pytest.approx(100 * 1 / 6)
    heard = phone_error_rate(StubRecognizer(hears), items, audio_key="source_audio")
    set_per(table, "source", heard.scored)
    # u0 3 substitutions of 3; u1 none; u2 is heard as s1 too: "dab" against "cab", one
    assert table.totals["source"]["per"] == pytest.approx(100 * 4 / 9)
    text = markdown(table)
    assert "PER %" in text and "| fastvc | 3 |" in text and "16.67 |" in text
    with pytest.raises(Exception, match="no system named 'other'"):
        set_per(table, "other", report.scored)
