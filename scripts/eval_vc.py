"""Mel-cepstral distortion of a voice-conversion model: converted vs target and source vs
target, each DTW-aligned, in dB.

    python scripts/eval_vc.py --checkpoint exp/vc_small/checkpoints/best.pt \
        --data data/espeak_vc [--manifest valid.jsonl] [--limit 50]

Mel-cepstra are the orthonormal DCT-II of the natural-log mel spectrum (the features the
model predicts, denormalized); c0 (energy) is excluded. Per frame pair,
MCD = 10 * sqrt(2) / ln(10) * ||c - c'||; an utterance's MCD is the mean over the DTW path
(librosa.sequence.dtw, Euclidean cost). A converted output closer to the target voice than
the source is has the lower MCD.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
import torch

from aligner.audio.distortion import MCD_CONST, mcd_dtw, mel_cepstra  # noqa: F401


def _log_mel(path: str, mel_cfg) -> torch.Tensor:
    from aligner.audio.features import log_mel
    from aligner.audio.io import load_audio

    wav, _ = load_audio(path, mel_cfg.sample_rate)
    return log_mel(wav, mel_cfg)


def evaluate(checkpoint: Path, manifest: Path, limit: int, max_ratio: float) -> list[dict]:
    """Per-item MCDs (converted vs target, source vs target) of the first ``limit`` items;
    conversion as ``aligner convert`` does it (length-sorted batches)."""
    from aligner.data.manifest import read_manifest
    from aligner.inference import load_speech_model

    speech = load_speech_model(checkpoint, task="vc")
    items = read_manifest(manifest)[: limit or None]
    sources = [_log_mel(item["audio"], speech.mel_cfg) for item in items]
    converted = speech.generate(
        [speech.src_stats.normalize(src) for src in sources], max_length_ratio=max_ratio
    )
    results = []
    for item, src, conv in zip(items, sources, converted):
        tgt = _log_mel(item["target_audio"], speech.mel_cfg)
        results.append({
            "id": item["id"],
            "converted": mcd_dtw(conv.mel.numpy(), tgt.numpy()),
            "source": mcd_dtw(src.numpy(), tgt.numpy()),
            "hit_max": conv.hit_max,
        })  # fmt: skip
    return results


@click.command()
@click.option("--checkpoint", type=click.Path(path_type=Path), required=True)
@click.option("--data", type=click.Path(path_type=Path), required=True, help="Corpus folder.")
@click.option("--manifest", default="valid.jsonl", show_default=True, help="Under --data.")
@click.option("--limit", default=0, show_default=True, help="First N items (0 = all).")
@click.option("--max-length-ratio", default=3.0, show_default=True, help="Output/input frames.")
@click.option("--verbose", is_flag=True, help="Print every item.")
def main(
    checkpoint: Path, data: Path, manifest: str, limit: int, max_length_ratio: float, verbose: bool
) -> None:
    """Print DTW mel-cepstral distortion (dB): converted vs target and source vs target."""
    path = data / manifest
    if not path.is_file():
        raise click.ClickException(f"{path} does not exist; give --data DIR holding {manifest}")
    try:
        rows = evaluate(checkpoint, path, limit, max_length_ratio)
    except ValueError as err:  # CheckpointError, AudioError, bad manifest: one line
        raise click.ClickException(str(err).splitlines()[0]) from None
    if verbose:
        for r in rows:
            click.echo(f"{r['id']}\tconverted {r['converted']:.2f}\tsource {r['source']:.2f}")
    conv, src = np.array([r["converted"] for r in rows]), np.array([r["source"] for r in rows])
    hits = sum(r["hit_max"] for r in rows)
    click.echo(f"items: {len(rows)} (length limit hit: {hits})")
    click.echo(f"MCD converted vs target: {conv.mean():.2f} +- {conv.std():.2f} dB")
    click.echo(f"MCD source    vs target: {src.mean():.2f} +- {src.std():.2f} dB")
    click.echo(f"converted closer than source on {(conv < src).mean() * 100:.0f}% of items")


if __name__ == "__main__":
    main()
