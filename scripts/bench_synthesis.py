"""Synthesis speed of trained TTS checkpoints of any family, side by side: mel frames per
second at batch 1 (each sentence alone) and for all sentences in one batch, on the same
sentences and threads, no vocoder.

    python scripts/bench_synthesis.py CKPT [CKPT ...] --in sentences.txt [--threads 2]
        [--repeats 3] [--device cpu] [--same-length]

Each checkpoint is loaded with `load_speech_model(path, "synthesize")` and decodes as
``aligner synthesize`` does (its recipe's window for a Tacotron). Timings are the median of
``--repeats`` runs after one warm-up, the checkpoints interleaved so that load changes on
the machine hit all alike. Prints one JSON line per checkpoint: family, frames, frames per
second at batch 1 and in one batch, and the ratio to the first checkpoint's.
``--same-length``: every checkpoint after the first decodes as many frames as the first
made, its stop turned off (an attention decoder that stops at once, e.g. untrained, is then
timed on a real output length; a decoder step's cost does not depend on its weights).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from aligner.inference import load_speech_model
from aligner.text.normalize import normalize_and_split


def _timed(
    speech, ids: list[torch.Tensor], batch: int, frames: int | None = None
) -> tuple[float, int]:
    """Seconds and frames of one decode; `frames`: as many frames in all, without a stop."""
    options = {}
    if frames is not None:
        options = {"stop_threshold": 1.0, "max_length_ratio": frames / sum(len(i) for i in ids)}
    start = time.perf_counter()
    results = speech.generate(ids, batch_size=batch, **options)
    return time.perf_counter() - start, sum(len(r.mel) for r in results)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--in", dest="text", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--same-length",
        action="store_true",
        help="decode the later checkpoints to the first one's frames, their stop off",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    models = [load_speech_model(p, "synthesize", args.device) for p in args.checkpoints]
    text = args.text.read_text(encoding="utf-8")
    rates: dict[int, dict[str, list[float]]] = {i: {"1": [], "all": []} for i in range(len(models))}
    frames: dict[int, int] = {}
    for repeat in range(args.repeats + 1):
        for i, speech in enumerate(models):
            torch.manual_seed(0)
            sentences = normalize_and_split(text, cleaner=speech.tokenizer.cleaner)
            ids = [speech.encode_text(s) for s in sentences]
            for key, batch in (("1", 1), ("all", len(ids))):
                target = frames.get(0) if args.same_length and i else None
                seconds, n = _timed(speech, ids, batch, target)
                frames[i] = n
                if repeat:  # the first run warms up
                    rates[i][key].append(n / seconds)
    first = {k: statistics.median(v) for k, v in rates[0].items()}
    for i, (path, speech) in enumerate(zip(args.checkpoints, models)):
        median = {k: statistics.median(v) for k, v in rates[i].items()}
        row = {
            "checkpoint": str(path),
            "family": type(speech).__name__,
            "step": speech.step,
            "frames": frames[i],
            "frames_per_s_batch1": round(median["1"], 1),
            "frames_per_s_one_batch": round(median["all"], 1),
            "ratio_batch1": round(median["1"] / first["1"], 2),
            "ratio_one_batch": round(median["all"] / first["all"], 2),
            "threads": args.threads,
        }
        print(json.dumps(row))


if __name__ == "__main__":
    main()
