"""FastPitch (Łańcucki 2021), a non-autoregressive TTS network: text encoder, duration,
pitch and energy predictors, length regulator and parallel mel decoder.

It never learns an alignment: training gives it each token's frames (an alignment
model's durations, `aligner.tasks.fastpitch`), its per-token pitch and energy; at
synthesis it predicts them, so it cannot skip or repeat a token and decodes every frame at
once. The network's parts are in `aligner.models.fastpitch.layers`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Self

import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.config import from_dict
from aligner.models.fastpitch.layers import (
    DurationOutput,
    FFTStack,
    VariancePredictor,
    regulate_length,
    whole_frames,
)
from aligner.models.tacotron.encoders import TextEncoder
from aligner.models.tacotron.postnet import Postnet


@dataclass
class PostnetSettings:
    """An optional Tacotron 2 postnet on the decoder's mels (FastPitch has none)."""

    channels: int = 256
    n_convs: int = 5
    kernel_size: int = 5
    dropout: float = 0.5


@dataclass
class DurationModelConfig:
    """The sizes every duration model's ``model:`` has (FastPitch's, FastVC's); ``n_mels``
    comes from the data.

    dim: the width D of encoder and decoder; encoder_layers / decoder_layers FFT blocks of
    ``heads`` attention heads and a convolutional feed-forward of ``ff_hidden`` channels,
    kernel ``ff_kernel`` (one size for its two convolutions, or the pair: [3, 1] halves the
    decoder's work, FastSpeech 2's [9, 1]). The variance predictors have
    ``predictor_hidden`` channels of kernel ``predictor_kernel``. ``max_duration``: the
    most frames one encoder position may get at synthesis or conversion.
    """

    n_mels: int = 80
    dim: int = 128
    encoder_layers: int = 2
    decoder_layers: int = 2
    heads: int = 2
    ff_hidden: int = 512
    ff_kernel: int | list[int] = 3
    dropout: float = 0.1
    predictor_hidden: int = 128
    predictor_kernel: int = 3
    predictor_dropout: float = 0.1
    max_duration: int = 75
    postnet: PostnetSettings | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, where: str = "model") -> Self:
        return from_dict(cls, data, where)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class FastPitchConfig(DurationModelConfig):
    """``model:`` of a FastPitch recipe: `DurationModelConfig` and the text's. ``n_symbols``
    comes from the data; the pitch and energy predictors are on or off.
    ``duration_encoder_layers``: layers of the duration predictor's own encoder (0: it reads
    the text encoder, as FastPitch does). The text encoder then serves the mel alone, and
    the durations are learnt from their own loss: shared, the mel's loss steers the encoder
    and the durations' error along a sentence grows. ``duration_encoder``: ``fft`` (FFT
    blocks over the text's token embeddings) or ``lstm`` (Tacotron 2's text encoder, its
    own embedding, ``duration_encoder_layers`` convolutions and a bidirectional LSTM of
    ``dim`` units each way: Non-Attentive Tacotron's duration model; it counts its way to
    the end of a phrase, where the FFT blocks' durations drift).
    """

    n_symbols: int = 0
    duration_encoder_layers: int = 0
    duration_encoder: Literal["fft", "lstm"] = "fft"
    pitch: bool = True
    energy: bool = True


@dataclass
class FastPitchOutput(DurationOutput):
    """A `DurationOutput` over tokens, with the predicted per-token pitch and energy
    (B, N) (None when off)."""

    pitch: torch.Tensor | None = None
    energy: torch.Tensor | None = None


def _duration_encoder(cfg: FastPitchConfig) -> nn.Module | None:
    """The duration predictor's own encoder of ``cfg`` (None: it reads the text encoder)."""
    layers = cfg.duration_encoder_layers
    if layers <= 0:
        return None
    if cfg.duration_encoder == "lstm":
        return TextEncoder(cfg.n_symbols, cfg.dim, 2 * cfg.dim, layers, 5, cfg.dropout)
    if cfg.duration_encoder != "fft":
        raise ValueError(f"model.duration_encoder: {cfg.duration_encoder!r}; use fft or lstm")
    return FFTStack(cfg.dim, layers, cfg.heads, cfg.ff_hidden, cfg.ff_kernel, cfg.dropout)


def _value_embedding(dim: int) -> nn.Conv1d:
    """A per-token value (B, 1, N) -> (B, D, N), as FastPitch embeds its pitch."""
    return nn.Conv1d(1, dim, 3, padding=1)


