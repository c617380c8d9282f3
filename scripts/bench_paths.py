"""The fast inference paths of `bench_tacotron.py` (imported by it; not run on its own;
the models and helpers both use: `bench_models.py`).

`fast_rows` runs those the options ask for:

* ``--fast``: the decoders ``aligner synthesize`` runs on a CPU (fused fp32 cells, fp16,
  int8: `aligner.models.tacotron.precision.prepare_decoder`) against torchaudio's fp32
  Tacotron2 at batch 1 (rows of the table), and their output against aligner's plain fp32
  model (`output_difference`: prenet dropout off on both, so that the two decode the same
  thing): mean and max absolute mel difference, the steps whose attention argmax moved.
* ``--limits`` (`limit_rows`): what bounds a batch-1 step on a CPU: the bytes of decoder
  weights a step reads, the GB/s it achieves, and this machine's memory bandwidth measured
  in the same run (reading and copying buffers far larger than the caches); the ratio of
  the step's time to the time its weights take to read at that bandwidth.
* ``--static``: aligner's fixed-shape decoding (`aligner.models.tacotron.static_decoding`: a CUDA graph
  per step on a GPU, the stop flags read every 16 steps) at batch 1 and 4 against
  torchaudio, and its output against the plain decode (under bf16 autocast without the
  weight cast cache, as CUDA graphs need).
* ``--sentences N`` (`sentence_rows`): a text of N sentences (random lengths 20-80 tokens
  for ``--text-len 50``, each decoded for 4 frames per token, the stop disabled) decoded
  as one batch against one sentence at a time, as ``aligner synthesize`` does with
  ``--batch-size N`` and ``--batch-size 1``.
* ``--profile`` (`profile`): where aligner's inference spends its time.
"""

from __future__ import annotations

import contextlib
import copy
import statistics
import time
from collections.abc import Callable

import torch
from bench_models import N_SYMBOLS, aligner_infer, random_batch, torchaudio_infer
from torch import nn


def infer_fn(model: nn.Module, tokens, lengths, steps: int) -> Callable[[], int]:
    def run() -> int:
        mel, out = model.generate(
            tokens, lengths, stop_threshold=2.0, max_length_ratio=1e9, max_steps=steps
        )
        return int(out.lengths.sum())

    return run


# the fast paths: row label -> precision (`aligner.models.tacotron.precision.prepare_decoder`)
FAST = {"fp32 fused": "fp32", "fp16": "fp16", "int8": "int8"}


def fast_copy(model: nn.Module, precision: str) -> nn.Module:
    """A copy of an fp32 aligner Tacotron prepared as ``aligner synthesize`` does on a
    CPU: fused LSTM cells in fp32, or its decoder in fp16 / int8 (eval mode)."""
    from aligner.models.tacotron.precision import prepare_decoder

    return prepare_decoder(copy.deepcopy(model).eval(), precision)


