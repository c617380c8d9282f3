"""What every speech family's runtime class shares (`aligner.families`; the classes are
`aligner.inference.tacotron`'s `TTSModel` and `VCModel`, `aligner.inference.fastpitch`'s
`FastPitchModel`, `aligner.inference.fastvc`'s `FastVCModel` and
`aligner.inference.forward_sum`'s `AlignModel`).

Each holds the model in eval mode and its front end (tokenizer and symbol table, mel
settings, normalization statistics), and offers what its callers need: the source of a
manifest item (`source`), teacher forcing (`teacher_force`), free-running generation
(TTS, VC: `generate`), frames per alignment row (`r`). They are built from a checkpoint
by `from_checkpoint` (what `aligner.inference.loading.load_model` calls), always decoding
in length-sorted batches; what each can do is its ``role``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch import nn

from aligner.audio.features import MelConfig, MelStats, log_mel
from aligner.audio.io import load_audio
from aligner.config import ConfigError
from aligner.data.collate import length_batches, pad
from aligner.families import Role
from aligner.inference.common import InferenceError
from aligner.models.vocoders.base import GriffinLimVocoder
from aligner.text.symbols import SymbolTable, UnknownSymbolError
from aligner.text.tokenizers import (
    OutOfVocabularyError,
    Tokenizer,
    foreign_letters,
    named_symbols,
    stress_variants,
    tokenizer_from_dict,
)


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
    """What every speech family shares: the model in eval mode, the mel settings, the
    (de)normalization of the target mels ``stats``, the training step and the file.

    Subclasses name their ``network``, the manifest fields an item ``needs``, and how an
    item becomes the model's source (`source`); ``role`` says what the model can do."""

    model: Any
    mel_cfg: MelConfig
    stats: MelStats | None
    step: int
    path: Path
    role: Role

    network: ClassVar[type] = nn.Module
    needs: ClassVar[tuple[str, ...]] = ()  # the manifest fields an item must have
    target_key: ClassVar[str] = "audio"  # the field of the recording teacher forcing reads

    @classmethod
    def from_checkpoint(
        cls, ckpt: dict[str, Any], path: Path, role: Role, device: str | torch.device = "cpu"
    ) -> SpeechModel:
        """The model of checkpoint dict `ckpt` (read from `path`) in eval mode on `device`,
        its network and front end rebuilt from the checkpoint's ``symbols`` (written by the
        tasks: ``model``, ``mel``, ``stats``, ...); InferenceError naming the file."""
        symbols = ckpt.get("symbols") or {}
        try:
            front = cls.front_end(symbols)
        except (KeyError, TypeError, ValueError) as err:
            raise InferenceError(
                f"{path}: its symbols/feature settings are incomplete ({err!r}); "
                "was it written by `aligner train`?"
            ) from None
        try:
            model = cls.network.from_symbols(symbols, ckpt["model"])
        except (KeyError, ConfigError, RuntimeError, ValueError) as err:
            first = str(err).splitlines()[0]
            raise InferenceError(
                f"{path}: weights do not match its model config ({first})"
            ) from None
        model.eval().to(device)
        return cls(model=model, step=int(ckpt.get("step", 0)), path=path, role=role, **front)

    @classmethod
    def front_end(cls, symbols: dict[str, Any]) -> dict[str, Any]:
        """The checkpoint's ``symbols`` -> this class's keyword arguments (mel settings and
        the statistics of the target mels)."""
        stats = symbols.get("stats")
        return {
            "mel_cfg": MelConfig.from_dict(symbols["mel"]),
            "stats": MelStats.from_dict(stats) if stats else None,
        }

    def prepare(self, precision: str) -> None:
        """Ready the model for decoding in `precision`; only ``fp32`` here (the decoders
        that run free offer more)."""
        if precision != "fp32":
            raise InferenceError(
                f"{self.path}: --precision {precision} is for the attention decoders (Tacotron "
                f"TTS and seq2seq VC); this {type(self).__name__} decodes in fp32 only"
            )

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
        return "text" in self.needs

    def source(self, item: dict[str, Any], where: str) -> torch.Tensor:
        """The model's source for a manifest item: token ids (N,) or a normalized mel (S, M)."""
        raise NotImplementedError

    def target_mel(self, wav: torch.Tensor) -> torch.Tensor:
        """Waveform (L,) -> normalized target-side log-mel (T, M) (teacher forcing)."""
        mel = log_mel(wav, self.mel_cfg)
        return self.stats.normalize(mel) if self.stats is not None else mel

    def denormalize(self, mel: torch.Tensor) -> torch.Tensor:
        return self.stats.denormalize(mel) if self.stats is not None else mel

    def memory_lengths(self, lengths: torch.Tensor) -> torch.Tensor:
        """Encoder memory lengths (B,) for source lengths (B,) (a VC encoder may reduce time)."""
        reduce = getattr(self.model.encoder, "reduced_lengths", None)
        return reduce(lengths) if reduce is not None else lengths

    @torch.no_grad()
    def teacher_force(
        self, sources: Sequence[torch.Tensor], mels: Sequence[torch.Tensor], batch_size: int = 8
    ) -> list[torch.Tensor]:
        """Alignments (S_i, N_i) of sources with their known normalized mels (T_i, M)."""
        out: list[torch.Tensor | None] = [None] * len(sources)
        for idx in length_batches([len(m) for m in mels], batch_size, longest_first=True):
            src, src_len, _ = pad([sources[i].to(self.device) for i in idx])
            mel, mel_len, _ = pad([mels[i].to(self.device) for i in idx])
            res = self._forward(src, src_len.to(self.device), mel, mel_len.to(self.device))
            enc_len = res.enc_mask.sum(1)
            for j, i in enumerate(idx):
                steps = -(-int(mel_len[j]) // self.r)
                out[i] = res.alignments[j, :steps, : int(enc_len[j])].float().cpu()
        return out  # type: ignore[return-value]

    def _forward(self, src, src_len, mel, mel_len):
        """The model's teacher-forced output for one padded batch."""
        return self.model(src, src_len, mel, mel_len)

    def vocode(self, mel: torch.Tensor, n_iter: int = 60) -> torch.Tensor:
        """Griffin-Lim: log-mel (T, M) -> waveform (L,) at ``mel_cfg.sample_rate``
        (`aligner.models.vocoders.base.GriffinLimVocoder`; other vocoders: `load_vocoder`)."""
        return GriffinLimVocoder(self.mel_cfg, n_iter, self.device)(mel)


class TextInput:
    """Text to token ids, for the families that read text (fields ``tokenizer``,
    ``symbols``, ``add_bos``, ``add_eos`` of the class it is mixed into)."""

    tokenizer: Tokenizer
    symbols: SymbolTable
    add_bos: bool
    add_eos: bool
    needs: ClassVar[tuple[str, ...]] = ("audio", "text")

    def encode_text(self, text: str, where: str = "text") -> torch.Tensor:
        """Text -> token ids (N,) long; InferenceError for empty text, letters an English
        model would say by their names (`foreign_letters`), pictographs it would say by
        name (`named_symbols`) or unknown symbols (a phone the table has under another
        stress is said with it: `_known_stress`)."""
        unread = (
            (
                foreign_letters,
                "letters an English model cannot read",
                'say their names ("Chinese letter", "lambda"): write the text in English '
                "letters, or use a model trained on that language (data.tokenizer_opts.language)",
            ),
            (
                named_symbols,
                "symbols the model would say by name",
                'say them as words ("grinning face", "right arrow"): write what is meant in '
                "words, or remove them",
            ),
        )
        for find, what, advice in unread:
            found = find(text, self.tokenizer)
            if found:
                named = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in found[:8])
                raise InferenceError(f"{where}: {what}: {named}; eSpeak NG would {advice}")
        try:
            tokens = self.tokenizer.tokenize(text)
        except OutOfVocabularyError as err:
            raise InferenceError(f"{where}: {err}") from None
        if not tokens:
            raise InferenceError(f"{where} is empty after cleaning: give some words to say")
        tokens = [self._known_stress(t) for t in tokens]
        try:
            ids = self.symbols.encode(tokens)
        except UnknownSymbolError as err:
            words = self._unsayable_words(text)
            named = f"the word(s) {', '.join(map(repr, words[:8]))}" if words else ""
            raise InferenceError(f"{where}: {UnknownSymbolError(err.unknown, named)}") from None
        if self.add_eos:
            ids = [*ids, self.symbols.eos_id]
        if self.add_bos:
            ids = [self.symbols.bos_id, *ids]
        return torch.tensor(ids, dtype=torch.long)

    def source(self, item: dict[str, Any], where: str) -> torch.Tensor:
        return self.encode_text(item["text"], where)

    def _unsayable_words(self, text: str) -> list[str]:
        """The words of `text` (split at spaces) with a token the symbol table lacks: a
        word in another script, which eSpeak NG reads in another language's phones."""
        found = []
        for word in text.split():
            try:
                tokens = [self._known_stress(t) for t in self.tokenizer.tokenize(word)]
            except ValueError:
                continue
            if any(t not in self.symbols for t in tokens):
                found.append(word)
        return found

    def _known_stress(self, token: str) -> str:
        """`token`, or where the symbol table lacks it, the same phone under a stress the
        table has (`stress_variants`: eSpeak NG gives a language's vowel a stress the
        training text may never have); unchanged when none is known."""
        if token in self.symbols:
            return token
        return next((v for v in stress_variants(token) if v in self.symbols), token)

    @classmethod
    def front_end(cls, symbols: dict[str, Any]) -> dict[str, Any]:
        return {
            **super().front_end(symbols),  # type: ignore[misc]
            "symbols": SymbolTable.from_dict(symbols["symbols"]),
            "tokenizer": _reading_tokenizer(symbols["tokenizer"]),
            "add_eos": bool(symbols.get("add_eos", False)),
            "add_bos": bool(symbols.get("add_bos", False)),
        }


