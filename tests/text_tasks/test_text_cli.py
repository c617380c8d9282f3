"""`aligner g2p` and `aligner translate` on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from aligner.cli import main
from aligner.config import ExperimentConfig
from aligner.tasks.text import build

from .test_text_task import TINY


def save_checkpoint(task, path: Path, cfg: ExperimentConfig) -> Path:
    torch.save(
        {
            "model": task.model.state_dict(),
            "step": 0,
            "config": cfg.to_dict(),
            "symbols": task.symbols,
        },
        path,
    )
    return path


@pytest.fixture
def g2p_ckpt(g2p_dir, tmp_path):
    cfg = ExperimentConfig(task="g2p", model=dict(TINY), data={"lowercase": True})
    task = build(cfg, g2p_dir)
    return save_checkpoint(task, tmp_path / "g2p.pt", cfg), task


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_g2p_prints_the_same_as_the_library_and_writes_an_alignment(g2p_ckpt, tmp_path):
    ckpt, task = g2p_ckpt
    task.model.eval()
    png = tmp_path / "a.png"
    result = invoke("g2p", "--checkpoint", str(ckpt), "--beam", "3", "--alignment", str(png), "Bad")
    assert result.exit_code == 0, result.output
    from aligner.decode.beam import beam_search

    ids = torch.tensor([task.src_table.encode(list("bad"))])
    ((best,),) = beam_search(task.model, ids, torch.tensor([3]), 3, 1, 0.0)
    expected = " ".join(task.tgt_table.decode(best.tokens))
    assert result.output.splitlines()[0] == f"Bad\t{expected}"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = invoke("g2p", "--checkpoint", str(ckpt), "--alignment", str(png), "bad")
    assert again.exit_code == 1 and "--force" in again.output


def test_g2p_nbest_and_words_file(g2p_ckpt, tmp_path):
    ckpt, _ = g2p_ckpt
    words = tmp_path / "words.txt"
    words.write_text("abc\n\ntoe\n", encoding="utf-8")
    result = invoke(
        "g2p", "--checkpoint", str(ckpt), "--in", str(words), "--beam", "4", "--nbest", "3"
    )
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.output.splitlines()]
    assert [r[0] for r in rows] == ["abc"] * 3 + ["toe"] * 3
    scores = [float(r[2]) for r in rows[:3]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["zq!"], "argument 1 'zq!': the model has no symbol 'z' at position 1, 'q' at"),
        ([], "no words given"),
        (["--beam", "2", "--nbest", "3", "ab"], "--nbest"),
    ],
)
def test_g2p_user_errors_are_one_line(g2p_ckpt, args, message):
    ckpt, _ = g2p_ckpt
    result = invoke("g2p", "--checkpoint", str(ckpt), *args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_g2p_batch_reports_bad_words_and_converts_the_rest(g2p_ckpt, tmp_path):
    """A bad line is named by file and line and skipped; every good word is still
    converted, blank lines are ignored, the skipped count ends it with status 1."""
    ckpt, _ = g2p_ckpt
    words = tmp_path / "words.txt"
    words.write_text("abc\n\nto-e\nToe\nx1\n", encoding="utf-8")
    result = invoke("g2p", "--checkpoint", str(ckpt), "--in", str(words), "--beam", "2")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.output.splitlines()
    assert [line.split("\t")[0] for line in lines if "\t" in line] == ["abc", "Toe"]
    assert f"{words}:3 'to-e': the model has no symbol '-' at position 3" in result.output
    assert f"{words}:5 'x1'" in result.output and "it knows abcdeot;" in result.output
    assert lines[-1] == "Error: skipped 2 of 4 inputs (reported above)"
    alone = invoke("g2p", "--checkpoint", str(ckpt), "--beam", "2", "abc", "Toe")
    assert result.output.count("abc\t") == 1 and alone.exit_code == 0
    assert [r for r in lines if "\t" in r] == alone.output.splitlines()


def test_g2p_blank_argument_is_reported_and_counted(g2p_ckpt):
    """An empty argument (say an unset shell variable) is a bad word, not silence."""
    ckpt, _ = g2p_ckpt
    result = invoke("g2p", "--checkpoint", str(ckpt), "--beam", "2", "abc", "  ", "toe")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.output.splitlines()
    assert [line.split("\t")[0] for line in lines if "\t" in line] == ["abc", "toe"]
    assert "Error: argument 2 is blank; give a word there; skipped" in lines
    assert lines[-1] == "Error: skipped 1 of 3 inputs (reported above)"
    only = invoke("g2p", "--checkpoint", str(ckpt), "")
    assert only.exit_code == 1 and "no words given" in only.output


def test_g2p_letters_with_accents_fall_back_to_the_plain_letter(g2p_ckpt):
    ckpt, _ = g2p_ckpt
    accented = invoke("g2p", "--checkpoint", str(ckpt), "Bé", "TOË")
    plain = invoke("g2p", "--checkpoint", str(ckpt), "be", "toe")
    assert accented.exit_code == 0, accented.output
    assert [r.split("\t")[1] for r in accented.output.splitlines()] == [
        r.split("\t")[1] for r in plain.output.splitlines()
    ]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"id": "a", "source": "abc"}\n{oops\n', ["m.jsonl:2: not valid JSON"]),
        ("\n", ["m.jsonl holds no items"]),
        ('{"id": "a", "target": "AH0"}\n', ["items without 'source'"]),
    ],
)
def test_g2p_manifest_it_cannot_read_is_one_line(g2p_ckpt, tmp_path, content, words):
    """A --in manifest with a bad line or no item was a ManifestError traceback."""
    ckpt, _ = g2p_ckpt
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(content, encoding="utf-8")
    result = invoke("g2p", "--checkpoint", str(ckpt), "--in", str(manifest))
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert all(w in result.output for w in words), result.output


def test_g2p_refuses_a_negative_length_penalty_at_the_command_line(g2p_ckpt):
    """--alpha -1 reached the beam search and came back as a ValueError traceback."""
    ckpt, _ = g2p_ckpt
    result = invoke("g2p", "--checkpoint", str(ckpt), "--alpha", "-1", "abc")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'--alpha'" in result.output


def test_wrong_task_and_missing_checkpoint(g2p_ckpt, tmp_path):
    ckpt, _ = g2p_ckpt
    result = invoke("translate", "--checkpoint", str(ckpt), "--text", "ab")
    assert result.exit_code == 1 and "'g2p' checkpoint" in result.output
    result = invoke("g2p", "--checkpoint", str(tmp_path / "none.pt"), "ab")
    assert result.exit_code == 1 and "does not exist" in result.output


def test_g2p_ensemble_of_several_checkpoints(g2p_ckpt, g2p_dir, tmp_path):
    """Repeated --checkpoint decodes an ensemble: two members of different sizes give
    the library's ensemble beam search; a member with other symbol tables is refused."""
    from aligner.decode.beam import beam_search
    from aligner.decode.ensemble import Ensemble

    ckpt, task = g2p_ckpt
    torch.manual_seed(11)
    cfg = ExperimentConfig(
        task="g2p", model={**TINY, "dec_hidden": 20, "decoder": "luong"}, data={"lowercase": True}
    )
    other = build(cfg, g2p_dir)
    other_ckpt = save_checkpoint(other, tmp_path / "other.pt", cfg)
    result = invoke(
        "g2p", "--checkpoint", str(ckpt), "--checkpoint", str(other_ckpt), "--beam", "3", "toad"
    )
    assert result.exit_code == 0, result.output
    ensemble = Ensemble([task.model.eval(), other.model.eval()])
    ids = torch.tensor([task.src_table.encode(list("toad"))])
    ((best,),) = beam_search(ensemble, ids, torch.tensor([4]), 3, 1, 0.0)
    assert result.output.strip() == "toad\t" + " ".join(task.tgt_table.decode(best.tokens))

    from .conftest import make_g2p

    cfg = ExperimentConfig(task="g2p", model=dict(TINY), data={"lowercase": False})
    stranger = build(cfg, make_g2p(tmp_path / "other_data", n_train=40, seed=3))
    stranger_ckpt = save_checkpoint(stranger, tmp_path / "stranger.pt", cfg)
    result = invoke("g2p", "--checkpoint", str(ckpt), "--checkpoint", str(stranger_ckpt), "ab")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "stranger.pt cannot join an ensemble" in result.output
    assert "lowercase" in result.output


