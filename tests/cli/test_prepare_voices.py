"""`aligner prepare espeak|festival OUT --voices V1 V2`: several voices after one option, as
the README writes it, the same as the option repeated or the voices in one quoted value."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from aligner.cli import main
from aligner.cli.prepare_synthesized import espeak, festival

SPELLINGS = [
    ["--voices", "en-us+m3,rate=150", "en-us+f2"],
    ["--voices", "en-us+m3,rate=150", "--voices", "en-us+f2"],
    ["--voices", "en-us+m3,rate=150 en-us+f2"],
]


@pytest.mark.parametrize("command", [espeak, festival], ids=["espeak", "festival"])
@pytest.mark.parametrize("spelling", SPELLINGS, ids=["several", "repeated", "quoted"])
def test_every_spelling_gives_the_same_voices(command, spelling, tmp_path):
    args = [str(tmp_path / "out"), *spelling, "--utterances", "3", "--seed", "2"]
    ctx = command.make_context(command.name, args)
    assert ctx.params["voices"] == ("en-us+m3,rate=150", "en-us+f2")
    assert ctx.params["out"] == tmp_path / "out"
    assert (ctx.params["utterances"], ctx.params["seed"]) == (3, 2)


def test_no_voices_is_the_default(tmp_path):
    ctx = espeak.make_context("espeak", [str(tmp_path / "out")])
    assert ctx.params["voices"] == ()


def test_voices_before_out_leave_out_missing_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["prepare", "espeak", "--voices", "en-us", str(tmp_path)])
    assert result.exit_code == 2
    assert "Missing argument 'OUT'" in result.output and "Traceback" not in result.output


def test_several_voices_build_a_corpus_that_cycles_through_them(tmp_path):
    out = tmp_path / "two"
    args = ["prepare", "espeak", str(out), "--utterances", "4", "--voices", "en-us", "en-us+f2"]
    result = CliRunner().invoke(main, [*args, "--workers", "1"])
    assert result.exit_code == 0, result.output

    items = [
        json.loads(line) for s in ("train", "valid", "test") for line in open(out / f"{s}.jsonl")
    ]
    assert len({it["speaker"] for it in items}) == 2


def test_a_parallel_pair_of_one_voice_is_refused(tmp_path):
    out = tmp_path / "pair"
    args = ["prepare", "espeak", str(out), "--parallel", "en-us", "en-us", "--utterances", "3"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and "give two different voices" in result.output
    assert not out.exists()
