"""A negative result kept reproducible (docs/results.md, stop 48): self-training a frame
classifier on the alignment model's own hard alignment, then aligning again with its
posteriors (a hybrid HMM's scaled likelihoods, ``log p(phone | frames) - log p(phone)``),
alone or mixed with the first pass's log alignment.

    aligner align --checkpoint CKPT --in data/train.jsonl --out ali_train --no-png
    python scripts/self_training_probe.py --checkpoint CKPT --data data --train-ali ali_train \
        --out probe --mix 0 0.5 --splits test valid
    aligner score-alignment --reference data/test.jsonl --predicted probe/mix0.5_test

The classifier: three convolutions of 5 frames (192 channels) and a bidirectional LSTM
(128 a side) over each utterance's normalized log-mels, trained by cross-entropy against
the token of every frame (separators, punctuation and specials one silence class), 1,500
steps of 16 utterances. Everything after the alignment weights is `aligner align`'s own
code (pauses from the audio, sub-frame edges, the files).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

import aligner.inference.align as align_module
from aligner.alignment.tiers import optional_tokens
from aligner.audio.io import load_audio
from aligner.data.manifest import read_manifest
from aligner.inference.loading import load_speech_model
from aligner.models.alignment import utterance_normalize


class FrameClassifier(nn.Module):
    """Normalized log-mels ``(B, T, M)`` -> class logits ``(B, T, V)``."""

    def __init__(self, n_mels: int, n_classes: int, channels: int = 192, lstm: int = 128):
        super().__init__()
        layers: list[nn.Module] = []
        for k in range(3):
            layers += [nn.Conv1d(n_mels if k == 0 else channels, channels, 5, padding=2), nn.ReLU()]
        self.convs = nn.Sequential(*layers)
        self.lstm = nn.LSTM(channels, lstm, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * lstm, n_classes)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.convs(x.transpose(1, 2)).transpose(1, 2) * mask[..., None]
        return self.out(self.lstm(h)[0])


def padded(mels: list[torch.Tensor], labels: list[torch.Tensor] | None = None):
    """Utterance-normalized padded mels ``(B, T, M)``, mask ``(B, T)``, labels ``(B, T)``
    (-100 on padding)."""
    t_max, n_mels = max(len(m) for m in mels), mels[0].size(1)
    x = torch.zeros(len(mels), t_max, n_mels)
    mask = torch.zeros(len(mels), t_max, dtype=torch.bool)
    y = torch.full((len(mels), t_max), -100, dtype=torch.long)
    for k, mel in enumerate(mels):
        x[k, : len(mel)], mask[k, : len(mel)] = mel, True
        if labels is not None:
            y[k, : len(mel)] = labels[k]
    return utterance_normalize(x, mask), mask, y


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--data", required=True, help="folder of train/valid/test.jsonl")
    p.add_argument("--train-ali", required=True, help="aligner align's output for train")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--mix", type=float, nargs="+", default=[0.0, 0.5], help="first pass's share")
    p.add_argument("--splits", nargs="+", default=["test"])
    args = p.parse_args()
    torch.manual_seed(0)
    speech = load_speech_model(args.checkpoint, "align")
    symbols = speech.symbols.symbols
    silent = optional_tokens(symbols)
    class_of = np.arange(len(symbols))
    class_of[silent] = int(np.flatnonzero(silent)[0])

    mels, labels = [], []
    for item in read_manifest(Path(args.data) / "train.jsonl"):
        record = Path(args.train_ali) / f"{item['id']}.durations.json"
        if not record.exists():
            continue
        frames = np.array(json.loads(record.read_text())["frames"])
        mel = speech.target_mel(load_audio(item["audio"], speech.mel_cfg.sample_rate)[0])
        tokens = speech.source(item, item["id"]).numpy()
        if len(frames) == len(tokens) and frames.sum() == len(mel):
            mels.append(mel)
            labels.append(torch.from_numpy(np.repeat(class_of[tokens], frames)))
    if len(mels) < 16:
        raise SystemExit(
            f"{len(mels)} train items have a durations record in {args.train_ali} that fits "
            "their audio; give aligner align's output for 16 or more"
        )
    counts = np.bincount(torch.cat(labels).numpy(), minlength=len(symbols)) + 1.0
    log_prior = torch.from_numpy(np.log(counts / counts.sum())).float()

    clf = FrameClassifier(mels[0].size(1), len(symbols))
    optim = torch.optim.Adam(clf.parameters(), 1e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(optim, 2e-3, total_steps=args.steps, pct_start=0.1)
    rng, start = np.random.default_rng(0), time.time()
    for step in range(args.steps):
        idx = rng.choice(len(mels), 16, replace=False)
        x, mask, y = padded([mels[i] for i in idx], [labels[i] for i in idx])
        loss = nn.functional.cross_entropy(clf(x, mask).flatten(0, 1), y.flatten())
        optim.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(clf.parameters(), 1.0)
        optim.step()
        sched.step()
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.3f} {time.time() - start:.0f} s", flush=True)
    clf.eval()

    first_pass, mix = speech.teacher_force, {"share": 0.0}

    def refined(sources, targets, batch_size=8):
        out = []
        with torch.no_grad():
            for src, mel, w in zip(sources, targets, first_pass(sources, targets, batch_size)):
                x, mask, _ = padded([mel])
                classes = torch.from_numpy(class_of[src.numpy()])
                post = torch.log_softmax(clf(x, mask)[0], -1)[:, classes] - log_prior[classes]
                share = mix["share"]
                both = share * torch.log(w.clamp_min(1e-30)) + (1 - share) * post.log_softmax(-1)
                out.append(torch.softmax(both, -1))
        return out

    speech.teacher_force = refined
    align_module.load_speech_model = lambda *a, **k: speech
    for share in args.mix:
        mix["share"] = share
        for split in args.splits:
            out = Path(args.out) / f"mix{share}_{split}"
            align_module.align_manifest(
                args.checkpoint, Path(args.data) / f"{split}.jsonl", out, png=False, force=True
            )
            print("wrote", out)


if __name__ == "__main__":
    main()
