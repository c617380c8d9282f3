#!/usr/bin/env python
"""Time one training step (forward + backward) of a TTS recipe's Tacotron on a random batch.

    python scripts/bench_train_step.py recipes/tts/tacotron_dca_small.yaml [--threads 2]

The model is built from the recipe's ``model`` section exactly as training builds it; the
batch is random (``--batch`` items, ``--tokens`` to 2/3 of it, ``--frames`` to 5/8 of it),
so the figure isolates the model's cost from data loading and validation. Prints the
median and the spread of ``--repeats`` steps after one warm-up. Run it at two commits to
measure a change (same machine, same arguments).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

from aligner.config import load_config
from aligner.models.tacotron.model import Tacotron
from aligner.tasks.speech import model_config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe", type=Path)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=60)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    cfg = load_config(args.recipe)
    if cfg.task != "tts":
        raise SystemExit(f"{args.recipe}: a tts recipe is needed, this one is {cfg.task!r}")
    n_mels = cfg.data["mel"]["n_mels"]
    tacotron, _ = model_config(cfg.model, n_mels, 150)
    model = Tacotron.from_config(tacotron).train()
    b, n, t = args.batch, args.tokens, args.frames
    tokens = torch.randint(4, 150, (b, n))
    token_lengths = torch.linspace(n, 2 * n // 3, b).long()
    mel = torch.randn(b, t, n_mels)
    mel_lengths = torch.linspace(t, 5 * t // 8, b).long()

    def step() -> float:
        start = time.perf_counter()
        out = model(tokens, token_lengths, mel, mel_lengths)
        loss = (out.mel - mel).abs().mean() + (out.mel_post - mel).abs().mean()
        (loss + out.stop_logits.mean() + out.alignments.mean()).backward()
        model.zero_grad(set_to_none=True)
        return time.perf_counter() - start

    step()
    times = [step() for _ in range(args.repeats)]
    print(
        f"{args.recipe.name}: batch {b}, {n} tokens, {t} frames, {torch.get_num_threads()} "
        f"threads: median {statistics.median(times):.3f} s per training step "
        f"(min {min(times):.3f}, max {max(times):.3f}, {args.repeats} steps)"
    )


if __name__ == "__main__":
    main()
