"""Sequence-to-sequence voice conversion (mel -> mel Tacotron) as a trainer task.

Recipe sections as TTS (see :mod:`aligner.tasks.tts`; ``data:`` is
:class:`~aligner.tasks.speech_data.SpeechData`) with ``model.encoder.kind: mel``; manifests
hold parallel items (``audio`` = source voice, ``target_audio`` = target voice). The
checkpoint's ``symbols`` hold ``task``, ``model``, ``mel``, ``stats_src`` and ``stats``
(target statistics).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from aligner.alignment.intervals import Timings
from aligner.attention.search import frame_durations
from aligner.config import ConfigError
from aligner.data.collate import collate_vc
from aligner.families import role
from aligner.models.tacotron.model import Tacotron
from aligner.tasks.guides import Guides, guide_folders, read_records, vc_guides
from aligner.tasks.speech import SpeechTask, model_config
from aligner.tasks.speech_data import parallel_corpus
from aligner.tasks.truth import TruthErrors, timing_pairs


class VCTask(SpeechTask):
    """Source mel -> target mel Tacotron training."""

    pairs: dict[str, tuple[Timings, Timings]] | None = None  # the truth curve's references

    def source(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return batch["src_mel"], batch["src_lengths"]

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = collate_vc(examples)
        reduction = self.model.config.encoder.reduction
        n_sources = torch.div(
            batch["src_lengths"] + reduction - 1, reduction, rounding_mode="floor"
        )
        return self.add_guide(batch, n_sources, -(-batch["src_mel"].size(1) // reduction))

    def truth(self, out: Any, batch: dict[str, Any], errors: TruthErrors) -> None:
        """The mapping errors (`TruthErrors.add_mapping`) of the teacher-forced alignments'
        frame durations per encoder position against the items' reference timings of both
        voices (``timings``, ``target_timings``); items without them add nothing."""
        if self.pairs is None:
            self.pairs = timing_pairs(self.valid_set.items)
        frame = self.mel_cfg.hop_length / self.mel_cfg.sample_rate
        reduction = self.model.config.encoder.reduction
        for i, uid in enumerate(batch["ids"]):
            pair = self.pairs.get(str(uid))
            if pair is None:
                continue
            n, frames = int(out.enc_mask[i].sum()), int(batch["mel_lengths"][i])
            weights = out.alignments[i, : -(-frames // self.r), :n].float().cpu().numpy()
            optional = np.ones(n, bool)  # a target may be shorter than its source
            durations = frame_durations(weights, self.r, frames, optional)
            errors.add_mapping(durations.tolist(), frame * reduction, frame, pair)

    def infer_sources(self) -> list[tuple[str, torch.Tensor, None]]:
        """The source mels of the first ``log.infer_items`` validation items."""
        n = min(self.log.infer_items, len(self.valid_set))
        items = (self.valid_set[i] for i in range(n))
        return [(item["id"], item["src_mel"], None) for item in items]


def build(cfg: Any, data_dir: Path) -> VCTask:
    """The VC task of an ``ExperimentConfig`` from parallel manifests under ``data_dir``."""
    corpus = parallel_corpus(cfg, data_dir)
    data, mel_cfg, train_set, valid_set = (
        corpus.data, corpus.mel_cfg, corpus.train_set, corpus.valid_set
    )  # fmt: skip
    stats_src, stats_tgt = corpus.stats_src, corpus.stats_tgt
    model_section = dict(cfg.model)
    encoder = dict(model_section.get("encoder") or {})
    if encoder.setdefault("kind", "mel") != "mel":
        raise ConfigError(f"model.encoder.kind must be 'mel' for task vc, got {encoder['kind']!r}")
    model_section["encoder"] = encoder
    tacotron_cfg, loss_cfg = model_config(model_section, mel_cfg.n_mels)
    model = Tacotron.from_config(tacotron_cfg)
    task = VCTask(model, train_set, valid_set, loss_cfg, mel_cfg, stats_tgt, data.log)
    task.skips_suspect = role(cfg.family, cfg.task).skips_suspect
    task.symbols = {
        "task": "vc",
        "model": tacotron_cfg.to_dict(),
        "mel": mel_cfg.to_dict(),
        "stats_src": stats_src.to_dict(),
        "stats": stats_tgt.to_dict(),
    }
    folders = guide_folders(loss_cfg, data.durations, data_dir, "durations")
    if folders:
        sources = guide_folders(loss_cfg, data.source_durations, data_dir, "source_durations")
        target_records = read_records(folders, mel_cfg, "durations", target=True)
        source_records = read_records(sources, mel_cfg, "source_durations")
        reduction, r, width = tacotron_cfg.encoder.reduction, tacotron_cfg.r, loss_cfg.guided.width
        paths = {}
        frame = mel_cfg.hop_length / mel_cfg.sample_rate
        for dataset, split in ((train_set, "training"), (valid_set, "validation")):
            guides = vc_guides(
                dataset, source_records, target_records, reduction, r, width, split, frame
            )
            paths.update(guides.paths)
        task.guides = Guides(paths, r, width)
    return task
