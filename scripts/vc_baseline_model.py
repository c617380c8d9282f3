"""A frame-wise voice-conversion baseline, the way VC was done before seq2seq (Desai et
al. 2009, Chen et al. 2014): a regression from source frames to the target frames that
DTW pairs them with, then a vocoder. It keeps the source's timing: the output has the
source's length, so what the seq2seq model adds (in duration above all) shows beside it.

Training: log-mels (`MelConfig`, the recipes' features) of each training pair, each voice
normalized by its own per-bin statistics; DTW (exact, Euclidean) on the DCT c1..c24 of
the normalized log-mels pairs every target frame with source frames; an MLP maps the
window of ``2 * context + 1`` source frames around a paired source frame to the paired
target frame (L1 loss, Adam), for `epochs` passes or `max_minutes`, whichever ends
first. Conversion: the MLP on every source frame, denormalized with the target voice's
statistics, the vocoder a ``--vocoder`` spec names (`aligner.inference.vocoders`, as
`aligner convert`; Griffin-Lim by default).

A comparison system, not part of the library: `scripts/vc_baseline.py` (train, convert,
vocode) imports it from beside itself, with its own ``model.pt`` format.

    summary = train_baseline(Path("data"), Path("exp/baseline/model.pt"))
    convert_baseline(Path("exp/baseline/model.pt"), Path("data/test.jsonl"), Path("exp/baseline/converted"))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from aligner.data.manifest import manifest_items
from aligner.inference.common import InferenceError, output_names


@dataclass(frozen=True)
class BaselineConfig:
    """The regression's size and training budget (module docstring)."""

    context: int = 4  # source frames on each side of the centre frame
    hidden: int = 512
    layers: int = 2
    dropout: float = 0.1
    epochs: int = 30
    max_minutes: float = 10.0
    batch_size: int = 256
    lr: float = 1e-3
    seed: int = 0


def build_mlp(n_mels: int, cfg: BaselineConfig) -> nn.Sequential:
    """(N, (2C+1) * n_mels) source windows -> (N, n_mels) normalized target frames."""
    dims = [(2 * cfg.context + 1) * n_mels] + [cfg.hidden] * cfg.layers
    layers: list[nn.Module] = []
    for d_in, d_out in zip(dims, dims[1:]):
        layers += [nn.Linear(d_in, d_out), nn.ReLU(), nn.Dropout(cfg.dropout)]
    return nn.Sequential(*layers, nn.Linear(dims[-1], n_mels))


def _mels(items: list[dict], key: str, mel_cfg: Any, where: str) -> list[torch.Tensor]:
    """(T_i, n_mels) natural-log mels of ``item[key]``; InferenceError naming a bad item."""
    from aligner.audio.features import log_mel
    from aligner.audio.io import load_audio

    out = []
    for item in items:
        try:
            wav, _ = load_audio(item[key], mel_cfg.sample_rate, min_samples=mel_cfg.win_length)
        except ValueError as err:  # AudioError names the file
            raise InferenceError(f"{where} item {item['id']}: {str(err).splitlines()[0]}") from None
        out.append(log_mel(wav, mel_cfg))
    return out


def _pairs(src: torch.Tensor, tgt: torch.Tensor) -> np.ndarray:
    """(Ts, M), (Tt, M) normalized log-mels -> (N, 2) DTW index pairs (source, target)."""
    from aligner.audio.distortion import dtw_path, log_mel_cepstra

    return dtw_path(log_mel_cepstra(src.numpy()), log_mel_cepstra(tgt.numpy()))


def _windows(frames: torch.Tensor, index: torch.Tensor, context: int) -> torch.Tensor:
    """(F, M) edge-padded frames, (N,) centre indices -> (N, (2C+1) * M) windows."""
    offsets = torch.arange(-context, context + 1)
    return frames[index[:, None] + offsets].flatten(1)


