"""How far a trained Tacotron's fast precisions move its output: fp16 and int8 decoders
(`aligner.models.tacotron.precision`) against fp32 on a manifest's sentences, with the stop on.

For each sentence, decoded free-running with the prenet's dropout off (so that the only
difference is the weights): whether it stops at the same step, whether its attention
reaches the same last token, the mel distortion against the fp32 mel after DTW
(`aligner.audio.distortion.log_mel_cepstra`; 0 dB when equal) and the time of the whole
decode at batch 1 and at ``--batch``.

    python scripts/check_precision.py exp/tts --in data/test.jsonl [--limit 20] [--batch 16]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch


def decode(speech, ids: list[torch.Tensor], batch: int):
    """(results, seconds) of a deterministic free-running decode."""
    with speech.model.decoder.prenet.deterministic():
        start = time.perf_counter()
        results = speech.generate(ids, batch_size=batch)
        return results, time.perf_counter() - start


def compare(reference, results) -> dict[str, float]:
    """Same stop step, same last attended token, mel distortion (dB) against `reference`."""
    from aligner.audio.distortion import log_mel_cepstra, mcd_dtw

    same_stop = [len(a.mel) == len(b.mel) for a, b in zip(reference, results)]
    same_end = [
        int(a.alignment[-1].argmax()) == int(b.alignment[-1].argmax())
        for a, b in zip(reference, results)
    ]
    mcd = [
        mcd_dtw(log_mel_cepstra(b.mel.numpy()), log_mel_cepstra(a.mel.numpy()))
        for a, b in zip(reference, results)
    ]
    frames = [len(b.mel) - len(a.mel) for a, b in zip(reference, results)]
    return {
        "same_stop": float(np.mean(same_stop)),
        "same_last_token": float(np.mean(same_end)),
        "mel_distortion_db": float(np.mean(mcd)),
        "max_mel_distortion_db": float(np.max(mcd)),
        "max_frames_off": int(np.max(np.abs(frames))),
    }


def main(argv: list[str] | None = None) -> int:
    from aligner.data.manifest import read_manifest
    from aligner.inference.loading import load_speech_model

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", type=Path, help="a TTS checkpoint or experiment folder")
    ap.add_argument("--in", dest="manifest", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=20, help="sentences (the first N)")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    texts = [str(item["text"]) for item in read_manifest(args.manifest)][: args.limit]
    rows, reference = {}, None
    for precision in ("fp32", "fp16", "int8"):
        speech = load_speech_model(args.checkpoint, "synthesize", "cpu", precision)
        ids = [speech.encode_text(t, f"sentence {i + 1}") for i, t in enumerate(texts)]
        decode(speech, ids[:1], 1)  # warm-up
        results, one = decode(speech, ids, 1)
        _, batched = decode(speech, ids, args.batch)
        row = {"seconds_batch_1": one, f"seconds_batch_{args.batch}": batched}
        row["frames"] = sum(len(r.mel) for r in results)
        if reference is None:
            reference = results
        else:
            row |= compare(reference, results)
        rows[precision] = row
        print(precision, json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
