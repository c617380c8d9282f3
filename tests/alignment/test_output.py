"""aligner.inference.alignment_files: per-utterance metrics, the files of `aligner align` and
the suspect summary."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from aligner.alignment.record import resolve
from aligner.inference.alignment_files import (
    Summary,
    SuspectThresholds,
    utterance_metrics,
    write_utterance,
)

from .test_record import hard_alignment, utt


def test_metrics_and_suspects_from_the_core():
    diag = hard_alignment([0, 0, 1, 1, 2, 2, 3, 3], 4)
    skip = hard_alignment([0, 0, 0, 0, 3, 3, 3, 3], 4)  # tokens 1, 2 skipped
    repeat = hard_alignment([0, 1, 2, 1, 2, 3, 3, 3], 4)  # back to 1 and 2
    batch = torch.tensor(np.stack([diag, skip, repeat]))
    lengths = torch.tensor([8, 8, 8])
    m = utterance_metrics(batch, lengths, torch.tensor([4, 4, 4]))
    assert m[0]["focus_rate"] == pytest.approx(1.0)
    assert (m[0]["skipped"], m[1]["skipped"], m[2]["repeated"]) == (0, 2, 2)
    summary = Summary(SuspectThresholds())
    for name, metrics in zip(["diag", "skip", "repeat"], m):
        summary.add(name, metrics)
    assert [u["id"] for u in summary.suspects] == ["skip", "repeat"]
    assert summary.suspects[0]["suspect"] == ["2 skipped"]
    table = summary.table()
    assert "3 utterances, 2 suspect" in table and "2 repeated" in table
    assert summary.to_dict()["mean"]["skipped"] == pytest.approx(2 / 3, abs=1e-5)


def test_skips_can_be_left_out_of_suspicion():
    m = {"focus_rate": 0.9, "skipped": 5, "repeated": 0}
    assert SuspectThresholds().reasons(m) == ["5 skipped"]
    mean = {**m, "skipped": 0.25}  # a long recording's mean per sentence: not "0 skipped"
    assert SuspectThresholds().reasons(mean) == ["0.25 skipped"]
    assert SuspectThresholds(max_skips=None).reasons(m) == []
    assert SuspectThresholds(max_skips=None).reasons({**m, "repeated": 1}) == ["1 repeated"]


def test_low_focus_is_suspect():
    reasons = SuspectThresholds(min_focus=0.5).reasons(
        {"focus_rate": 0.3, "skipped": 0, "repeated": 0}
    )
    assert reasons == ["focus 0.30 < 0.5"]


def test_write_utterance_files_and_no_overwrite(tmp_path):
    u = utt([0, 1, 1, 2], "abc", n_frames=4)
    u.metrics = {"focus_rate": 1.0}
    rec = write_utterance(resolve(u), tmp_path)
    saved = json.loads((tmp_path / "u1.durations.json").read_text())
    assert saved == rec and saved["frames"] == [1, 2, 1]
    assert np.array_equal(np.load(tmp_path / "u1.npy"), u.weights)
    assert (tmp_path / "u1.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "u1.TextGrid").exists()
    with pytest.raises(FileExistsError, match="--force"):
        write_utterance(resolve(u), tmp_path)
    write_utterance(resolve(u), tmp_path, force=True)
