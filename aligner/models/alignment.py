"""The alignment model: text and mel convolution encoders, a distance attention with a
beta-binomial prior, trained by the forward-sum loss alone (Badlani et al. 2021, "One TTS
Alignment To Rule Them All"; the aligner of RAD-TTS and FastPitch).

It learns only where each token is spoken: every mel frame attends over the tokens
(``aligner.attention.content.DistanceAttention``), the prior
(``aligner.attention.prior``) keeps the attention near the diagonal while it forms, and
hard durations come from the monotonic alignment search (``aligner.attention.search``)
over its soft alignment, at the resolution of one frame.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from aligner.attention import build_attention
from aligner.attention.base import lengths_to_mask
from aligner.attention.content import ContentAttention
from aligner.attention.prior import beta_binomial_log_prior, spanned_log_prior
from aligner.audio.features import fill_edge_padding, speech_spans
from aligner.config import from_dict
from aligner.models.tacotron.encoders import ConvBlock


@dataclass
class AlignerConfig:
    """Everything that rebuilds an :class:`AlignmentModel`.

    ``n_symbols``/``n_mels`` come from the data; ``attention`` is a content scorer of the
    core (``distance``: RAD-TTS's), with ``attn_dim`` and its ``attention_options`` (the
    distance's ``temperature``), the keys every model family spells the same way;
    ``channels`` is the width of both encoders; ``text_kernels``/``mel_kernels`` the kernel
    width of each convolution of the encoders; ``prior_scaling`` is the beta-binomial
    prior's ``s`` (0 = no prior). ``mel_norm``: ``global`` feeds the mels as the corpus
    statistics normalized them, ``utterance`` brings each utterance's mel bins to zero mean
    and unit variance over its own frames first (what a speaker, microphone or synthesizer
    adds to every frame is gone; see `utterance_normalize`). ``prior_silence_db`` > 0 lays the
    prior over the frames where the recording has sound (within that many dB of its loudest
    frame; `aligner.audio.features.speech_spans`), so that the silence before the first word and
    after the last falls to ``<s>`` and ``</s>`` rather than squeezing the diagonal; 0 lays
    it over every frame.

    Both encoders see little context on purpose (text kernels 1, 1: each token's key
    describes that token alone; mel kernels 3, 1, 1: one frame either side). The
    forward-sum loss is blind to a shift of the alignment that the encodings can absorb:
    with a token's neighbours in its key, the alignment drifted ~25 ms early of eSpeak's
    phone boundaries (27 ms mean error); without them, 13 ms (egs/festival/align1/RESULTS.md
    has the same ablation on Festival's voices).
    """

    n_symbols: int = 0
    n_mels: int = 80
    attention: str = "distance"
    attn_dim: int = 80
    attention_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    channels: int = 128
    text_kernels: list[int] = dataclasses.field(default_factory=lambda: [1, 1])
    mel_kernels: list[int] = dataclasses.field(default_factory=lambda: [3, 1, 1])
    dropout: float = 0.0
    prior_scaling: float = 1.0
    mel_norm: str = "global"
    prior_silence_db: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None, where: str = "model") -> AlignerConfig:
        return from_dict(cls, data, where)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class AlignerOutput:
    """What the model gives for a batch.

    log_scores: ``(B, T, N)`` per frame the log-softmax of the attention scores over the
        tokens plus the log prior (what the forward-sum loss reads); padded cells are 0.
    log_alignments: ``(B, T, N)`` the log-softmax of `log_scores` over the valid tokens
        (finite: padded tokens are very negative).
    alignments: ``(B, T, N)`` soft alignment, ``exp(log_alignments)`` (each valid row sums
        to one; zero on padding).
    enc_mask: ``(B, N)`` bool, True on valid tokens.
    """

    log_scores: Tensor
    log_alignments: Tensor
    alignments: Tensor
    enc_mask: Tensor


MEL_NORMS = ("global", "utterance")


def utterance_normalize(
    mel: Tensor, mask: Tensor, floor: float = 1e-2, counted: Tensor | None = None
) -> Tensor:
    """``(B, T, M)`` mels, ``(B, T)`` bool valid frames -> each utterance's bins at zero mean
    and unit variance over its valid frames (std floored at `floor`); padding stays 0.
    `counted` ``(B, T)`` bool: the frames whose statistics count (default: the valid ones;
    a long recording leaves its long silences out, `aligner.inference.long_recording`)."""
    m = mask[:, :, None].to(mel.dtype)
    c = m if counted is None else (counted & mask)[:, :, None].to(mel.dtype)
    count = c.sum(1, keepdim=True).clamp_min(1.0)
    mean = (mel * c).sum(1, keepdim=True) / count
    var = (((mel - mean) * c) ** 2).sum(1, keepdim=True) / count
    return (mel - mean) / var.sqrt().clamp_min(floor) * m


def _masked(scores: Tensor, mask: Tensor) -> Tensor:
    return scores.masked_fill(~mask[:, None, :], torch.finfo(scores.dtype).min / 2)


class ConvStack(nn.Module):
    """Convolutions (`ConvBlock` without BatchNorm) of the given odd `kernels`, ReLU after
    each: ``(B, L, D_in)`` -> ``(B, L, dim)``; padded positions are zeroed before each, so
    a padded batch gives each item what it gives alone."""

    def __init__(self, in_dim: int, dim: int, kernels: list[int], dropout: float) -> None:
        super().__init__()
        if not kernels or any(k < 1 or k % 2 != 1 for k in kernels):
            raise ValueError(f"encoder kernels must be odd widths, one per layer, got {kernels}")
        dims = [in_dim] + [dim] * len(kernels)
        self.convs = nn.ModuleList(
            ConvBlock(a, b, k, dropout, norm=False) for a, b, k in zip(dims, dims[1:], kernels)
        )

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        h = x.transpose(1, 2)
        for conv in self.convs:
            h = conv(h, mask)
        return h.transpose(1, 2)


class AlignmentModel(nn.Module):
    """Tokens ``(B, N)`` and normalized mels ``(B, T, M)`` -> :class:`AlignerOutput`."""

    def __init__(self, config: AlignerConfig) -> None:
        super().__init__()
        if config.n_symbols < 1:
            raise ValueError("model.n_symbols must be set (the symbol table's size)")
        c = config
        self.config = c
        if c.mel_norm not in MEL_NORMS:
            raise ValueError(f"model.mel_norm must be one of {MEL_NORMS}, got {c.mel_norm!r}")
        self.embedding = nn.Embedding(c.n_symbols, c.channels)
        self.text_encoder = ConvStack(c.channels, c.channels, c.text_kernels, c.dropout)
        self.mel_encoder = ConvStack(c.n_mels, c.channels, c.mel_kernels, c.dropout)
        self.attention = build_attention(
            c.attention, c.channels, c.channels, c.attn_dim, **c.attention_options
        )
        if not isinstance(self.attention, ContentAttention):
            raise ValueError(
                f"model.attention must be a content scorer (distance, dot, general, additive, "
                f"concat): it scores every frame at once; got {c.attention!r}"
            )

    r = 1  # one alignment row per mel frame

    @classmethod
    def from_symbols(
        cls, symbols: dict[str, Any], state_dict: dict[str, Tensor] | None = None
    ) -> AlignmentModel:
        """Rebuild the model of a checkpoint from its ``symbols["model"]`` (and weights)."""
        model = cls(AlignerConfig.from_dict(symbols["model"]))
        if state_dict is not None:
            model.load_state_dict(state_dict)
        return model

    def spans(self, log_mel: Tensor, lengths: Tensor, power: float = 1.0) -> Tensor | None:
        """``(B, 2)`` the frames the prior spans (`forward`'s ``spans``) from the natural-log
        mels ``(B, T, M)`` *before* normalization; None when ``prior_silence_db`` is 0."""
        if self.config.prior_silence_db <= 0:
            return None
        return speech_spans(log_mel, lengths, self.config.prior_silence_db, power)

    def prepare(
        self, log_mel: Tensor, mel: Tensor, lengths: Tensor, power: float = 1.0
    ) -> tuple[Tensor, Tensor | None]:
        """What `forward` reads of a padded batch: the normalized mels ``(B, T, M)`` with a
        noisy recording's digital-silence padding filled with its own background
        (`aligner.audio.features.fill_edge_padding`), and the prior's `spans`; `log_mel`
        the same mels as natural logs, not normalized."""
        return fill_edge_padding(mel, log_mel, lengths, power), self.spans(log_mel, lengths, power)

    def forward(
        self,
        tokens: Tensor,
        token_lengths: Tensor,
        mel: Tensor,
        mel_lengths: Tensor,
        prior: bool | None = None,
        spans: Tensor | None = None,
    ) -> AlignerOutput:
        """``prior``: add the beta-binomial prior (default: when ``prior_scaling`` > 0,
        in training and inference alike: the scores are learned with it, and FastPitch
        extracts its durations from the alignment with the prior too). ``spans (B, 2)``:
        the frames the prior is laid over (`spans`; None: all of them)."""
        enc_mask = lengths_to_mask(token_lengths.to(tokens.device), tokens.size(1))
        mel_mask = lengths_to_mask(mel_lengths.to(mel.device), mel.size(1))
        memory = self.text_encoder(self.embedding(tokens), enc_mask)
        if self.config.mel_norm == "utterance":
            mel = utterance_normalize(mel, mel_mask)
        queries = self.mel_encoder(mel, mel_mask)
        keys = self.attention.project_keys(memory)
        scores = self.attention.score(queries, keys).float()
        log_scores = torch.log_softmax(_masked(scores, enc_mask), dim=2)
        if (True if prior is None else prior) and self.config.prior_scaling > 0:
            scaling = self.config.prior_scaling
            if spans is None:
                prior = beta_binomial_log_prior(mel_lengths, token_lengths, scaling)
            else:
                prior = spanned_log_prior(mel_lengths, token_lengths, spans, scaling)
            pad = (0, scores.size(2) - prior.size(2), 0, scores.size(1) - prior.size(1))
            log_scores = log_scores + nn.functional.pad(prior, pad).to(scores.device)
        valid = enc_mask[:, None, :] & mel_mask[:, :, None]
        log_scores = log_scores.masked_fill(~valid, 0.0)
        log_soft = torch.log_softmax(_masked(log_scores, enc_mask), dim=2)
        return AlignerOutput(log_scores, log_soft, log_soft.exp() * valid, enc_mask)
