"""Tacotron: an encoder (text for TTS, mel for VC) + the Tacotron decoder + the postnet.

``Tacotron`` takes its encoder as an argument; ``Tacotron.from_config(TacotronConfig)``
builds the encoder named by the config's encoder section. A checkpoint needs
``TacotronConfig.to_dict()`` plus the task's ``symbols`` (symbol table, mel settings and
statistics) to rebuild the model.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.config import ConfigError, from_dict
from aligner.models.tacotron.decoder import TacotronDecoder
from aligner.models.tacotron.encoders import MelEncoder, TextEncoder
from aligner.models.tacotron.postnet import Postnet
from aligner.models.tacotron.steps import DecoderOutput


@dataclass
class TextEncoderConfig:
    """Text encoder (TTS): embedding, conv stack, BiLSTM."""

    kind: Literal["text"] = "text"
    embed_dim: int = 512
    out_dim: int = 512
    n_convs: int = 3
    kernel_size: int = 5
    dropout: float = 0.5

    def build(self, n_symbols: int, n_mels: int) -> TextEncoder:
        return TextEncoder(
            n_symbols, self.embed_dim, self.out_dim, self.n_convs, self.kernel_size, self.dropout
        )


@dataclass
class MelEncoderConfig:
    """Mel encoder (VC): prenet, conv stack with optional time reduction, BiLSTM."""

    kind: Literal["mel"] = "mel"
    prenet_dims: list[int] = field(default_factory=lambda: [256, 256])
    prenet_dropout: float = 0.5
    conv_dim: int = 512
    out_dim: int = 512
    n_convs: int = 3
    kernel_size: int = 5
    dropout: float = 0.5
    reduction: int = 1
    reduce_mode: Literal["stride", "pool"] = "stride"

    def build(self, n_symbols: int, n_mels: int) -> MelEncoder:
        return MelEncoder(
            n_mels,
            self.prenet_dims,
            self.conv_dim,
            self.out_dim,
            self.n_convs,
            self.kernel_size,
            self.dropout,
            self.prenet_dropout,
            self.reduction,
            self.reduce_mode,
        )


ENCODERS: dict[str, type] = {"text": TextEncoderConfig, "mel": MelEncoderConfig}


@dataclass
class DecoderConfig:
    """Tacotron decoder (its attention is the model's: ``TacotronConfig.attention``)."""

    prenet_dims: list[int] = field(default_factory=lambda: [256, 256])
    prenet_dropout: float = 0.5
    attn_rnn_dim: int = 1024
    dec_dim: int = 1024
    dec_layers: int = 1
    rnn_dropout: float = 0.1
    feedback: float = 0.0  # share of steps fed the model's own previous frame (training)
    window: list[int] | None = None  # monotonic window [back, front] synthesis applies


# Where the attention settings sat before every model family spelled them as model.attention,
# model.attn_dim and model.attention_options (recipes and checkpoints of aligner <= 0.1).
OLD_ATTENTION_KEYS = {
    "attention": "attention",
    "attn_dim": "attn_dim",
    "attention_opts": "attention_options",
}


def old_attention_keys(model: dict[str, Any]) -> list[str]:
    """The old ``decoder.*`` attention keys present in a ``model:`` section."""
    decoder = model.get("decoder") or {}
    return [k for k in OLD_ATTENTION_KEYS if isinstance(decoder, dict) and k in decoder]


def move_attention_keys(model: dict[str, Any], where: str = "model") -> Any:
    """Move the old ``decoder.attention``, ``decoder.attn_dim`` and ``decoder.attention_opts``
    of `model` (in place) to ``attention``, ``attn_dim`` and ``attention_options``; returns
    the decoder section without them. Both spellings with different values: ConfigError."""
    decoder = model.get("decoder")
    if not isinstance(decoder, dict):
        return decoder
    decoder = dict(decoder)
    for old in old_attention_keys(model):
        new = OLD_ATTENTION_KEYS[old]
        value = decoder.pop(old)
        if new in model and model[new] != value:
            raise ConfigError(
                f"{where}.decoder.{old} ({value!r}) and {where}.{new} ({model[new]!r}) disagree; "
                f"keep {where}.{new} only"
            )
        model[new] = value
    return decoder


@dataclass
class PostnetConfig:
    channels: int = 512
    n_convs: int = 5
    kernel_size: int = 5
    dropout: float = 0.5


@dataclass
class TacotronConfig:
    """Everything that rebuilds a Tacotron (``n_symbols`` only matters for a text encoder).

    ``attention`` is a registry name of ``aligner.attention``, with ``attn_dim`` and the
    mechanism's ``attention_options``: the same keys, at the same place (``model.``), as in
    the text seq2seq recipes.
    """

    n_mels: int = 80
    r: int = 1
    n_symbols: int = 0
    attention: str = "location"
    attn_dim: int = 128
    attention_options: dict[str, Any] = field(default_factory=dict)
    encoder: TextEncoderConfig | MelEncoderConfig = field(default_factory=TextEncoderConfig)
    decoder: DecoderConfig = field(default_factory=DecoderConfig)
    postnet: PostnetConfig = field(default_factory=PostnetConfig)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "model") -> TacotronConfig:
        data = dict(data)
        data["decoder"] = move_attention_keys(data, where)
        enc = data.pop("encoder", None) or {}
        if not isinstance(enc, dict):
            raise ConfigError(f"{where}.encoder must be a mapping of keys to values, got {enc!r}")
        enc = dict(enc)
        kind = enc.get("kind", "text")
        if kind not in ENCODERS:
            raise ConfigError(
                f"{where}.encoder.kind must be one of {sorted(ENCODERS)}, got {kind!r}"
            )
        sections = {
            "encoder": from_dict(ENCODERS[kind], enc, f"{where}.encoder"),
            "decoder": from_dict(DecoderConfig, data.pop("decoder", None), f"{where}.decoder"),
            "postnet": from_dict(PostnetConfig, data.pop("postnet", None), f"{where}.postnet"),
        }
        return dataclasses.replace(from_dict(cls, data, where), **sections)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class TacotronOutput:
    """Teacher-forced model output.

    mel, mel_post: (B, T, M) before / after the postnet; stop_logits (B, S);
    alignments (B, S, T_enc); mel_mask (B, T); enc_mask (B, T_enc); S = ceil(T / r).
    """

    mel: torch.Tensor
    mel_post: torch.Tensor
    stop_logits: torch.Tensor
    alignments: torch.Tensor
    mel_mask: torch.Tensor
    enc_mask: torch.Tensor


