"""Where a Tacotron's free-running mels go wrong: the probes of docs/results.md, stop 43.

For the last checkpoint of each experiment and the first ``--items`` test sentences, the
mel distortion against the recordings after DTW (as ``eval_guide.py --quality``) of:
free-running synthesis (over every frame, the frames where the recording is quiet, more
than 26 dB below its loudest frame, and the rest), free-running with the prenet's dropout
off, free-running with the attention replaced step by step by the model's own
teacher-forced attention (one sentence at a time), and the teacher-forced output. Every
decode is without a monotonic window (whatever the recipe names): the attention as it is.

    python scripts/synthesis_probes.py exp/fwd_d exp/fwd_g --data data [--items 30]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import torch

QUIET = 6.0  # natural-log mel units below the loudest frame: about 26 dB


def distortion(hyp: np.ndarray, ref: np.ndarray) -> tuple[float, float, float]:
    """(T, M), (T', M) log mels -> mean distortion over the DTW path: all, quiet, speech."""
    from aligner.audio.distortion import dtw_path, log_mel_cepstra, mcd_frames

    a, b = log_mel_cepstra(hyp), log_mel_cepstra(ref)
    path = dtw_path(a, b)
    d = mcd_frames(a[path[:, 0]], b[path[:, 1]])
    level = ref.mean(1)[path[:, 1]]
    quiet = level < level.max() - QUIET
    return (
        float(d.mean()),
        float(d[quiet].mean()) if quiet.any() else np.nan,
        float(d[~quiet].mean()),
    )


def forced_attention(speech, src: torch.Tensor, weights: torch.Tensor) -> np.ndarray:
    """Free-running mel of `src` with each step's attention replaced by row s of
    ``weights (S, N)`` (the last row past S), the context recomputed from it."""
    attention = speech.model.decoder.attention
    own = attention.forward
    step = [0]

    def forced(query, state):
        _, w, new = own(query, state)
        row = weights[min(step[0], len(weights) - 1)][None].to(w)
        step[0] += 1
        context = torch.bmm(row.unsqueeze(1), state.values).squeeze(1)
        cum = state.cum_weights + row
        return context, row, dataclasses.replace(new, prev_weights=row, cum_weights=cum)

    attention.forward = forced
    try:
        return speech.generate([src], batch_size=1, max_length_ratio=10.0, window=None)[
            0
        ].mel.numpy()
    finally:
        del attention.forward  # the class's own method again


def probe(ckpt: Path, manifest: Path, items: int, seed: int = 0) -> dict[str, float]:
    """The probes' mean distortions (dB) for one checkpoint (module docstring)."""
    from aligner.audio.features import log_mel
    from aligner.audio.io import load_audio
    from aligner.data.manifest import read_manifest
    from aligner.inference.loading import load_speech_model

    speech = load_speech_model(ckpt, "synthesize")
    rows = list(read_manifest(manifest))[:items]
    srcs = [speech.encode_text(it["text"]) for it in rows]
    waves = [load_audio(it["audio"], speech.mel_cfg.sample_rate)[0] for it in rows]
    refs = [log_mel(w, speech.mel_cfg).numpy() for w in waves]
    out: dict[str, float] = {}

    def add(name: str, mels, split: bool = False) -> None:
        scores = np.array([distortion(m, r) for m, r in zip(mels, refs)])
        out[name] = float(scores[:, 0].mean())
        if split:
            out[name + "_quiet"] = float(np.nanmean(scores[:, 1]))
            out[name + "_speech"] = float(scores[:, 2].mean())

    torch.manual_seed(seed)
    add(
        "free_running",
        [r.mel.numpy() for r in speech.generate(srcs, batch_size=16, window=None)],
        True,
    )
    with speech.model.decoder.prenet.deterministic():
        torch.manual_seed(seed)
        add(
            "no_dropout", [r.mel.numpy() for r in speech.generate(srcs, batch_size=16, window=None)]
        )
    targets = [speech.target_mel(w) for w in waves]
    attention = speech.teacher_force(srcs, targets)
    torch.manual_seed(seed)
    add("forced_attention", [forced_attention(speech, s, a) for s, a in zip(srcs, attention)])
    with torch.no_grad():
        tf = []
        for src, target in zip(srcs, targets):
            res = speech.model(
                src[None], torch.tensor([len(src)]), target[None], torch.tensor([len(target)])
            )
            tf.append(speech.denormalize(res.mel_post[0]).numpy())
    add("teacher_forced", tf)
    return out


def main(argv: list[str] | None = None) -> int:
    from eval_guide import checkpoints

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+", type=Path)
    parser.add_argument("--data", type=Path, required=True, help="folder of test.jsonl")
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0, help="of the prenet's dropout")
    args = parser.parse_args(argv)
    for exp in args.experiments:
        result = probe(checkpoints(exp, 1)[0], args.data / "test.jsonl", args.items, args.seed)
        print(exp.name, json.dumps({k: round(v, 2) for k, v in result.items()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
