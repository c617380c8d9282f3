"""What training prints: the bar follows the time budget, plain lines off a terminal, and
one line per validation."""

from __future__ import annotations

import io
from dataclasses import replace

import torch
from test_trainer import CFG
from tiny_task import TinyTask

from aligner.train.progress import Progress, format_metrics
from aligner.train.trainer import Trainer


def test_total_follows_the_time_budget(monkeypatch):
    cfg = replace(CFG, max_steps=20_000, max_minutes=20.0)
    progress = Progress(cfg, initial=0, enabled=False, start=0.0)
    monkeypatch.setattr("aligner.train.progress.time.monotonic", lambda: 600.0)  # 10 min
    progress.update(442)
    assert progress.total() == (884, True)  # 442 more steps in the 10 minutes left
    progress.update(15_000)
    assert progress.total() == (20_000, False)  # max_steps comes first
    assert Progress(CFG, 0, False).total() == (CFG.max_steps, False)


def test_plain_lines_off_a_terminal(monkeypatch):
    stream = io.StringIO()
    cfg = replace(CFG, max_steps=20_000, max_minutes=20.0)
    progress = Progress(cfg, initial=0, enabled=True, start=0.0, stream=stream, plain_every=30)
    now = [10.0]
    monkeypatch.setattr("aligner.train.progress.time.monotonic", lambda: now[0])
    progress.update(5, loss=0.5)  # at 10 s: too early for a line
    now[0] = 40.0
    progress.update(20, loss=0.25)
    progress.validation(20, {"focus_rate": 0.8125, "loss": 0.5, "word_boundary_ms": 23.25})
    progress.close()
    lines = stream.getvalue().splitlines()
    assert progress.bar is None and len(lines) == 2
    assert lines[0].startswith("train step 20/600 (time budget 20 min), 0.7 min, 0.50 steps/s")
    assert "loss 0.2500" in lines[0] and "ETA 0:19:20" in lines[0]
    assert lines[1] == (
        "valid step 20 (0.7 min): loss 0.5, focus_rate 0.8125, word_boundary_ms 23.25"
    )
    assert max(map(len, lines)) < 200


def test_a_line_per_validation(tmp_path, capsys):
    torch.manual_seed(0)
    trainer = Trainer(TinyTask(), replace(CFG, max_steps=10, progress=True), tmp_path)
    trainer.fit()
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("valid step")]
    assert [line.split()[2] for line in lines] == ["5", "10"]
    assert "loss " in lines[0]


def test_format_metrics_puts_loss_first():
    metrics = {"b": 1.0, "infer/x": 2.0, "entropy": 1.0, "loss": 3.0, "infer/stopped": 0.5}
    assert format_metrics(metrics) == "loss 3, b 1, infer/stopped 0.5"
