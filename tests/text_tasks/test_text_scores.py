"""`aligner score` for the text tasks: G2P error rates from `aligner g2p`'s plain and
--nbest lines, BLEU from one translation a line; a byte-order mark, other line counts,
empty output and non-UTF-8 text are read or named, never scored as something else."""

from __future__ import annotations

import json

import pytest

from aligner.evaluation import EvaluationError
from aligner.evaluation.text import score_g2p, score_nmt


def _manifest(path, pairs):
    lines = [
        json.dumps({"id": f"u{i}", "source": s, "target": t}) for i, (s, t) in enumerate(pairs)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_g2p_scores_the_rank_1_lines_of_nbest_output_as_the_plain_ones(tmp_path):
    ref = _manifest(tmp_path / "ref.jsonl", [("cat", "K AE1 T"), ("dog", "D AO1 G")])
    plain = tmp_path / "plain.txt"
    plain.write_text("\ufeffcat\tK AE1 T\ndog\tD AO1 K\n", encoding="utf-8")  # a BOM first
    nbest = tmp_path / "nbest.txt"
    nbest.write_text(
        "cat\t1\t-0.1\tK AE1 T\ncat\t2\t-2.0\tK AA1 T\ndog\t1\t-0.2\tD AO1 K\ndog\t2\t-3\tD AO1 G\n"
    )
    assert score_g2p(plain, ref) == score_g2p(nbest, ref)
    assert score_g2p(plain, ref)["wer"] == pytest.approx(50.0)
    bad = tmp_path / "bad.txt"
    bad.write_text("cat\tx\ty\n")
    with pytest.raises(EvaluationError, match=r"bad.txt:1: expected 'word<TAB>phonemes'"):
        score_g2p(bad, ref)


def test_nmt_names_nbest_output_empty_output_and_bytes_that_are_not_utf8(tmp_path):
    ref = _manifest(
        tmp_path / "ref.jsonl", [("a", "the cat sat on the mat"), ("b", "a dog ran in the park")]
    )
    same = tmp_path / "same.txt"
    same.write_text("\ufeffthe cat sat on the mat\na dog ran in the park\n", encoding="utf-8")
    assert score_nmt(same, ref)["bleu"] == 100.0  # the BOM is no part of the first line
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("a\t1\t-0.1\tthe cat sat\na\t2\t-1\tthe cat\nb\t1\t-0.1\ta dog ran\n")
    with pytest.raises(EvaluationError, match="looks like --nbest output"):
        score_nmt(nbest, ref)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(EvaluationError, match="every line is empty"):
        score_nmt(empty, ref)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("the cat sat\na d\xf6g ran\n".encode("latin-1"))
    with pytest.raises(EvaluationError, match=r"latin.txt:2 is not UTF-8"):
        score_nmt(latin, ref)


def test_input_lines_of_a_file_with_a_byte_order_mark(tmp_path):
    """`aligner g2p --in words.txt` and `translate --in`: a Windows file's mark made the
    first word unknown (``'\\ufeffhello'``) and skipped it."""
    from aligner.inference.text_io import read_inputs

    words = tmp_path / "words.txt"
    words.write_text("\ufeffhello\nworld\n", encoding="utf-8")
    got = read_inputs([], words, "words", "as arguments")
    assert [inp.text for inp in got] == ["hello", "world"]