class FastPitch(nn.Module):
    """Tokens (B, N) -> mels (B, T, M) through given or predicted durations."""

    r = 1  # one frame per alignment row: its alignment is the token of every frame

    def __init__(self, cfg: FastPitchConfig) -> None:
        super().__init__()
        if cfg.n_symbols < 1:
            raise ValueError("model.n_symbols must be set from the symbol table")
        self.config = cfg
        d = cfg.dim
        self.embedding = nn.Embedding(cfg.n_symbols, d, padding_idx=0)
        stack = (cfg.heads, cfg.ff_hidden, cfg.ff_kernel, cfg.dropout)
        self.encoder = FFTStack(d, cfg.encoder_layers, *stack)
        self.decoder = FFTStack(d, cfg.decoder_layers, *stack)
        self.duration_encoder = _duration_encoder(cfg)
        pred = (cfg.predictor_hidden, cfg.predictor_kernel, cfg.predictor_dropout)
        timing_dim = 2 * d if isinstance(self.duration_encoder, TextEncoder) else d
        self.duration = VariancePredictor(timing_dim, *pred)
        self.pitch = VariancePredictor(d, *pred) if cfg.pitch else None
        self.pitch_embed = _value_embedding(d) if cfg.pitch else None
        self.energy = VariancePredictor(d, *pred) if cfg.energy else None
        self.energy_embed = _value_embedding(d) if cfg.energy else None
        self.proj = nn.Linear(d, cfg.n_mels)
        p = cfg.postnet
        self.postnet = (
            Postnet(cfg.n_mels, p.channels, p.n_convs, p.kernel_size, p.dropout) if p else None
        )

    @classmethod
    def from_config(cls, cfg: FastPitchConfig) -> FastPitch:
        return cls(cfg)

    @classmethod
    def from_symbols(
        cls, symbols: dict[str, Any], state_dict: dict[str, torch.Tensor] | None = None
    ) -> FastPitch:
        """Rebuild the FastPitch of a checkpoint from its ``symbols["model"]`` config dict
        (and its weights, if given)."""
        model = cls(FastPitchConfig.from_dict(symbols["model"]))
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model

    def forward(
        self,
        tokens: torch.Tensor,
        token_lengths: torch.Tensor,
        durations: torch.Tensor,
        pitch: torch.Tensor | None = None,
        energy: torch.Tensor | None = None,
    ) -> FastPitchOutput:
        """Teacher forcing: tokens (B, N) with lengths (B,), their frames durations (B, N)
        and their pitch and energy targets (B, N) (the predicted ones where not given)."""
        enc, mask, log_durations = self.encode(tokens, token_lengths)
        return self._decode(enc, mask, log_durations, durations * mask, pitch, energy)

    @torch.no_grad()
    def infer(
        self,
        tokens: torch.Tensor,
        token_lengths: torch.Tensor,
        pace: float = 1.0,
        required: torch.Tensor | None = None,
    ) -> FastPitchOutput:
        """Synthesis: every variance predicted, durations divided by `pace` (2: twice as
        fast), at most ``max_duration`` frames a token, rounded along the utterance
        (`whole_frames`: every token boundary within half a frame of the predicted one),
        each token of ``required (B, N)`` bool (the phones) at least one frame; tokens
        (B, N)."""
        if not pace > 0:  # NaN too
            raise ValueError(f"pace must be positive, got {pace}")
        enc, mask, log_durations = self.encode(tokens, token_lengths)
        frames = torch.expm1(log_durations.float()).clamp(0, self.config.max_duration) / pace
        durations = whole_frames(frames, mask, required)
        durations[:, 0] += (durations.sum(1) == 0).long()  # every item says something
        return self._decode(enc, mask, log_durations, durations, None, None)

    def encode(
        self, tokens: torch.Tensor, token_lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Tokens (B, N), lengths (B,) -> (encoder output (B, N, D), token mask (B, N),
        predicted log(1 + frames) (B, N))."""
        mask = lengths_to_mask(token_lengths.to(tokens.device), tokens.size(1))
        embedded = self.embedding(tokens)
        enc = self.encoder(embedded, mask)
        if self.duration_encoder is None:
            timing = enc
        elif isinstance(self.duration_encoder, TextEncoder):
            timing = self.duration_encoder(tokens, token_lengths.to(tokens.device))[0]
        else:
            timing = self.duration_encoder(embedded, mask)
        return enc, mask, self.duration(timing, mask)

    def _decode(
        self,
        enc: torch.Tensor,
        mask: torch.Tensor,
        log_durations: torch.Tensor,
        durations: torch.Tensor,
        pitch: torch.Tensor | None,
        energy: torch.Tensor | None,
    ) -> FastPitchOutput:
        """Pitch and energy added, tokens spread over their frames, decoded to mels."""
        keep = mask.to(enc.dtype)
        predicted = {}
        for name, given in (("pitch", pitch), ("energy", energy)):
            predictor = getattr(self, name)
            if predictor is None:
                predicted[name] = None
                continue
            predicted[name] = predictor(enc, mask)
            value = (predicted[name] if given is None else given.to(enc.dtype)) * keep
            enc = enc + getattr(self, f"{name}_embed")(value[:, None]).transpose(1, 2)
        frames, lengths = regulate_length(enc * keep[..., None], durations)
        mel_mask = lengths_to_mask(lengths, frames.size(1))
        mel = self.proj(self.decoder(frames, mel_mask)).masked_fill(~mel_mask[..., None], 0.0)
        post = self.postnet(mel, mel_mask) if self.postnet is not None else mel
        return FastPitchOutput(
            mel, post, mel_mask, log_durations, mask, durations.long(), **predicted
        )