class _Frames:
    """Every utterance's frames end to end, each padded with `context` copies of its edge
    frames (so a window never crosses into a neighbour), and the DTW pairs as indices."""

    def __init__(self, sources: list, targets: list, context: int) -> None:
        srcs, tgts, src_idx, tgt_idx = [], [], [], []
        s_off = t_off = 0
        for src, tgt in zip(sources, targets):
            path = torch.from_numpy(_pairs(src, tgt))
            padded = torch.cat([src[:1].expand(context, -1), src, src[-1:].expand(context, -1)])
            srcs.append(padded)
            tgts.append(tgt)
            src_idx.append(path[:, 0] + s_off + context)
            tgt_idx.append(path[:, 1] + t_off)
            s_off, t_off = s_off + len(padded), t_off + len(tgt)
        self.src, self.tgt = torch.cat(srcs), torch.cat(tgts)
        self.src_idx, self.tgt_idx = torch.cat(src_idx), torch.cat(tgt_idx)


def _loss(model: nn.Module, data: _Frames, index: torch.Tensor, context: int) -> torch.Tensor:
    x = _windows(data.src, data.src_idx[index], context)
    return (model(x) - data.tgt[data.tgt_idx[index]]).abs().mean()


def _fit(model: nn.Module, train: _Frames, valid: _Frames, cfg: BaselineConfig, log) -> dict:
    """Adam on random batches of DTW pairs; stops after `cfg.epochs` or `cfg.max_minutes`."""
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    start, epoch, n = time.perf_counter(), 0, len(train.src_idx)
    out_of_time = False
    while epoch < cfg.epochs and not out_of_time:
        model.train()
        for batch in torch.randperm(n).split(cfg.batch_size):
            opt.zero_grad()
            _loss(model, train, batch, cfg.context).backward()
            opt.step()
            if time.perf_counter() - start > 60 * cfg.max_minutes:
                out_of_time = True
                break
        epoch += 1
        model.eval()
        with torch.no_grad():
            valid_l1 = float(_loss(model, valid, torch.arange(len(valid.src_idx)), cfg.context))
        log(f"epoch {epoch}: valid L1 {valid_l1:.4f} ({time.perf_counter() - start:.0f} s)")
    minutes = (time.perf_counter() - start) / 60
    return {"epochs": epoch, "minutes": round(minutes, 2), "valid_l1": round(valid_l1, 4)}