@pytest.fixture
def nmt_ckpt(tmp_path):
    from .conftest import write_jsonl

    pairs = [("The cat sees a dog.", "Le chat voit un chien."), ("A dog eats.", "Un chien mange.")]
    items = [{"id": str(i), "source": s, "target": t} for i, (s, t) in enumerate(pairs * 3)]
    folder = tmp_path / "nmt"
    folder.mkdir()
    write_jsonl(folder / "train.jsonl", items)
    write_jsonl(folder / "valid.jsonl", items[:2])
    data = {"src_split": "tokens", "tgt_split": "tokens", "lowercase": True, "min_freq": 2}
    data["lowercase_target"] = True
    cfg = ExperimentConfig(task="nmt", model={**TINY, "decoder": "luong"}, data=data)
    task = build(cfg, folder)
    return save_checkpoint(task, tmp_path / "nmt.pt", cfg), task


def test_translate_maps_unknown_words_and_reads_manifests(nmt_ckpt, tmp_path):
    ckpt, task = nmt_ckpt
    result = invoke("translate", "--checkpoint", str(ckpt), "--text", "The zebra sees a cat.")
    assert result.exit_code == 0, result.output
    assert result.output.count("\n") == 1  # one line per input, even an empty translation
    # detokenized text: its tokens, space marks aside, are the model's target symbols
    from aligner.text.splitting import splitter

    words = splitter("tokens")(result.output.replace("<unk>", " "))
    assert {w.lstrip("▁") for w in words} <= {s.lstrip("▁") for s in task.tgt_table.symbols}
    manifest = tmp_path / "in.jsonl"
    manifest.write_text('{"id": "a", "source": "A dog."}\n{"id": "b", "source": "The cat."}\n')
    result = invoke("translate", "--checkpoint", str(ckpt), "--in", str(manifest), "--nbest", "2")
    assert result.exit_code == 0, result.output
    assert [r.split("\t")[:2] for r in result.output.splitlines()] == [
        ["A dog.", "1"],
        ["A dog.", "2"],
        ["The cat.", "1"],
        ["The cat.", "2"],
    ]
    lines = tmp_path / "in.txt"
    lines.write_text("A dog.\n\nThe cat.\n", encoding="utf-8")
    result = invoke("translate", "--checkpoint", str(ckpt), "--in", str(lines))
    assert result.exit_code == 0, result.output
    out = result.output.split("\n")
    assert len(out) == 4 and out[1] == "" and out[3] == ""  # a line out per line in
    one = invoke("translate", "--checkpoint", str(ckpt), "--text", "The cat.")
    assert out[2] == one.output.strip()
    empty = invoke("translate", "--checkpoint", str(ckpt), "--text", "  ")
    assert empty.exit_code == 1 and "no text given" in empty.output