class Static(nn.Module):
    """An aligner Tacotron whose ``generate`` decodes with fixed shapes (``static=True``)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model, self.decoder = model, model.decoder

    def generate(self, *args, **options):
        return self.model.generate(*args, static=True, **options)


def static_rows(models, args, device, dtype, peers, results, time_pair) -> list[str]:
    """``--static``: rows at batch 1 and 4 (appended to `results`) and the line of its
    distance from the plain decode."""

    def autocast():
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=dtype, cache_enabled=False)

    static = Static(models["aligner"])
    for b in (1, 4):
        tokens, lengths, _, _ = random_batch(b, args.text_len, 1, 80, device, seed=1)
        fns = {"aligner": infer_fn(static, tokens, lengths, args.steps)}
        for peer in peers:
            fns[peer] = lambda m=models[peer], x=tokens, n=lengths: torchaudio_infer(
                m, x, n, args.steps
            )
        t = time_pair(fns, args.repeats, device, autocast)
        values = {k: [b * args.steps / s for s in v] for k, v in t.items()}
        results.append((f"infer b={b} static (frames/s)", values, True))
    tokens, lengths, _, _ = random_batch(1, args.text_len, 1, 80, device, seed=1)
    d = output_difference(models["aligner"], static, tokens, lengths, args.steps)
    return [
        f"static against plain (dropout off, {args.steps} steps): mel |diff| mean "
        f"{d['mean_abs']:.2e}, max {d['max_abs']:.2e}; same lengths {d['same_lengths']}"
    ]


def output_difference(model: nn.Module, fast: nn.Module, tokens, lengths, steps: int) -> dict:
    """Mean / max |mel difference| and the share of steps whose attention argmax moved,
    decoding the same input with the prenet's dropout off on both models."""
    outs = []
    for m in (model, fast):
        with m.decoder.prenet.deterministic():
            outs.append(
                m.generate(
                    tokens, lengths, stop_threshold=2.0, max_length_ratio=1e9, max_steps=steps
                )
            )
    (mel_a, dec_a), (mel_b, dec_b) = outs
    diff = (mel_a - mel_b).abs()
    moved = dec_a.alignments.argmax(-1) != dec_b.alignments.argmax(-1)
    return {
        "mean_abs": float(diff.mean()),
        "max_abs": float(diff.max()),
        "mel_std": float(mel_a.std()),
        "argmax_moved": float(moved.float().mean()),
        "same_lengths": bool(torch.equal(dec_a.lengths, dec_b.lengths)),
    }


def read_bandwidth(mbytes: int = 1024, repeats: int = 5) -> tuple[float, float]:
    """This machine's memory bandwidth in GB/s: (read: summing a buffer of `mbytes` MB,
    copy: read + write of one buffer into another), best of `repeats`."""
    n = mbytes * 2**20 // 4
    src = torch.ones(n)
    dst = torch.empty(n)
    read, copied = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        src.sum()
        read.append(time.perf_counter() - t)
        t = time.perf_counter()
        dst.copy_(src)
        copied.append(time.perf_counter() - t)
    size = n * 4 / 1e9
    return size / min(read), 2 * size / min(copied)


def limit_rows(decoder: nn.Module, fps: dict[str, float], mbytes: int) -> list[str]:
    """Lines: per path (`fps`: label -> steps/s; fp32 or a label of `FAST`), the bytes of
    decoder weights a step reads (`decoder` in fp32, counted as stored in that path's
    precision), the GB/s achieved, and the ratio of the step's time to the time of reading
    those bytes at the measured bandwidth."""
    from aligner.models.tacotron.precision import weight_bytes

    read_gbs, copy_gbs = read_bandwidth(mbytes)
    lines = [
        f"memory bandwidth of this machine: read {read_gbs:.1f} GB/s, copy (read + write) "
        f"{copy_gbs:.1f} GB/s ({mbytes} MB buffers, {torch.get_num_threads()} threads)"
    ]
    for label, steps in fps.items():
        step_bytes = weight_bytes(decoder, FAST.get(label, label))
        limit_fps = read_gbs * 1e9 / step_bytes
        lines.append(
            f"aligner {label}: decoder weights {step_bytes / 1e6:5.1f} MB a step, "
            f"{steps:7.1f} steps/s = {step_bytes * steps / 1e9:5.1f} GB/s; bandwidth limit "
            f"{limit_fps:7.1f} steps/s, step time / limit {limit_fps / steps:.2f}x"
        )
    return lines


def sentence_batch(n: int, text_len: int, device: torch.device, seed: int = 2):
    """`n` sentences of 0.4-1.6 x `text_len` random tokens (20-80 for 50): tokens (n, N)
    padded, lengths (n,)."""

    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(max(1, int(0.4 * text_len)), int(1.6 * text_len) + 1, (n,), generator=g)
    tokens = torch.randint(4, N_SYMBOLS, (n, int(lengths.max())), generator=g)
    tokens = tokens.masked_fill(torch.arange(tokens.size(1))[None] >= lengths[:, None], 0)
    return tokens.to(device), lengths.to(device)