def _reading_tokenizer(data: dict[str, Any]) -> Any:
    """A checkpoint's tokenizer for reading new text: an ARPAbet model trained to refuse a
    word CMUdict lacks (``oov: error``, which keeps guesses out of its training) says it
    by eSpeak NG's rules in the same phones (``oov: espeak``), and the command lists it,
    rather than refusing a whole recording for one name."""
    if data.get("kind") == "arpabet" and data.get("oov", "error") == "error":
        data = {**data, "oov": "espeak"}
    return tokenizer_from_dict(data)


@dataclass
class TextSpeechModel(TextInput, SpeechModel):
    """A speech family that reads text: the tokenizer and symbol table of its checkpoint,
    and whether ``<s>``/``</s>`` frame the tokens."""

    tokenizer: Tokenizer | None = None
    symbols: SymbolTable | None = None
    add_bos: bool = False
    add_eos: bool = False


@dataclass
class MelSpeechModel(SpeechModel):
    """A speech family that reads a source speaker's mel (voice conversion): items need
    ``audio`` (the source) and ``target_audio``; ``src_stats`` normalizes source mels."""

    src_stats: MelStats | None = None

    needs: ClassVar[tuple[str, ...]] = ("audio", "target_audio")
    target_key: ClassVar[str] = "target_audio"

    @classmethod
    def front_end(cls, symbols: dict[str, Any]) -> dict[str, Any]:
        stats = symbols.get("stats_src")
        return {
            **super().front_end(symbols),
            "src_stats": MelStats.from_dict(stats) if stats else None,
        }

    def source_mel(self, wav: torch.Tensor) -> torch.Tensor:
        """Waveform (L,) at ``mel_cfg.sample_rate`` -> normalized source log-mel (S, M)."""
        mel = log_mel(wav, self.mel_cfg)
        return self.src_stats.normalize(mel) if self.src_stats is not None else mel

    def source(self, item: dict[str, Any], where: str) -> torch.Tensor:
        return self.source_mel(load_audio(item["audio"], self.mel_cfg.sample_rate)[0])
