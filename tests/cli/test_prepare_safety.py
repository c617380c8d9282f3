"""`aligner prepare` with careless input: LJSpeech lines named by their id (also when not
UTF-8), a byte-order mark, extra columns, silent or far too long clips (kept, with a
warning), unknown eSpeak variants, and the leftovers of an interrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from tests.cli.test_prepare_cli import all_items, invoke
from tests.data import fixtures


def test_ljspeech_byte_order_mark_does_not_reach_the_first_id(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJ", n=4)
    meta = corpus / "metadata.csv"
    meta.write_bytes(b"\xef\xbb\xbf" + meta.read_bytes())
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "LJ001-0001" in {item["id"] for item in all_items(tmp_path / "out")}


def test_ljspeech_bad_lines_are_named_by_id(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJ", n=4)
    with open(corpus / "metadata.csv", "ab") as f:
        f.write(b"LJ009-0001|one|two|three\n")  # a column too many
        f.write(b"LJ009-0002|caf\xe9|caf\xe9\n")  # latin-1: the id is still ASCII
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "metadata.csv:5: malformed line of LJ009-0001: 4 field(s), expected 3" in result.output
    assert "metadata.csv:6: undecodable line of LJ009-0002" in result.output
    assert not (tmp_path / "out").exists()


def test_ljspeech_warns_about_silent_and_overlong_clips(tmp_path: Path) -> None:
    corpus = fixtures.ljspeech(tmp_path / "LJ", n=4)
    sf.write(corpus / "wavs" / "LJ001-0003.wav", np.zeros(8000, np.float32), 16000)
    fixtures.tone(corpus / "wavs" / "LJ001-0004.wav", 9.0, 200)  # 9 s for 17 characters
    result = invoke("ljspeech", corpus, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "2 warning(s)" in result.output
    assert "LJ001-0003" in result.output and "silent" in result.output
    assert "LJ001-0004" in result.output and "s/char" in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert len(summary["warnings"]) == 2 and len(all_items(tmp_path / "out")) == 4


def test_unknown_espeak_variant_is_refused_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "es"
    result = invoke("espeak", out, "--utterances", "2", "--voices", "en-us+nosuchvariant")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "unknown variant 'nosuchvariant'" in result.output
    assert not out.exists() or not any(out.iterdir())


def test_an_interrupted_prepare_is_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "wavs").mkdir(parents=True)
    (out / "wavs" / "u0.wav").write_bytes(b"keep")
    corpus = fixtures.ljspeech(tmp_path / "LJ", n=4)
    result = invoke("ljspeech", corpus, out)
    assert result.exit_code == 1 and "wavs already exists; pass --force" in result.output
    (out / "wavs" / "u0.wav").unlink()
    (out / "summary.json").write_text("{}")
    result = invoke("ljspeech", corpus, out)
    assert result.exit_code == 1 and "summary.json already exists" in result.output
    assert invoke("ljspeech", corpus, out, "--force").exit_code == 0
