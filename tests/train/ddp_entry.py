"""Run by `torch.distributed.run --nproc-per-node 2 ddp_entry.py OUT` in test_ddp.py.

Each rank starts from a *different* initialisation (DDP must broadcast rank 0's), trains
the tiny task, and saves its final parameters and the batches it saw to OUT/rank{R}.pt. Rank 1's loss is
NaN at step 2: every rank must skip that update.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))

from tiny_task import TinyTask  # noqa: E402

from aligner.config import TrainConfig  # noqa: E402
from aligner.train import distributed as ddp  # noqa: E402
from aligner.train.trainer import Trainer  # noqa: E402


class RecordingTask(TinyTask):
    def __init__(self, nan_steps=()) -> None:
        super().__init__(nan_steps=nan_steps)
        self.seen: list[float] = []

    def loss(self, model, batch, step):
        self.seen.append(float(batch["y"].sum()))
        return super().loss(model, batch, step)


def main(out: Path) -> None:
    torch.set_num_threads(1)
    info = ddp.init_distributed()
    torch.manual_seed(100 + info.rank)
    task = RecordingTask(nan_steps={2} if info.rank == 1 else ())  # NaN on one rank only
    init = {k: v.clone() for k, v in task.model.state_dict().items()}
    cfg = TrainConfig(
        batch_size=4,
        max_steps=6,
        lr=0.05,
        warmup_steps=1,
        eval_every=3,
        checkpoint_every=3,
        log_every=2,
        progress=False,
        seed=5,
    )
    trainer = Trainer(task, cfg, out / "exp", info=info)
    trainer.fit()
    torch.save(
        {
            "params": task.model.state_dict(),
            "init": init,
            "seen": task.seen,
            "world": info.world_size,
            "updates": int(trainer.optimizer.state_dict()["state"][0]["step"]),
        },
        out / f"rank{info.rank}.pt",
    )
    ddp.cleanup()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