class Tacotron(nn.Module):
    """encoder -> TacotronDecoder -> Postnet. The encoder maps ``(src, src_lengths)`` to
    ``(memory (B, T_enc, D), mask (B, T_enc))`` (TextEncoder: tokens; MelEncoder: mels)."""

    def __init__(self, encoder: nn.Module, decoder: TacotronDecoder, postnet: Postnet) -> None:
        super().__init__()
        self.encoder, self.decoder, self.postnet = encoder, decoder, postnet

    @classmethod
    def from_config(cls, cfg: TacotronConfig) -> Tacotron:
        if cfg.encoder.kind == "text" and cfg.n_symbols < 1:
            raise ValueError("a text encoder needs n_symbols (the size of the symbol table)")
        encoder = cfg.encoder.build(cfg.n_symbols, cfg.n_mels)
        decoder = TacotronDecoder(
            n_mels=cfg.n_mels,
            memory_dim=encoder.out_dim,
            r=cfg.r,
            attention=cfg.attention,
            attn_dim=cfg.attn_dim,
            attention_options=cfg.attention_options,
            **dataclasses.asdict(cfg.decoder),
        )
        p = cfg.postnet
        model = cls(
            encoder, decoder, Postnet(cfg.n_mels, p.channels, p.n_convs, p.kernel_size, p.dropout)
        )
        model.config = cfg
        return model

    @classmethod
    def from_symbols(
        cls, symbols: dict[str, Any], state_dict: dict[str, torch.Tensor] | None = None
    ) -> Tacotron:
        """Rebuild the Tacotron of a checkpoint from its ``symbols["model"]`` config dict
        (and its weights, if given)."""
        model = cls.from_config(TacotronConfig.from_dict(symbols["model"]))
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model

    def forward(
        self,
        src: torch.Tensor,
        src_lengths: torch.Tensor,
        mel: torch.Tensor,
        mel_lengths: torch.Tensor,
    ) -> TacotronOutput:
        """Teacher forcing: src (B, N) tokens or (B, S_src, M) mels with lengths (B,),
        target mel (B, T, M) with lengths (B,)."""
        memory, enc_mask = self.encoder(src, src_lengths)
        out = self.decoder(memory, enc_mask, mel)
        mel_mask = lengths_to_mask(mel_lengths, mel.size(1))
        pre = out.mel.masked_fill(~mel_mask[..., None], 0.0)
        return TacotronOutput(
            pre, self.postnet(pre, mel_mask), out.stop_logits, out.alignments, mel_mask, enc_mask
        )

    @torch.no_grad()
    def generate(
        self, src: torch.Tensor, src_lengths: torch.Tensor, **options: Any
    ) -> tuple[torch.Tensor, DecoderOutput]:
        """Free-running synthesis/conversion; options as ``TacotronDecoder.generate``.
        Returns mel after the postnet (B, T, M) (zero past ``out.lengths``) and the decoder output."""
        memory, enc_mask = self.encoder(src, src_lengths)
        out = self.decoder.generate(memory, enc_mask, **options)
        mask = lengths_to_mask(out.lengths, out.mel.size(1))
        return self.postnet(out.mel, mask), out
