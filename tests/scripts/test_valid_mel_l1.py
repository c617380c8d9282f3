"""scripts/valid_mel_l1.py: the validation split's L1 of a run's output mel, item by item
over the valid frames, against a stand-in task whose output is known."""

from __future__ import annotations

import types

import pytest
import torch
import valid_mel_l1


class _Model(torch.nn.Module):
    def forward(self, mel):
        return mel + 0.5  # every value half off


def _task(items):
    def collate(examples):
        n = max(len(e) for e in examples)
        mel = torch.zeros(len(examples), n, 3)
        mask = torch.zeros(len(examples), n, dtype=torch.bool)
        for i, e in enumerate(examples):
            mel[i, : len(e)], mask[i, : len(e)] = e, True
        return {"mel": mel, "mask": mask}

    def forward(model, batch):
        out = model(batch["mel"]).masked_fill(~batch["mask"][..., None], 9.0)
        return types.SimpleNamespace(mel_post=out, mel_mask=batch["mask"])

    return types.SimpleNamespace(valid_set=items, collate=collate, forward=forward, model=_Model())


def test_the_l1_is_over_each_items_valid_frames(tmp_path, monkeypatch):
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    torch.save({"model": {}}, run / "checkpoints" / "ckpt-00000002.pt")
    (run / "config.yaml").write_text("task: vc\n")
    items = [torch.randn(n, 3) for n in (4, 9, 2)]  # padding would weigh in at 9.0
    monkeypatch.setattr("aligner.config.load_config", lambda path: None)
    monkeypatch.setattr("aligner.tasks.build_task", lambda cfg, data: _task(items))
    monkeypatch.setattr("aligner.checkpoint.load_checkpoint", lambda path: {"model": {}})
    name, l1 = valid_mel_l1.valid_l1(run, tmp_path)
    assert name == "ckpt-00000002.pt" and l1 == pytest.approx(0.5)


def test_a_folder_without_checkpoints_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoints/ckpt-"):
        valid_mel_l1.valid_l1(tmp_path, tmp_path)
