"""Trained speech models ready for use: checkpoint loading, encoding and batched decoding.

``load_speech_model(path, task)`` turns an ``aligner train`` checkpoint into a
:class:`SpeechModel` (the Tacotron in eval mode plus its front end: tokenizer and symbol
table for TTS, mel settings and normalization statistics). ``SpeechModel`` then
synthesizes text, converts mels, or runs teacher forcing to extract alignments, always in
length-sorted batches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from aligner.checkpoint import CheckpointError, load_checkpoint
from aligner.data.collate import length_batches, pad
from aligner.inference.common import InferenceError

TEXT_TASKS = ("tts", "align")
VERBS = {"tts": "aligner synthesize", "vc": "aligner convert", "align": "aligner align"}


@dataclass
class Generated:
    """One synthesized or converted utterance.

    mel: (T, M) natural-log mel, denormalized (ready for the vocoder).
    alignment: (S, N) attention weights, S = ceil(T / r) decoder steps, N source positions.
    hit_max: True when decoding stopped at the length limit instead of the stop token.
    """

    mel: torch.Tensor
    alignment: torch.Tensor
    hit_max: bool


@dataclass
class SpeechModel:
    """A trained Tacotron (TTS or VC) in eval mode with what inference needs around it.

    For TTS ``tokenizer`` and ``symbols`` turn text into ids; for VC ``src_stats``
    normalizes source mels. ``stats`` (de)normalizes the model's output mels.
    """

    task: str
    model: Any
    mel_cfg: Any
    stats: Any
    step: int
    path: Path
    tokenizer: Any = None
    symbols: Any = None
    src_stats: Any = None
    add_eos: bool = False
    add_bos: bool = False

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def r(self) -> int:
        """Frames per alignment row (a Tacotron's reduction factor; 1 for the aligner)."""
        return int(getattr(self.model, "r", 0) or self.model.decoder.r)

    @property
    def has_text(self) -> bool:
        """Whether the source is text (TTS and the alignment model) rather than a mel."""
        return self.task in TEXT_TASKS

    # ------------------------------------------------------------------ inputs
    def encode_text(self, text: str, where: str = "text") -> torch.Tensor:
        """Text -> token ids (N,) long; InferenceError for empty text or unknown symbols."""
        from aligner.text.symbols import UnknownSymbolError

        tokens = self.tokenizer.tokenize(text)
        if not tokens:
            raise InferenceError(f"{where} is empty after cleaning: give some words to say")
        try:
            ids = self.symbols.encode(tokens)
        except UnknownSymbolError as err:
            raise InferenceError(f"{where}: {err}") from None
        if self.add_eos:
            ids = [*ids, self.symbols.eos_id]
        if self.add_bos:
            ids = [self.symbols.bos_id, *ids]
        return torch.tensor(ids, dtype=torch.long)

    def source_mel(self, wav: torch.Tensor) -> torch.Tensor:
        """VC: waveform (L,) at ``mel_cfg.sample_rate`` -> normalized source log-mel (S, M)."""
        from aligner.audio.features import log_mel

        mel = log_mel(wav, self.mel_cfg)
        return self.src_stats.normalize(mel) if self.src_stats is not None else mel

    def target_mel(self, wav: torch.Tensor) -> torch.Tensor:
        """Waveform (L,) -> normalized target-side log-mel (T, M) (teacher forcing)."""
        from aligner.audio.features import log_mel

        mel = log_mel(wav, self.mel_cfg)
        return self.stats.normalize(mel) if self.stats is not None else mel

    def denormalize(self, mel: torch.Tensor) -> torch.Tensor:
        return self.stats.denormalize(mel) if self.stats is not None else mel

    def memory_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        """Encoder memory lengths (B,) for source lengths (B,) (a VC encoder may reduce time)."""
        reduce = getattr(self.model.encoder, "reduced_lengths", None)
        return reduce(lengths) if reduce is not None else lengths

    # ------------------------------------------------------------------ decoding
    @torch.no_grad()
    def generate(
        self,
        sources: Sequence[torch.Tensor],
        batch_size: int = 8,
        max_length_ratio: float = 10.0,
        window: tuple[int, int] | None = None,
        stop_threshold: float = 0.5,
    ) -> list[Generated]:
        """Free-running decoding of token ids (N,) or source mels (S, M), in length-sorted
        batches; results in input order."""
        out: list[Generated | None] = [None] * len(sources)
        for idx in length_batches([len(s) for s in sources], batch_size, longest_first=True):
            src, lengths, _ = pad([sources[i].to(self.device) for i in idx])
            mel, dec = self.model.generate(
                src,
                lengths.to(self.device),
                stop_threshold=stop_threshold,
                max_length_ratio=max_length_ratio,
                window=window,
            )
            enc_len = self.memory_lengths(lengths)
            for j, i in enumerate(idx):
                t = int(dec.lengths[j])
                steps = -(-t // self.r)
                out[i] = Generated(
                    self.denormalize(mel[j, :t]).cpu(),
                    dec.alignments[j, :steps, : int(enc_len[j])].cpu(),
                    bool(dec.hit_max[j]),
                )
        return out  # type: ignore[return-value]

    @torch.no_grad()
    def teacher_force(
        self, sources: Sequence[torch.Tensor], mels: Sequence[torch.Tensor], batch_size: int = 8
    ) -> list[torch.Tensor]:
        """Alignments (S_i, N_i) of sources with their known normalized mels (T_i, M).

        The prenet's dropout, which stays on when synthesizing (Tacotron 2), is off here:
        the alignment of a known recording is a measurement and comes out the same every
        time (with it on, the word boundaries of the same checkpoint moved by 3 ms from
        run to run)."""
        if self.task == "align":  # no prenet
            return self._teacher_force(sources, mels, batch_size)
        prenet = self.model.decoder.prenet
        saved, prenet.always_dropout = prenet.always_dropout, False
        try:
            return self._teacher_force(sources, mels, batch_size)
        finally:
            prenet.always_dropout = saved

    def _teacher_force(self, sources, mels, batch_size: int) -> list[torch.Tensor]:
        out: list[torch.Tensor | None] = [None] * len(sources)
        for idx in length_batches([len(m) for m in mels], batch_size, longest_first=True):
            src, src_len, _ = pad([sources[i].to(self.device) for i in idx])
            mel, mel_len, _ = pad([mels[i].to(self.device) for i in idx])
            inputs = (src, src_len.to(self.device), mel, mel_len.to(self.device))
            if self.task == "align":  # the prior over the frames with sound
                spans = self.model.spans(self.denormalize(mel), mel_len, self.mel_cfg.power)
                res = self.model(*inputs, spans=spans)
            else:
                res = self.model(*inputs)
            enc_len = res.enc_mask.sum(1)
            for j, i in enumerate(idx):
                steps = -(-int(mel_len[j]) // self.r)
                out[i] = res.alignments[j, :steps, : int(enc_len[j])].float().cpu()
        return out  # type: ignore[return-value]

    def vocode(self, mel: torch.Tensor, n_iter: int = 60) -> torch.Tensor:
        """Griffin-Lim: log-mel (T, M) -> waveform (L,) at ``mel_cfg.sample_rate``.

        A mel shorter than one STFT window is padded with silence (the log floor) first.
        """
        import math

        from aligner.audio.vocoder import GriffinLim

        cfg = self.mel_cfg
        short = cfg.n_fft // cfg.hop_length + 2 - len(mel)
        if short > 0:
            silence = mel.new_full((short, mel.size(1)), math.log(cfg.log_floor))
            mel = torch.cat([mel, silence])
        return GriffinLim(cfg, n_iter=n_iter)(mel.to(self.device)).cpu()


def load_speech_model(
    path: str | Path, task: str | None = None, device: str | torch.device = "cpu"
) -> SpeechModel:
    """An ``aligner train`` checkpoint -> :class:`SpeechModel` in eval mode.

    `task` (``"tts"``, ``"vc"`` or ``"align"``: the alignment model, which only aligns) is
    checked against the checkpoint's; InferenceError (one line, naming the file) for a
    missing, corrupt or foreign checkpoint or the wrong task.
    """
    path = Path(path)
    try:
        ckpt = load_checkpoint(path, map_location="cpu")
    except CheckpointError as err:
        raise InferenceError(str(err)) from None
    symbols = ckpt.get("symbols") or {}
    found = symbols.get("task") or (ckpt.get("config") or {}).get("task")
    if found not in VERBS:
        raise InferenceError(
            f"{path} is a {found!r} checkpoint, not a speech one (tts, vc or align); "
            "use `aligner g2p`/`aligner translate` for text models"
        )
    if task is not None and found != task:
        raise InferenceError(
            f"{path} is a {found} checkpoint, not {task}; use `{VERBS[found]}` with it"
        )
    speech = _build(ckpt, found, path)
    speech.model.to(device)
    return speech


def _build(ckpt: dict[str, Any], task: str, path: Path) -> SpeechModel:
    """Rebuild the model and front end from the checkpoint's ``symbols`` (see
    aligner/tasks/tts.py and vc.py: ``model``, ``mel``, ``stats``, ...)."""
    from aligner.config import ConfigError
    from aligner.models.aligner import AlignmentModel
    from aligner.models.tacotron import Tacotron

    symbols = ckpt.get("symbols") or {}
    front = _front_end(symbols, task, path)
    try:
        family = AlignmentModel if task == "align" else Tacotron
        model = family.from_symbols(symbols, ckpt["model"])
    except (KeyError, ConfigError, RuntimeError, ValueError) as err:
        first = str(err).splitlines()[0]
        raise InferenceError(f"{path}: weights do not match its model config ({first})") from None
    model.eval()
    return SpeechModel(task=task, model=model, step=int(ckpt.get("step", 0)), path=path, **front)


def _front_end(symbols: dict[str, Any], task: str, path: Path) -> dict[str, Any]:
    """The checkpoint's ``symbols`` dict -> SpeechModel keyword arguments."""
    from aligner.audio.features import MelConfig, MelStats
    from aligner.text.symbols import SymbolTable
    from aligner.text.tokenizers import tokenizer_from_dict

    try:
        stats = lambda key: MelStats.from_dict(symbols[key]) if symbols.get(key) else None  # noqa: E731
        front: dict[str, Any] = {"mel_cfg": MelConfig.from_dict(symbols["mel"])}
        if task in TEXT_TASKS:
            front["stats"] = stats("stats")
            front["symbols"] = SymbolTable.from_dict(symbols["symbols"])
            front["tokenizer"] = tokenizer_from_dict(symbols["tokenizer"])
            front["add_eos"] = bool(symbols.get("add_eos", False))
            front["add_bos"] = bool(symbols.get("add_bos", False))
        else:
            front["stats"] = stats("stats")
            front["src_stats"] = stats("stats_src")
    except (KeyError, TypeError, ValueError) as err:
        raise InferenceError(
            f"{path}: its symbols/feature settings are incomplete ({err!r}); "
            "was it written by `aligner train`?"
        ) from None
    return front
