"""Analysis-synthesis of vocoders: each item's own log-mel through each vocoder, scored
against the original recording with the toolkit's VC metrics (MCD dB, F0 RMSE, V/UV
error: `aligner.audio.distortion`), beside Griffin-Lim and WORLD resynthesis, with each
system's speed (times faster than real time, on the threads given).

    python scripts/eval_vocoder.py --data data/espeak/test.jsonl --vocoder exp/vocoder \\
        [--vocoder hifigan:DIR] [--griffin-lim 32 100] [--threads 1] [--out eval.json]

Needs the `vc` extra (pyworld, pysptk). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

from aligner.audio.distortion import compare
from aligner.audio.features import MelConfig, log_mel
from aligner.audio.io import load_audio
from aligner.audio.world import analyze, modules
from aligner.data.manifest import read_manifest
from aligner.models.vocoders.base import (
    GriffinLimVocoder,
    ToolkitVocoder,
    VocoderError,
    check_compatible,
    load_toolkit_vocoder,
    load_vocoder,
)

SCORES = ("mcd", "f0_rmse_hz", "vuv_error")


def world_resynthesis(wav: np.ndarray, sr: int) -> np.ndarray:
    """WORLD analysis (Harvest, CheapTrick, D4C) and synthesis: the reference vocoder."""
    pyworld, _ = modules()
    x = np.ascontiguousarray(wav.astype(np.float64))
    f0, t = pyworld.harvest(x, sr)
    sp, ap = pyworld.cheaptrick(x, f0, t, sr), pyworld.d4c(x, f0, t, sr)
    return pyworld.synthesize(f0, sp, ap, sr).astype(np.float32)


def systems(args) -> tuple[MelConfig, dict]:
    """The mels' settings (the first toolkit vocoder's, else the recipes' defaults) and
    name -> (callable, whether it takes the mel rather than the waveform)."""
    loaded = {
        spec: load_toolkit_vocoder(Path(spec)) for spec in args.vocoder if Path(spec).exists()
    }
    cfg = next(iter(loaded.values()))[1] if loaded else MelConfig()
    out = {}
    for spec in args.vocoder:
        if spec in loaded:
            voc = ToolkitVocoder(*loaded[spec], spec)
            check_compatible(voc, cfg)
        else:
            voc = load_vocoder(spec, cfg)
        out[spec] = (voc, True)
    for n in args.griffin_lim:
        out[f"Griffin-Lim {n} it."] = (GriffinLimVocoder(cfg, n), True)
    if not args.no_world:
        out["WORLD resynthesis"] = (lambda wav: world_resynthesis(wav, cfg.sample_rate), False)
    return cfg, out


def mean(values: list[float]) -> float:
    """The mean of the values that are numbers (NaN when none is: no voiced pairs)."""
    found = [v for v in values if not np.isnan(v)]
    return float(np.mean(found)) if found else float("nan")


def evaluate(args) -> dict:
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        return _evaluate(args)
    finally:
        torch.set_num_threads(threads)


def _evaluate(args) -> dict:
    cfg, chosen = systems(args)
    items = read_manifest(args.data)[: args.items]
    rows: dict[str, list[dict]] = {name: [] for name in chosen}
    seconds = {name: 0.0 for name in chosen}
    audio_seconds = 0.0
    for item in items:
        wav = load_audio(item["audio"], cfg.sample_rate)[0]
        ref = analyze(wav.numpy(), cfg.sample_rate)
        mel = log_mel(wav, cfg)
        audio_seconds += len(wav) / cfg.sample_rate
        for name, (system, uses_mel) in chosen.items():
            start = time.perf_counter()
            out = system(mel) if uses_mel else system(wav.numpy())
            seconds[name] += time.perf_counter() - start
            out = out.numpy() if torch.is_tensor(out) else out
            rows[name].append({"id": item["id"], **compare(analyze(out, cfg.sample_rate), ref)})
    totals = {
        name: {
            **{k: mean([r[k] for r in found]) for k in SCORES},
            "x_real_time": audio_seconds / max(seconds[name], 1e-9),
        }
        for name, found in rows.items()
    }
    return {"items": len(items), "threads": args.threads, "totals": totals, "rows": rows}


def markdown(result: dict) -> str:
    head = "| system | MCD (dB) | F0 RMSE (Hz) | V/UV error | x real time |"
    lines = [head, "| --- | --- | --- | --- | --- |"]
    for name, t in result["totals"].items():
        lines.append(
            f"| {name} | {t['mcd']:.2f} | {t['f0_rmse_hz']:.1f} | {100 * t['vuv_error']:.1f}% "
            f"| {t['x_real_time']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="A manifest with audio.")
    parser.add_argument("--vocoder", action="append", default=[], help="A --vocoder value.")
    parser.add_argument("--griffin-lim", nargs="*", type=int, default=[32, 100])
    parser.add_argument("--no-world", action="store_true", help="Leave WORLD out.")
    parser.add_argument("--items", type=int, default=50, help="The first N items.")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, help="Also write the result as JSON.")
    args = parser.parse_args(argv)
    try:
        result = evaluate(args)
    except (VocoderError, ImportError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(markdown(result))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
