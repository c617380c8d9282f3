"""Text-to-speech (Tacotron) as a trainer task.

Recipe sections::

    task: tts
    data: {train: train.jsonl, valid: valid.jsonl, tokenizer: chars, mel: {n_mels: 80, ...}}
    model: {r: 2, encoder: {...}, decoder: {attention: location, ...}, postnet: {...},
            loss: {guided: {weight: 1.0, mode: exp, decay: 0.9995}}}

The checkpoint's ``symbols`` hold everything inference needs besides the weights:
``task``, ``model`` (TacotronConfig dict), ``symbols`` (SymbolTable dict), ``tokenizer``,
``mel`` (MelConfig dict), ``stats`` (target MelStats dict); see ``Tacotron.from_symbols``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch

from aligner.alignment.tiers import optional_tokens, token_tiers
from aligner.attention.search import frame_durations
from aligner.data.collate import collate_tts
from aligner.families import role
from aligner.models.tacotron.model import Tacotron
from aligner.tasks.guides import Guides, guide_folders, read_records, tts_guides
from aligner.tasks.speech import SpeechTask, model_config
from aligner.tasks.speech_data import text_speech_data
from aligner.tasks.truth import References, TruthErrors
from aligner.text.symbols import SymbolTable


class TTSTask(SpeechTask):
    """Text -> mel Tacotron training."""

    def __init__(
        self,
        *args: Any,
        table: SymbolTable,
        kind: str = "chars",
        tokenizer: Any = None,
        add_eos: bool = True,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.table, self.kind, self.tokenizer, self.add_eos = table, kind, tokenizer, add_eos
        self._infer: list[tuple[str, torch.Tensor, list[str]]] | None = None
        self._infer_texts: dict[str, str] = {}
        self._sound: torch.Tensor | None = None
        self.references = References(self.valid_set.items, self.mel_cfg)

    def truth(self, out: Any, batch: dict[str, Any], errors: TruthErrors) -> None:
        """Boundary errors of the frame-level durations (`aligner.attention.search`) of the
        teacher-forced alignments against the items' reference timings."""
        sec = self.mel_cfg.hop_length / self.mel_cfg.sample_rate
        for i, uid in enumerate(batch["ids"]):
            reference = self.references.get(str(uid))
            if reference is None:
                continue
            n, frames = int(batch["token_lengths"][i]), int(batch["mel_lengths"][i])
            tokens = self.table.decode(batch["tokens"][i, :n].tolist())
            weights = out.alignments[i, : -(-frames // self.r), :n].float().cpu().numpy()
            try:
                durations = frame_durations(weights, self.r, frames, optional_tokens(tokens))
            except ValueError:  # fewer frames than tokens
                errors.unmatched += 1
                continue
            pauses = self.references.pauses(uid, frames)
            tiers = token_tiers(tokens, durations.tolist(), sec, self.kind, pauses=pauses)
            errors.add(reference, tiers)

    def source(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return batch["tokens"], batch["token_lengths"]

    def infer_sources(self) -> list[tuple[str, torch.Tensor, list[str]]]:
        """The first ``log.infer_items`` of ``log.infer_texts`` that are no training text
        and that the symbol table can spell, as token ids (computed once)."""
        if self._infer is None:
            self._infer = []
            seen = {" ".join(str(it["text"]).lower().split()) for it in self.train_set.items}
            for text in self.log.infer_texts:
                if len(self._infer) >= self.log.infer_items or self.tokenizer is None:
                    break
                if " ".join(text.lower().split()) in seen:
                    continue
                try:
                    ids = self.table.encode(self.tokenizer.tokenize(text))
                except ValueError as err:  # UnknownSymbolError: another alphabet
                    print(f"note: data.log.infer_texts: {text!r} skipped ({err})", file=sys.stderr)
                    continue
                ids = [*ids, self.table.eos_id] if self.add_eos else ids
                name = f"sentence{len(self._infer) + 1}"
                self._infer.append((name, torch.tensor(ids), self.table.decode(ids)))
                self._infer_texts[name] = text
        return self._infer

    def infer_text(self, name: str) -> str:
        return self._infer_texts.get(name, name)

    def infer_required(self, src: torch.Tensor) -> torch.Tensor:
        return self.sound_positions(src)

    def required_positions(self, batch: dict[str, Any]) -> torch.Tensor:
        return self.sound_positions(batch["tokens"])

    def sound_positions(self, ids: torch.Tensor) -> torch.Tensor:
        """``(B, N)`` bool: the tokens of sounds, which the skip metric counts; not word
        separators, punctuation or the ``<s>``/``</s>`` markers, which may rightly get no
        frames (`aligner.alignment.tiers.optional_tokens`)."""
        if self._sound is None:
            self._sound = torch.from_numpy(~optional_tokens(self.table.symbols))
        return self._sound.to(ids.device)[ids]

    def source_labels(self, batch: dict[str, Any], index: int) -> list[str]:
        n = int(batch["token_lengths"][index])
        return self.table.decode(batch["tokens"][index, :n].tolist())

    def collate(self, examples: list[dict[str, Any]]) -> dict[str, Any]:
        batch = collate_tts(examples)
        return self.add_guide(batch, batch["token_lengths"], batch["tokens"].size(1))


def build(cfg: Any, data_dir: Path) -> TTSTask:
    """The TTS task of an ``ExperimentConfig`` from manifests under ``data_dir``."""
    corpus = text_speech_data(cfg, data_dir)
    tacotron_cfg, loss_cfg = model_config(cfg.model, corpus.mel_cfg.n_mels, len(corpus.table))
    model = Tacotron.from_config(tacotron_cfg)
    task = TTSTask(
        model,
        corpus.train_set,
        corpus.valid_set,
        loss_cfg,
        corpus.mel_cfg,
        corpus.stats,
        corpus.data.log,
        table=corpus.table,
        kind=corpus.data.tokenizer,
        tokenizer=corpus.tokenizer,
        add_eos=corpus.data.add_eos,
    )
    task.symbols = corpus.symbols("tts", tacotron_cfg.to_dict())
    task.skips_suspect = role(cfg.family, cfg.task).skips_suspect
    folders = guide_folders(loss_cfg, corpus.data.durations, data_dir, "durations")
    if folders:
        records = read_records(folders, corpus.mel_cfg, "durations")
        width, r = loss_cfg.guided.width, tacotron_cfg.r
        frame = corpus.mel_cfg.hop_length / corpus.mel_cfg.sample_rate
        parts = [
            tts_guides(dataset, corpus.table.decode, records, r, width, split, frame)
            for dataset, split in ((corpus.train_set, "training"), (corpus.valid_set, "validation"))
        ]
        task.guides = Guides({**parts[0].paths, **parts[1].paths}, tacotron_cfg.r, width)
    return task
