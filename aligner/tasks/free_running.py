"""Free-running synthesis at validation (TTS and VC): a few fixed inputs decoded as
``aligner synthesize`` / ``aligner convert`` do, nothing teacher-forced, so TensorBoard
shows whether the model can speak on its own and not only follow the true frames.

For each input: the alignment, the mel, a short Griffin-Lim audio (``audio_items``), the
stop probability per decoder step (the title says whether it stopped by itself); over
them, scalars ``infer/...``: the core's alignment metrics, ``stopped`` (fraction that
stopped by itself) and ``length_ratio`` (frames per source position). Decoding is capped
at ``data.log.infer_max_steps`` decoder steps; ``data.log.infer_items: 0`` turns it off.
"""

from __future__ import annotations

from typing import Any

import torch

from aligner.attention.metrics import alignment_metrics
from aligner.data.collate import pad

STOP_THRESHOLD = 0.5


def log_free_running(task: Any, model: Any, step: int, logger: Any) -> dict[str, float]:
    """Decode `task.infer_sources()` with `model` and log them; the ``infer/...`` means."""
    sources = task.infer_sources()
    if not sources:
        return {}
    device = next(model.parameters()).device
    names, seqs, labels = zip(*sources)
    src, lengths, _ = pad([s.to(device) for s in seqs])
    mel, dec = model.generate(
        src,
        lengths.to(device),
        stop_threshold=STOP_THRESHOLD,
        max_steps=task.log.infer_max_steps,
    )
    reduce = getattr(model.encoder, "reduced_lengths", None)
    enc_len = (reduce(lengths) if reduce is not None else lengths).to(device)
    steps = -(-dec.lengths // task.r)
    required = task.infer_required(src) if hasattr(task, "infer_required") else None
    per_item = alignment_metrics(dec.alignments.float(), steps, enc_len, required, task.r)
    out = task.summary({k: v.cpu() for k, v in per_item.items()})
    out["stopped"] = float((~dec.hit_max).float().mean())
    out["length_ratio"] = float((dec.lengths.float() / enc_len.float()).mean())
    if logger is not None and getattr(logger, "enabled", True):
        for i, name in enumerate(names):
            _log_item(task, logger, step, name, labels[i], mel[i], dec, i, int(enc_len[i]))
    return {f"infer/{k}": v for k, v in out.items()}


def _log_item(
    task: Any, logger: Any, step: int, name: str, labels: Any, mel: Any, dec: Any, i: int, n: int
) -> None:
    t = int(dec.lengths[i])
    s = -(-t // task.r)
    logger.alignment(
        f"infer/alignment/{name}", dec.alignments[i, :s, :n], step, labels, **task.timing()
    )
    logger.mel(f"infer/mel/{name}", mel[:t], step)
    how = "hit the step limit" if bool(dec.hit_max[i]) else f"stopped by itself at step {s}"
    stop = torch.sigmoid(dec.stop_logits[i, :s].float())
    logger.curve(f"infer/stop/{name}", stop, step, threshold=STOP_THRESHOLD, title=how)
    if i < task.log.audio_items:
        wav = task.vocoder()(task.target_stats.denormalize(mel[:t].float().cpu()))
        logger.audio(f"infer/audio/{name}", wav, task.mel_cfg.sample_rate, step)


def texts_markdown(rows: list[tuple[str, str]]) -> str:
    """A markdown table of (id, text) rows for TensorBoard's Text dashboard."""
    lines = ["| id | text |", "| --- | --- |"]
    lines += [f"| {name} | {text.replace('|', '/')} |" for name, text in rows]
    return "\n".join(lines)
