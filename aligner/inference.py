"""Trained speech models ready for use: checkpoint loading, text splitting and batching.

``load_speech_model(path, task)`` turns an ``aligner train`` checkpoint into a
:class:`SpeechModel` (the Tacotron in eval mode plus its front end: tokenizer and symbol
table for TTS, mel settings and normalization statistics). ``SpeechModel`` then
synthesizes text, converts mels, or runs teacher forcing to extract alignments, always in
length-sorted batches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

# Words ending in "." that do not end a sentence (case-insensitive).
ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr prof gen col capt lt sgt rev hon vs etc no fig approx e.g i.e".split()
)
_BOUNDARY = re.compile(r"[.!?]+[\"')\]]*(?=\s)|\n\s*\n")
_DOTTED = re.compile(r"[a-z](\.[a-z])*")  # an initial (J.) or dotted abbreviation (p.m.)
_CLAUSE = re.compile(r"(?<=[,;:])\s+")


class InferenceError(ValueError):
    """A checkpoint or an input cannot be used; the message says what to do."""


def split_sentences(text: str, max_chars: int = 250) -> list[str]:
    """Split `text` into sentences at ``. ! ?`` followed by a space and at blank lines.

    A period after a known abbreviation (``Mr.``, ``Dr.``, ``etc.``), a single letter
    (``J. Smith``) or a dotted abbreviation (``p.m.``) does not end a sentence. A sentence
    longer than `max_chars` is split further at commas, semicolons and colons, then between
    words. Empty pieces are dropped.
    """
    pieces, start = [], 0
    for m in _BOUNDARY.finditer(text):
        before = text[start : m.start()].split()
        last = before[-1].lower() if before else ""
        if m.group().startswith(".") and (last in ABBREVIATIONS or _DOTTED.fullmatch(last)):
            continue
        pieces.append(text[start : m.end()])
        start = m.end()
    pieces.append(text[start:])
    sentences = [" ".join(p.split()) for p in pieces]
    return [c for s in sentences if s for c in _split_long(s, max_chars)]


def _split_long(sentence: str, max_chars: int) -> list[str]:
    """Greedily pack the clauses of `sentence` into chunks of at most `max_chars`; a clause
    that is itself too long is packed word by word (a single longer word stays whole)."""
    if len(sentence) <= max_chars:
        return [sentence]
    chunks: list[str] = []
    for clause in _CLAUSE.split(sentence):
        parts = [clause] if len(clause) <= max_chars else clause.split()
        for part in parts:
            if chunks and len(chunks[-1]) + 1 + len(part) <= max_chars:
                chunks[-1] += " " + part
            else:
                chunks.append(part)
    return chunks


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into batches of similar length (longest first), each index once."""
    if batch_size < 1:
        raise ValueError(f"batch size must be >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def join_waves(
    waves: Sequence[torch.Tensor], sample_rate: int, pause: float = 0.25
) -> torch.Tensor:
    """Concatenate waveforms ``(L_i,)`` with `pause` seconds of silence between them."""
    if not waves:
        raise ValueError("nothing to join")
    gap = waves[0].new_zeros(int(round(pause * sample_rate)))
    out: list[torch.Tensor] = []
    for i, w in enumerate(waves):
        if i:
            out.append(gap)
        out.append(w)
    return torch.cat(out)


def pad_stack(seqs: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad ``(L_i, ...)`` tensors with zeros -> ``(B, L, ...)`` and lengths ``(B,)``."""
    lengths = torch.tensor([len(s) for s in seqs])
    out = seqs[0].new_zeros(len(seqs), int(lengths.max()), *seqs[0].shape[1:])
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out, lengths


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

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def r(self) -> int:
        return int(self.model.decoder.r)

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
        for idx in length_batches([len(s) for s in sources], batch_size):
            src, lengths = pad_stack([sources[i].to(self.device) for i in idx])
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
        """Alignments (S_i, N_i) of sources with their known normalized mels (T_i, M)."""
        out: list[torch.Tensor | None] = [None] * len(sources)
        for idx in length_batches([len(m) for m in mels], batch_size):
            src, src_len = pad_stack([sources[i].to(self.device) for i in idx])
            mel, mel_len = pad_stack([mels[i].to(self.device) for i in idx])
            res = self.model(src, src_len.to(self.device), mel, mel_len.to(self.device))
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

    `task` (``"tts"`` or ``"vc"``) is checked against the checkpoint's; InferenceError (one
    line, naming the file) for a missing, corrupt or foreign checkpoint or the wrong task.
    """
    from aligner.train.checkpoint import CheckpointError, load_checkpoint

    path = Path(path)
    try:
        ckpt = load_checkpoint(path, map_location="cpu")
    except CheckpointError as err:
        raise InferenceError(str(err)) from None
    symbols = ckpt.get("symbols") or {}
    found = symbols.get("task") or (ckpt.get("config") or {}).get("task")
    if found not in ("tts", "vc"):
        raise InferenceError(
            f"{path} is a {found!r} checkpoint, not a speech one (tts or vc); "
            "use `aligner g2p`/`aligner translate` for text models"
        )
    if task is not None and found != task:
        verb = {"tts": "aligner synthesize", "vc": "aligner convert"}[found]
        raise InferenceError(f"{path} is a {found} checkpoint, not {task}; use `{verb}` with it")
    speech = _build(ckpt, found, path)
    speech.model.to(device)
    return speech


def _build(ckpt: dict[str, Any], task: str, path: Path) -> SpeechModel:
    """Rebuild the model and front end from the checkpoint's ``symbols`` (see
    aligner/tasks/tts.py and vc.py: ``model``, ``mel``, ``stats``, ...)."""
    from aligner.config import ConfigError
    from aligner.models.tacotron import Tacotron

    symbols = ckpt.get("symbols") or {}
    front = _front_end(symbols, task, path)
    try:
        model = Tacotron.from_symbols(symbols, ckpt["model"])
    except (KeyError, ConfigError, RuntimeError) as err:
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
        if task == "tts":
            front["stats"] = stats("stats")
            front["symbols"] = SymbolTable.from_dict(symbols["symbols"])
            front["tokenizer"] = tokenizer_from_dict(symbols["tokenizer"])
            front["add_eos"] = bool(symbols.get("add_eos", False))
        else:
            front["stats"] = stats("stats")
            front["src_stats"] = stats("stats_src")
    except (KeyError, TypeError, ValueError) as err:
        raise InferenceError(
            f"{path}: its symbols/feature settings are incomplete ({err!r}); "
            "was it written by `aligner train`?"
        ) from None
    return front


__all__ = [
    "ABBREVIATIONS",
    "Generated",
    "InferenceError",
    "SpeechModel",
    "join_waves",
    "length_batches",
    "load_speech_model",
    "pad_stack",
    "split_sentences",
]
