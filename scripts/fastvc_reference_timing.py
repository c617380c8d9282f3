"""A FastVC decoded on the reference timing of both voices instead of its predicted
durations: how much of its distance to the target is timing, how much is spectra.

    python scripts/fastvc_reference_timing.py --checkpoint exp/fastvc_small \
        --in data/test.jsonl --converted exp/fastvc_small/converted \
        --out exp/fastvc_small/reference_timing [--vocoder exp/fastvc_small/vocoder] [--level phones]
    python scripts/eval_vc.py --system fastvc=exp/fastvc_small/converted/manifest.jsonl \
        --system reference-timing=exp/fastvc_small/reference_timing/manifest.jsonl

Each test item needs ``timings`` and ``target_timings`` (a synthesizer's own word and phone
times, as `aligner prepare festival --parallel` writes them). The source's and the target's
boundaries (phones where both voices have the same phones, else words; each voice's start
and end) are joined piecewise linearly: a source frame gets the target frames its stretch
of time maps to, an encoder step the sum over its ``reduction`` frames, rounded along the
utterance as the model's own predictions are. The output folder mirrors `--converted`
(``aligner convert``'s folder: the same file names and a manifest.jsonl with the same
items), so that `eval_vc.py` scores the two side by side.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np
import torch


def reference_step_frames(
    src_timings: dict,
    tgt_timings: dict,
    src_frames: int,
    tgt_frames: int,
    reduction: int,
    level: str = "phones",
) -> torch.Tensor:
    """Target frames (float) of each encoder step, ceil(src_frames / reduction), summing to
    `tgt_frames`: the source's frames mapped to the target's time through both voices'
    boundaries at `level` (words where the two voices' phone labels differ)."""
    src, tgt = src_timings.get(level) or [], tgt_timings.get(level) or []
    if [p[2] for p in src] != [p[2] for p in tgt]:
        src, tgt = src_timings["words"], tgt_timings["words"]
        if [w[2] for w in src] != [w[2] for w in tgt]:
            raise ValueError("the two voices' words differ")
    xs, ys = [0.0], [0.0]
    for (s_start, s_end, _), (t_start, t_end, _) in zip(src, tgt):
        for x, y in ((s_start, t_start), (s_end, t_end)):
            if x > xs[-1] and y >= ys[-1]:  # monotonic anchors only
                xs.append(float(x))
                ys.append(float(y))
    src_seconds, tgt_seconds = float(src_timings["duration"]), float(tgt_timings["duration"])
    if src_seconds > xs[-1]:
        xs.append(src_seconds)
        ys.append(max(tgt_seconds, ys[-1]))
    else:  # the last boundary is the source's end: the target's end goes with it
        ys[-1] = max(tgt_seconds, ys[-1])
    edges = np.arange(src_frames + 1) * xs[-1] / src_frames  # source frame edges in seconds
    target = np.interp(edges, xs, ys) * tgt_frames / ys[-1]  # in target frames
    rates = np.pad(np.diff(target), (0, (-src_frames) % reduction))
    return torch.from_numpy(rates.reshape(-1, reduction).sum(1))


def _items(manifest: Path, converted: Path) -> list[tuple[dict, dict]]:
    """(test item, converted item) pairs by id; one line naming the first problem."""
    from aligner.data.manifest import ManifestError, read_manifest

    try:
        test = {item["id"]: item for item in read_manifest(manifest)}
        done = read_manifest(converted / "manifest.jsonl")
    except (ManifestError, FileNotFoundError) as err:
        raise click.ClickException(str(err).splitlines()[0]) from None
    pairs = []
    for item in done:
        source = test.get(item["id"])
        if source is None:
            raise click.ClickException(f"{converted}: item {item['id']} is not in {manifest}")
        if not source.get("timings") or not source.get("target_timings"):
            raise click.ClickException(
                f"{manifest}: item {item['id']} has no 'timings' and 'target_timings': "
                "this needs a corpus with both voices' reference times"
            )
        pairs.append((source, item))
    return pairs


@click.command()
@click.option("--checkpoint", type=click.Path(exists=True, path_type=Path), required=True)
@click.option(
    "--in",
    "manifest",
    type=click.Path(exists=True, path_type=Path),
    required=True,
    help="The test manifest with both voices' timings.",
)
@click.option(
    "--converted",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="aligner convert's output folder of the same checkpoint.",
)
@click.option("--out", type=click.Path(path_type=Path), required=True)
@click.option("--vocoder", default=None, help="As aligner convert's (default: CHECKPOINT/vocoder).")
@click.option(
    "--level", type=click.Choice(["phones", "words"]), default="phones", show_default=True
)
@click.option("--force", is_flag=True, help="Overwrite --out.")
def main(checkpoint, manifest, converted, out, vocoder, level, force) -> None:
    """Decode a FastVC on the reference timing of both voices."""
    from aligner.audio.io import load_audio, save_audio
    from aligner.data.manifest import write_manifest
    from aligner.inference import load_speech_model
    from aligner.inference.common import InferenceError
    from aligner.inference.vocoders import load_vocoder
    from aligner.models.fastpitch.layers import round_along
    from aligner.models.fastvc import FastVC

    pairs = _items(manifest, converted)
    paths = [out / "manifest.jsonl"] + [out / Path(done["audio"]).name for _, done in pairs]
    existing = [p for p in paths if p.exists()]
    if existing and not force:
        raise click.ClickException(f"{existing[0]} exists; pass --force to overwrite")
    try:
        speech = load_speech_model(checkpoint, "convert", "cpu")
        spec = vocoder or str(Path(checkpoint) / "vocoder")
        voc = load_vocoder(spec, speech.mel_cfg)
    except InferenceError as err:
        raise click.ClickException(str(err)) from None
    if not isinstance(speech.model, FastVC):
        raise click.ClickException(f"{checkpoint}: not a FastVC checkpoint")
    net, sr = speech.model, speech.mel_cfg.sample_rate
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for item, done in pairs:
        src = speech.source_mel(load_audio(item["audio"], sr)[0])
        tgt_frames = len(speech.target_mel(load_audio(item["target_audio"], sr)[0]))
        try:
            rates = reference_step_frames(
                item["timings"],
                item["target_timings"],
                len(src),
                tgt_frames,
                net.config.reduction,
                level,
            )
        except ValueError as err:
            raise click.ClickException(f"{manifest}: item {item['id']}: {err}") from None
        frames = rates.float()[None]
        durations = round_along(frames, torch.ones_like(frames, dtype=torch.bool))
        with torch.no_grad():
            res = net(src[None], torch.tensor([len(src)]), durations)
        path = out / Path(done["audio"]).name
        save_audio(path, voc(speech.denormalize(res.mel_post[0])), sr)
        written.append({**done, "audio": str(path)})
    write_manifest(out / "manifest.jsonl", written)
    click.echo(f"wrote {len(written)} items to {out}")
    summary = {"checkpoint": str(checkpoint), "level": level, "items": len(written)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