def decode_sentences(model: nn.Module, tokens, lengths, batch: int, ratio: float = 4.0) -> int:
    """Decode the sentences `batch` at a time, longest first (``aligner synthesize``'s
    order), each for ``ratio`` frames per token; returns the frames kept."""
    order = torch.argsort(lengths, descending=True)
    frames = 0
    for start in range(0, len(order), batch):
        idx = order[start : start + batch]
        n = int(lengths[idx].max())
        _, out = model.generate(
            tokens[idx, :n], lengths[idx], stop_threshold=2.0, max_length_ratio=ratio
        )
        frames += int(out.lengths.sum())
    return frames


def sentence_rows(
    model: nn.Module, n: int, text_len: int, repeats: int, time_pair, device, autocast
) -> list[str]:
    """One batch of `n` sentences against one sentence at a time: seconds and the ratio."""
    tokens, lengths = sentence_batch(n, text_len, device)
    fns = {
        "one by one": lambda: decode_sentences(model, tokens, lengths, 1),
        "one batch": lambda: decode_sentences(model, tokens, lengths, n),
    }
    t = time_pair(fns, repeats, device, autocast)
    one, batched = statistics.median(t["one by one"]), statistics.median(t["one batch"])
    frames = int((torch.ceil(lengths.float() * 4)).sum())
    return [
        f"{n} sentences ({int(lengths.sum())} tokens, {frames} frames): one by one {one:.3f} s, "
        f"one batch {batched:.3f} s, speed-up {one / batched:.2f}x"
    ]


def fast_rows(models, args, device, autocast, peers, results, time_pair) -> list[str]:
    """The rows the options ask for: ``--fast`` (the `FAST` paths at batch 1, appended to
    `results`, and their distance from plain fp32), ``--limits``, ``--sentences N``;
    returns the lines printed after the table."""

    lines: list[str] = []
    tokens, lengths, _, _ = random_batch(1, args.text_len, 1, 80, device, seed=1)
    measured = {"fp32": models["aligner"]}
    fps = {"fp32": statistics.median(results[1][1]["aligner"])}
    for label, precision in FAST.items() if args.fast else ():
        fast = fast_copy(models["aligner"], precision)
        fns = {"aligner": infer_fn(fast, tokens, lengths, args.steps)}
        for peer in peers:
            fns[peer] = lambda m=models[peer]: torchaudio_infer(m, tokens, lengths, args.steps)
        t = time_pair(fns, args.repeats, device, autocast)
        values = {k: [args.steps / s for s in v] for k, v in t.items()}
        results.append((f"infer b=1 {label} (frames/s)", values, True))
        measured[label] = fast
        fps[label] = statistics.median(values["aligner"])
        d = output_difference(models["aligner"], fast, tokens, lengths, args.steps)
        lines.append(
            f"{label} against fp32 (dropout off, {args.steps} steps): mel |diff| mean "
            f"{d['mean_abs']:.2e}, max {d['max_abs']:.2e} (mel std {d['mel_std']:.3f}); "
            f"attention argmax moved on {100 * d['argmax_moved']:.1f}% of steps; "
            f"same lengths {d['same_lengths']}"
        )
    if args.limits and device.type == "cpu":
        lines += limit_rows(models["aligner"].decoder, fps, args.bandwidth_mb)
    if args.sentences:
        for name, model in measured.items():
            rows = sentence_rows(
                model, args.sentences, args.text_len, args.repeats, time_pair, device, autocast
            )
            lines += [f"aligner {name}: {row}" for row in rows]
    return lines


def profile(model: nn.Module, args, device: torch.device, autocast) -> None:
    """Where aligner's inference at batch `args.batch` spends its time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    tokens, lengths, _, _ = random_batch(args.batch, args.text_len, 1, 80, device, seed=1)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with torch_profile(activities=acts) as prof, autocast():
        aligner_infer(model, tokens, lengths, args.steps)
    key = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
    print(prof.key_averages().table(sort_by=key, row_limit=20))
