"""Speed of aligner's Tacotron (TTS) against ``torchaudio.models.Tacotron2``, same run.

Both models are built in torchaudio's Tacotron 2 configuration (encoder 512, attention RNN
and decoder RNN 1024, location-sensitive attention 128 with 32 filters of width 31,
prenet 256-256, postnet 5 x 512, 80 mels, r = 1) and fed the same random batch
(lengths sorted in decreasing order, as torchaudio's encoder requires). Measured:

* training step: forward + backward of the same loss (MSE before/after the postnet +
  stop BCE) at ``--batch`` items, ``--text-len`` tokens, ``--mel-len`` frames;
* inference: free-running mel frames per second at batch 1 and ``--batch`` for exactly
  ``--steps`` decoder steps, the stop disabled on both (torchaudio: gate threshold 2 and
  no early stopping, ``decoder_max_step = steps``; aligner: stop threshold 2 and
  ``max_steps = steps``).

Timings are the median of ``--repeats`` runs after one warm-up, the two models
interleaved (alternating which runs first) so that load changes on the machine hit both
alike. Ratios are
aligner / torchaudio (time: < 1 is faster; frames per second: > 1 is faster).

    python scripts/bench_tacotron.py [--device cuda] [--dtype bf16] [--profile] [--aa]
        [--fast] [--limits] [--sentences 10]

``--fast`` adds aligner's CPU inference paths (fused fp32 cells, fp16, int8) at batch 1
(and their output against plain fp32),
``--limits`` what bounds a batch-1 step (bytes a step, GB/s, the machine's bandwidth),
``--sentences N`` a text of N sentences decoded as one batch against one at a time
(`bench_paths.py`); the two models and the timer: `bench_models.py`.

``--aa`` adds a second, identical torchaudio model to every measurement: the ratio of the
two torchaudio models (an A/A test) shows how far apart two *equal* models measure on
this machine, the floor below which a/t ratios mean nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_models.py, bench_paths.py
import bench_paths  # noqa: E402
from bench_models import (  # noqa: E402
    aligner_infer,
    aligner_train_step,
    build_aligner,
    build_torchaudio,
    count,
    random_batch,
    time_pair,
    torchaudio_infer,
    torchaudio_train_step,
)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--text-len", type=int, default=50)
    ap.add_argument("--mel-len", type=int, default=200)
    ap.add_argument("--steps", type=int, default=100, help="decoder steps at inference")
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    ap.add_argument("--profile", action="store_true", help="torch.profiler table of aligner")
    ap.add_argument(
        "--fast", action="store_true", help="also aligner's fused fp32, fp16, int8 decoders"
    )
    ap.add_argument("--limits", action="store_true", help="bytes a step against bandwidth")
    ap.add_argument("--bandwidth-mb", type=int, default=1024, help="buffer of --limits (MB)")
    ap.add_argument("--sentences", type=int, default=0, help="N sentences: batch vs 1 by 1")
    ap.add_argument(
        "--static", action="store_true", help="also fixed-shape decoding (CUDA graphs on a GPU)"
    )
    ap.add_argument(
        "--aa",
        action="store_true",
        help="also time a second torchaudio model (an A/A run: its ratio to the first is the "
        "noise floor of this measurement)",
    )
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    models = {
        "aligner": build_aligner().to(device),
        "torchaudio": build_torchaudio(args.steps).to(device),
    }
    if args.aa:
        models["torchaudio-2"] = build_torchaudio(args.steps).to(device)
    peers = [name for name in models if name.startswith("torchaudio")]
    dtype = torch.bfloat16 if args.dtype == "bf16" else None

    def autocast():
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=dtype)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(
        f"device {name} ({torch.get_num_threads()} threads), dtype {args.dtype}, "
        f"torch {torch.__version__}; batch {args.batch}, text {args.text_len}, "
        f"mel {args.mel_len}, inference steps {args.steps}, repeats {args.repeats}"
    )
    print(
        f"parameters: aligner {count(models['aligner']):,}, torchaudio {count(models['torchaudio']):,}"
    )
    results = []

    # training step
    batch = random_batch(args.batch, args.text_len, args.mel_len, 80, device)
    for m in models.values():
        m.train()
    fns = {"aligner": lambda: aligner_train_step(models["aligner"], batch)}
    for peer in peers:
        fns[peer] = lambda m=models[peer]: torchaudio_train_step(m, batch)
    t = time_pair(fns, args.repeats, device, autocast)
    for m in models.values():
        m.zero_grad(set_to_none=True)
    results.append(("train step (s)", t, False))
    train_frames = int(batch[3].sum())  # mel frames a training step learns from
    train_fps = {k: train_frames / statistics.median(v) for k, v in t.items()}

    # inference
    for m in models.values():
        m.eval()
    for b in sorted({1, args.batch}):
        tokens, lengths, _, _ = random_batch(b, args.text_len, 1, 80, device, seed=1)
        fns = {
            "aligner": lambda x=tokens, n=lengths: aligner_infer(
                models["aligner"], x, n, args.steps
            )
        }
        for peer in peers:
            fns[peer] = lambda x=tokens, n=lengths, m=models[peer]: torchaudio_infer(
                m, x, n, args.steps
            )
        t = time_pair(fns, args.repeats, device, autocast)
        frames = b * args.steps
        fps = {k: [frames / s for s in v] for k, v in t.items()}
        results.append((f"infer b={b} (frames/s)", fps, True))

    fast = bench_paths.fast_rows(models, args, device, autocast, peers, results, time_pair)
    if args.static:
        fast += bench_paths.static_rows(models, args, device, dtype, peers, results, time_pair)
    aa = f" {'A/A t2/t':>10}" if args.aa else ""
    print(f"{'measure':<24} {'aligner':>12} {'torchaudio':>12} {'ratio a/t':>10}{aa}")
    for label, values, higher_better in results:
        a = statistics.median(values["aligner"])
        p = statistics.median(values["torchaudio"])
        note = "higher is better" if higher_better else "lower is better"
        if args.aa:
            note = f"{statistics.median(values['torchaudio-2']) / p:10.3f}  ({note})"
        else:
            note = f" ({note})"
        print(f"{label:<24} {a:12.4g} {p:12.4g} {a / p:10.3f} {note}")

    print(
        f"training throughput (batch {args.batch}, {train_frames} mel frames a step): "
        + ", ".join(f"{k} {v:,.0f} mel frames/s" for k, v in train_fps.items())
    )
    for line in fast:
        print(line)
    if args.profile:
        bench_paths.profile(models["aligner"], args, device, autocast)


if __name__ == "__main__":
    main()