def test_a_checkpoint_from_before_the_space_marks_is_refused(nmt_ckpt, tmp_path):
    """Its tokens table has no ▁ (the old split): its output would lose its spaces."""
    ckpt, _ = nmt_ckpt
    state = torch.load(ckpt, weights_only=False)
    for side in ("src", "tgt"):
        old: list[str] = []
        for sym in state["symbols"][side]["symbols"]:
            plain = sym.replace("▁", "")
            while plain in old:
                plain += "~"
            old.append(plain)
        state["symbols"][side]["symbols"] = old
    torch.save(state, tmp_path / "old.pt")
    result = invoke("translate", "--checkpoint", str(tmp_path / "old.pt"), "--text", "A dog.")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "old.pt: its source tokens carry no '▁' space marks" in result.output
    assert invoke("translate", "--checkpoint", str(ckpt), "--text", "A dog.").exit_code == 0


def test_decoding_defaults_come_from_the_recipe_and_options_override_them(g2p_dir, tmp_path):
    """A recipe's model.max_len_ratio and length_penalty are the command's defaults."""
    from aligner.decode.beam import beam_search

    model = {**TINY, "max_len_ratio": 0.5, "length_penalty": 0.6}
    cfg = ExperimentConfig(task="g2p", model=model, data={"lowercase": True})
    task = build(cfg, g2p_dir)
    ckpt = save_checkpoint(task, tmp_path / "short.pt", cfg)
    ids = torch.tensor([task.src_table.encode(list("abcdeo"))])

    def library(alpha, ratio):
        ((best,),) = beam_search(task.model.eval(), ids, torch.tensor([6]), 3, 1, alpha, ratio)
        return "abcdeo\t" + " ".join(task.tgt_table.decode(best.tokens))

    result = invoke("g2p", "--checkpoint", str(ckpt), "--beam", "3", "abcdeo")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == library(0.6, 0.5)
    assert len(result.output.split("\t")[1].split()) <= 2  # ceil(0.5 * 6) tokens with </s>
    args = ["--beam", "3", "--alpha", "0", "--max-length-ratio", "3", "abcdeo"]
    result = invoke("g2p", "--checkpoint", str(ckpt), *args)
    assert result.exit_code == 0 and result.output.strip() == library(0.0, 3.0)
    result = invoke("g2p", "--checkpoint", str(ckpt), "--max-length-ratio", "0", "ab")
    assert result.exit_code == 2 and "--max-length-ratio" in result.output
    # the old spelling still works, with a note on stderr
    old = CliRunner().invoke(
        main,
        [
            "g2p",
            "--checkpoint",
            str(ckpt),
            "--beam",
            "3",
            "--alpha",
            "0",
            "--max-len-ratio",
            "3",
            "abcdeo",
        ],
    )
    assert old.exit_code == 0 and old.stdout.strip() == library(0.0, 3.0)
    assert "--max-len-ratio is now spelled --max-length-ratio" in old.stderr


def test_python_api_converts_as_the_command_line_does(g2p_ckpt):
    """`load_text_model(...).convert` (the README's Python API) prints what `aligner g2p` does."""
    from aligner.inference import load_text_model

    ckpt, _ = g2p_ckpt
    model = load_text_model([ckpt], "g2p")
    outputs = model.convert(["bad", "toe"], beam=3, nbest=2)
    result = invoke("g2p", "--checkpoint", str(ckpt), "--beam", "3", "--nbest", "2", "bad", "toe")
    rows = [line.split("\t") for line in result.output.splitlines()]
    assert [r[3] for r in rows] == [text for texts in outputs for text in texts]