def train_baseline(
    data_dir: Path,
    out: Path,
    mel: dict | None = None,
    cfg: BaselineConfig | None = None,
    force: bool = False,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Train the baseline on ``data_dir/train.jsonl`` (validated on ``valid.jsonl``) and
    write it to `out` (one file: weights, statistics, settings); returns a summary
    (pairs, epochs, minutes, valid L1). `mel`: `MelConfig` settings (default: the
    recipes')."""
    from aligner.audio.features import MelConfig, MelStats
    from aligner.files import write_atomic

    cfg = cfg or BaselineConfig()
    if out.exists() and not force:
        raise InferenceError(f"{out} exists; pass --force to overwrite it")
    mel_cfg = MelConfig.from_dict(mel or {})
    torch.manual_seed(cfg.seed)
    sets = {}
    for split in ("train", "valid"):
        path = Path(data_dir) / f"{split}.jsonl"
        items = manifest_items(path, "--data", ("audio", "target_audio"), "give a VC corpus")
        sets[split] = (
            _mels(items, "audio", mel_cfg, str(path)),
            _mels(items, "target_audio", mel_cfg, str(path)),
        )
    stats = [MelStats.compute(sets["train"][k]) for k in (0, 1)]
    frames = {
        split: _Frames(
            [stats[0].normalize(m) for m in src], [stats[1].normalize(m) for m in tgt], cfg.context
        )
        for split, (src, tgt) in sets.items()
    }
    log(f"{len(frames['train'].src_idx)} DTW frame pairs from {len(sets['train'][0])} utterances")
    model = build_mlp(mel_cfg.n_mels, cfg)
    summary = _fit(model, frames["train"], frames["valid"], cfg, log)
    state = {
        "model": model.state_dict(),
        "config": asdict(cfg),
        "mel": mel_cfg.to_dict(),
        "stats_src": stats[0].to_dict(),
        "stats": stats[1].to_dict(),
    }
    write_atomic(out, lambda fh: torch.save(state, fh))
    return {"pairs": len(frames["train"].src_idx), **summary}


def _load(path: Path) -> tuple[nn.Module, dict]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        model = build_mlp(len(state["stats"]["mean"]), BaselineConfig(**state["config"]))
        model.load_state_dict(state["model"])
    except FileNotFoundError:
        raise InferenceError(f"{path} does not exist; train it first (train_baseline)") from None
    except Exception as err:  # torch.load raises many types for a foreign or broken file
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InferenceError(f"{path} is not a frame-wise baseline model ({first})") from None
    return model.eval(), state


def convert_baseline(
    model_path: Path,
    manifest: Path,
    out_dir: Path,
    griffin_lim_iters: int = 60,
    force: bool = False,
    vocoder: str | None = None,
) -> Path:
    """Convert every item's ``audio`` of `manifest` into ``out_dir/ID.wav`` and write
    ``out_dir/manifest.jsonl`` as `aligner convert` does (converted ``audio``,
    ``source_audio``, the item's other keys); returns that manifest's path. `vocoder` is a
    ``--vocoder`` spec (`aligner.inference.vocoders.load_vocoder`; None: Griffin-Lim)."""
    from aligner.audio.features import MelStats

    model, state = _load(model_path)
    context = state["config"]["context"]
    src_stats, tgt_stats = (
        MelStats.from_dict(state["stats_src"]),
        MelStats.from_dict(state["stats"]),
    )

    def convert(mel: torch.Tensor) -> torch.Tensor:
        src = src_stats.normalize(mel)
        padded = torch.cat([src[:1].expand(context, -1), src, src[-1:].expand(context, -1)])
        with torch.no_grad():
            pred = model(_windows(padded, torch.arange(len(src)) + context, context))
        return tgt_stats.denormalize(pred)

    where = (manifest, out_dir, vocoder, griffin_lim_iters, force)
    return _vocode_each(state, *where, "audio", "give a manifest of sources", convert)


def vocode_targets(
    model_path: Path,
    manifest: Path,
    out_dir: Path,
    griffin_lim_iters: int = 60,
    force: bool = False,
    vocoder: str | None = None,
) -> Path:
    """The vocoder's floor: every item's ``target_audio`` through the log-mel of the
    baseline in `model_path` and the vocoder (`vocoder`; None: Griffin-Lim) back, into ``out_dir/ID.wav`` with
    ``out_dir/manifest.jsonl`` (as `convert_baseline` writes). What a conversion that got
    the target's mel exactly right would score through this vocoder."""
    _, state = _load(model_path)
    where = (manifest, out_dir, vocoder, griffin_lim_iters, force)
    return _vocode_each(state, *where, "target_audio", "give a parallel manifest", lambda m: m)


def _vocode_each(
    state: dict,
    manifest: Path,
    out_dir: Path,
    vocoder_spec: str | None,
    griffin_lim_iters: int,
    force: bool,
    key: str,
    hint: str,
    make_mel: Callable[[torch.Tensor], torch.Tensor],
) -> Path:
    """``make_mel`` of the log-mel of each item's `key` audio (the baseline file's mel
    settings), through the vocoder `vocoder_spec` into ``out_dir/ID.wav``; ``out_dir/manifest.jsonl``
    keeps the item's keys with ``audio`` the new file and ``source_audio`` the item's."""
    from aligner.audio.features import MelConfig
    from aligner.audio.io import save_audio
    from aligner.data.manifest import write_manifest
    from aligner.inference.vocoders import load_vocoder

    out_manifest = Path(out_dir) / "manifest.jsonl"
    if out_manifest.exists() and not force:
        raise InferenceError(f"{out_manifest} exists; pass --force to overwrite it")
    mel_cfg = MelConfig.from_dict(state["mel"])
    items = manifest_items(Path(manifest), "--in", (key,), hint)
    vocoder, written = load_vocoder(vocoder_spec, mel_cfg, griffin_lim_iters=griffin_lim_iters), []
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    names = output_names([it["id"] for it in items], str(manifest))
    for item, name, mel in zip(items, names, _mels(items, key, mel_cfg, str(manifest))):
        path = Path(out_dir) / f"{name}.wav"
        save_audio(path, vocoder(make_mel(mel)), mel_cfg.sample_rate)
        written.append({**item, "audio": str(path), "source_audio": item["audio"]})
    return write_manifest(out_manifest, written)
