"""The generic trainer on the tiny task: exact resume, NaN skipping, checkpoints, logging."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch
from tiny_task import TinyTask

from aligner.checkpoint import load_checkpoint
from aligner.config import TrainConfig
from aligner.train.errors import TrainingDiverged
from aligner.train.trainer import Trainer

# 48 items, batch 8 -> 6 batches per epoch; 14 steps cross two epoch boundaries.
CFG = TrainConfig(
    batch_size=8,
    max_steps=14,
    lr=0.05,
    warmup_steps=3,
    decay="cosine",
    min_lr=1e-3,
    log_every=2,
    eval_every=5,
    checkpoint_every=4,
    keep_last=2,
    max_nonfinite=3,
    grad_clip=0.5,
    seed=7,
    progress=False,
)


def make_trainer(tmp_path, cfg=CFG, init_seed=0, **task_kw) -> Trainer:
    torch.manual_seed(init_seed)
    return Trainer(TinyTask(**task_kw), cfg, tmp_path)


def params(trainer: Trainer) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in trainer.task.model.state_dict().items()}


class Crash(RuntimeError):
    pass


class CrashingTask(TinyTask):
    """Raises at `crash_step`, as a killed process would stop."""

    def __init__(self, crash_step: int) -> None:
        super().__init__()
        self.crash_step = crash_step

    def loss(self, model, batch, step):
        if step == self.crash_step:
            raise Crash(step)
        return super().loss(model, batch, step)


def test_resume_is_exact(tmp_path):
    straight = make_trainer(tmp_path / "a")
    result = straight.fit()
    assert result.step == 14 and result.reason == "max_steps"

    torch.manual_seed(0)
    crashing = Trainer(CrashingTask(crash_step=9), CFG, tmp_path / "b")
    with pytest.raises(Crash):
        crashing.fit()  # checkpoint at step 8 = epoch 1, 2 batches in
    resumed = make_trainer(tmp_path / "b", init_seed=123)  # different init, overwritten
    path = resumed.resume()
    assert path.name == "ckpt-00000008.pt" and resumed.step == 8 and resumed.epoch == 1
    resumed.fit()
    assert resumed.task.loss_steps == list(range(8, 14))
    a, b = params(straight), params(resumed)
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    sa, sb = straight.optimizer.state_dict()["state"], resumed.optimizer.state_dict()["state"]
    for i in sa:
        assert torch.equal(sa[i]["exp_avg_sq"], sb[i]["exp_avg_sq"])
    assert straight.scheduler.get_last_lr() == resumed.scheduler.get_last_lr()
    assert resumed.best_loss == straight.best_loss


def test_same_seed_same_run_and_training_reduces_loss(tmp_path):
    cfg = replace(CFG, max_steps=30, eval_every=30, checkpoint_every=30)
    t1, t2 = make_trainer(tmp_path / "1", cfg), make_trainer(tmp_path / "2", cfg)
    torch.rand(5)  # fit seeds a fresh run itself: prior RNG use must not matter
    r1, r2 = t1.fit(), t2.fit()
    assert r1.best_loss == r2.best_loss
    assert all(torch.equal(params(t1)[k], params(t2)[k]) for k in params(t1))
    torch.manual_seed(0)
    untrained = TinyTask()  # the same init as t1
    untrained.model.eval()
    batch = untrained.collate(list(untrained.valid_set))
    with torch.no_grad():
        initial = untrained.validate(untrained.model, [batch], 0, None)["loss"]
    assert r1.best_loss < 0.5 * initial


def test_nan_steps_are_skipped(tmp_path):
    cfg = replace(CFG, max_steps=10, eval_every=100, checkpoint_every=100)
    clean = make_trainer(tmp_path / "c", cfg)
    t = make_trainer(tmp_path / "n", cfg, nan_steps={3, 4})
    clean.fit()
    t.fit()
    opt_state = t.optimizer.state_dict()["state"][0]
    assert int(opt_state["step"]) == 8  # 10 steps, 2 skipped
    assert int(clean.optimizer.state_dict()["state"][0]["step"]) == 10
    assert t.scheduler.last_epoch == 8
    assert all(torch.isfinite(p).all() for p in t.task.model.parameters())
    assert t.nonfinite_in_row == 0


def test_nan_skipped_step_leaves_parameters_unchanged(tmp_path):
    cfg = replace(CFG, max_steps=4, eval_every=100, checkpoint_every=100)
    t = make_trainer(tmp_path, cfg, nan_steps={3})
    t3 = make_trainer(tmp_path / "x", replace(cfg, max_steps=3))
    t.fit()
    t3.fit()
    assert all(torch.equal(params(t)[k], params(t3)[k]) for k in params(t))


def test_k_nonfinite_in_a_row_stop_with_usable_checkpoint(tmp_path):
    cfg = replace(CFG, max_steps=20, eval_every=100, checkpoint_every=100)
    t = make_trainer(tmp_path, cfg, nan_steps={5, 6, 7, 8})
    with pytest.raises(
        TrainingDiverged, match=r"NaN/inf for 3 steps in a row .*step 8.*ckpt-00000008"
    ):
        t.fit()
    state = load_checkpoint(tmp_path / "checkpoints" / "ckpt-00000008.pt")
    assert state["step"] == 8
    assert all(torch.isfinite(v).all() for v in state["model"].values())
    again = make_trainer(tmp_path, cfg)  # e.g. after lowering the lr: resume works
    again.resume()
    assert again.fit().step == 20


def test_keep_last_and_best(tmp_path):
    class ScriptedValid(TinyTask):
        losses = iter([3.0, 1.0, 2.0, 1.5, 0.9, 4.0])

        def validate(self, model, batches, step, logger):
            list(batches)
            return {"loss": next(self.losses)}

    cfg = replace(CFG, max_steps=12, eval_every=2, checkpoint_every=3, keep_last=2)
    torch.manual_seed(0)
    t = Trainer(ScriptedValid(), cfg, tmp_path)
    t.fit()
    names = sorted(p.name for p in (tmp_path / "checkpoints").iterdir())
    assert names == ["best.pt", "ckpt-00000009.pt", "ckpt-00000012.pt"]
    best = load_checkpoint(tmp_path / "checkpoints" / "best.pt")
    assert best["step"] == 10 and best["best_loss"] == 0.9  # the 5th validation
    assert best["symbols"] == {"kind": "tiny", "dims": [3, 1]}
    assert best["config"]["train"]["keep_last"] == 2


def test_validation_does_not_change_training(tmp_path):
    often = make_trainer(tmp_path / "o", replace(CFG, eval_every=3))
    never = make_trainer(tmp_path / "v", replace(CFG, eval_every=1000))
    often.fit()
    never.fit()
    assert all(torch.equal(params(often)[k], params(never)[k]) for k in params(often))


def test_max_minutes_stops_early_with_checkpoint(tmp_path):
    cfg = replace(
        CFG, max_steps=10_000, max_minutes=0.5 / 60, eval_every=1000, checkpoint_every=1000
    )
    t = make_trainer(tmp_path, cfg, sleep=0.05)
    r = t.fit()
    assert r.reason == "max_minutes" and 3 <= r.step < 100
    assert r.checkpoint.name == f"ckpt-{r.step:08d}.pt"
    # the budget's last step is validated (no validation was due before it): best.pt is it
    assert t.validated_step == r.step and math.isfinite(r.best_loss)
    best = torch.load(tmp_path / "checkpoints" / "best.pt", weights_only=False)
    assert best["step"] == r.step


def test_tensorboard_scalars_logged(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    t = make_trainer(tmp_path, nan_steps={2})
    t.fit()
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "train/loss",
        "train/lr",
        "train/grad_norm",
        "train/steps_per_s",
        "valid/loss",
        "train/nonfinite_skipped",
        "train/mse",
    ):
        assert tag in tags, tag
    lrs = {e.step: e.value for e in acc.Scalars("train/lr")}
    assert lrs[2] == pytest.approx(0.05 * (1 / 3 + 2 / 3) / 2)  # warm-up updates 0 and 1
    assert lrs[4] == pytest.approx(0.05)  # step 3 skipped; step 4 is update 2: end of warm-up
    assert [e.step for e in acc.Scalars("valid/loss")] == [5, 10]
    assert math.isfinite(acc.Scalars("train/grad_norm")[0].value)
    assert [e.step for e in acc.Images("valid/alignment/0")] == [5, 10]


def test_resume_refuses_other_world_size(tmp_path):
    from aligner.checkpoint import CheckpointError

    t = make_trainer(tmp_path, replace(CFG, max_steps=4))
    t.fit()
    state = load_checkpoint(tmp_path / "checkpoints" / "ckpt-00000004.pt")
    state["sampler"]["num_replicas"] = 2
    torch.save(state, tmp_path / "checkpoints" / "ckpt-00000005.pt")
    with pytest.raises(CheckpointError, match="num_replicas=2.*same batch size"):
        make_trainer(tmp_path).resume()


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_mixed_precision_trains(tmp_path, precision):
    cfg = replace(CFG, max_steps=20, precision=precision, eval_every=20, checkpoint_every=20)
    t = make_trainer(tmp_path, cfg)
    r = t.fit()
    assert math.isfinite(r.best_loss)
    assert all(torch.isfinite(p).all() for p in t.task.model.parameters())
    assert t.scaler.is_enabled() == (precision == "fp16")
    state = load_checkpoint(r.checkpoint)
    assert state["scaler"] != {} or precision == "bf16"
