"""Text sequence-to-sequence: BiGRU encoder + GRU decoder on the shared attention core.

Two decoders share one base class:

- `BahdanauDecoder` (Bahdanau et al. 2015): attend with the *previous* decoder state,
  then feed `[y_{t-1}; c_t]` to the GRU; pre-output from `[y_{t-1}; s_t; c_t]`.
- `LuongDecoder` (Luong et al. 2015): run the GRU first, attend with the *new* state,
  attentional hidden `h~_t = tanh(W_c [c_t; h_t])`, fed back to the next step's input
  (input feeding) unless `input_feeding=False`.

Any mechanism of `aligner.attention` is chosen by name (`dot`, `general`, `concat`,
`additive`, `local-m`, `local-p`, ...). Decoding (greedy, beam) drives `Seq2Seq.start`
and `Seq2Seq.step`; training drives `Seq2Seq.forward` (teacher forcing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from aligner.attention import build_attention
from aligner.attention.base import lengths_to_mask
from aligner.models.seq2seq.encoder import BiGRUEncoder, Encoded


@dataclass
class DecoderState:
    """Recurrent state of a decoder: `hidden (L, B, H)`, the attention state, and
    `feed (B, D_out)` (Luong input feeding; None otherwise)."""

    hidden: Tensor
    attn: Any
    feed: Tensor | None = None

    def index_select(self, index: Tensor) -> DecoderState:
        """Reorder/expand along the batch for beam search; `index (B',)` long."""
        feed = None if self.feed is None else self.feed.index_select(0, index)
        return DecoderState(self.hidden.index_select(1, index), self.attn.index_select(index), feed)


class AttentionDecoder(nn.Module):
    """Shared parts of the GRU decoders: embedding, GRU, bridge, attention, generator.

    Subclasses define `rnn_input_dim`, `pre_output_dim` and `step`.
    """

    def __init__(
        self,
        vocab_size: int,
        memory_dim: int,
        emb_dim: int = 128,
        hidden_dim: int = 256,
        num_layers: int = 1,
        attention: str = "additive",
        attn_dim: int = 256,
        attention_options: dict[str, Any] | None = None,
        out_dim: int = 256,
        dropout: float = 0.0,
        bridge: bool = True,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.hidden_dim, self.num_layers, self.out_dim = hidden_dim, num_layers, out_dim
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.dropout = nn.Dropout(dropout)
        self.rnn = nn.GRU(
            self.rnn_input_dim(emb_dim, memory_dim),
            hidden_dim,
            num_layers=num_layers,
            batch_first=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.attention = build_attention(
            attention,
            query_dim=hidden_dim,
            memory_dim=memory_dim,
            attn_dim=attn_dim,
            **(attention_options or {}),
        )
        self.bridge = nn.Linear(memory_dim, num_layers * hidden_dim) if bridge else None
        self.pre_output = nn.Linear(self.pre_output_dim(emb_dim, memory_dim), out_dim)
        self.generator = nn.Linear(out_dim, vocab_size)

    def rnn_input_dim(self, emb_dim: int, memory_dim: int) -> int:
        raise NotImplementedError

    def pre_output_dim(self, emb_dim: int, memory_dim: int) -> int:
        raise NotImplementedError

    def init_hidden(self, enc: Encoded) -> Tensor:
        """Bridge: `tanh(W [h_fw; h_bw])` -> `(L, B, H)`, or zeros without a bridge."""
        batch = enc.final.size(0)
        if self.bridge is None:
            return enc.final.new_zeros(self.num_layers, batch, self.hidden_dim)
        h = torch.tanh(self.bridge(enc.final)).view(batch, self.num_layers, self.hidden_dim)
        return h.transpose(0, 1).contiguous()

    def start(self, enc: Encoded) -> DecoderState:
        """Initial state for a batch of encoded sources."""
        return DecoderState(self.init_hidden(enc), self.attention.init_state(enc.memory, enc.mask))

    def generate(self, pre: Tensor) -> Tensor:
        """Pre-output `(..., D_out)` -> log-probabilities `(..., V)` in float32."""
        return torch.log_softmax(self.generator(pre).float(), dim=-1)

    def step(self, prev: Tensor, state: DecoderState) -> tuple[Tensor, Tensor, DecoderState]:
        """One step: previous tokens `(B,)` -> log-probs `(B, V)`, weights `(B, T)`, state."""
        raise NotImplementedError

    def forward(self, tgt_in: Tensor, enc: Encoded) -> tuple[Tensor, Tensor]:
        """Teacher forcing: `tgt_in (B, U)` (= <s> y) -> log-probs `(B, U, V)`,
        attention weights `(B, U, T)`."""
        state = self.start(enc)
        log_probs, weights = [], []
        for t in range(tgt_in.size(1)):
            lp, w, state = self.step(tgt_in[:, t], state)
            log_probs.append(lp)
            weights.append(w)
        return torch.stack(log_probs, 1), torch.stack(weights, 1)


class BahdanauDecoder(AttentionDecoder):
    """Attend with the previous state, then step the GRU on `[y_{t-1}; c_t]`."""

    def rnn_input_dim(self, emb_dim: int, memory_dim: int) -> int:
        return emb_dim + memory_dim

    def pre_output_dim(self, emb_dim: int, memory_dim: int) -> int:
        return emb_dim + self.hidden_dim + memory_dim

    def step(self, prev: Tensor, state: DecoderState) -> tuple[Tensor, Tensor, DecoderState]:
        emb = self.dropout(self.embedding(prev))  # (B, E)
        context, weights, attn = self.attention(state.hidden[-1], state.attn)
        out, hidden = self.rnn(torch.cat([emb, context], -1).unsqueeze(1), state.hidden)
        pre = torch.tanh(self.pre_output(torch.cat([emb, out[:, 0], context], -1)))
        return self.generate(self.dropout(pre)), weights, DecoderState(hidden, attn)

    def forward(self, tgt_in: Tensor, enc: Encoded) -> tuple[Tensor, Tensor]:
        """Teacher forcing as :meth:`step` in a loop, with the embeddings and the output
        layers computed for all steps at once (only attention and the GRU recur)."""
        state = self.start(enc)
        emb = self.dropout(self.embedding(tgt_in))  # (B, U, E)
        hidden, attn = state.hidden, state.attn
        outs, contexts, weights = [], [], []
        for t in range(tgt_in.size(1)):
            context, w, attn = self.attention(hidden[-1], attn)
            out, hidden = self.rnn(torch.cat([emb[:, t], context], -1).unsqueeze(1), hidden)
            outs.append(out[:, 0])
            contexts.append(context)
            weights.append(w)
        feats = torch.cat([emb, torch.stack(outs, 1), torch.stack(contexts, 1)], -1)
        pre = torch.tanh(self.pre_output(feats))
        return self.generate(self.dropout(pre)), torch.stack(weights, 1)


class LuongDecoder(AttentionDecoder):
    """Step the GRU, attend with the new state, `h~ = tanh(W_c [c; h])` (input feeding)."""

    def __init__(self, *args: Any, input_feeding: bool = True, **kwargs: Any) -> None:
        self.input_feeding = input_feeding
        super().__init__(*args, **kwargs)

    def rnn_input_dim(self, emb_dim: int, memory_dim: int) -> int:
        return emb_dim + (self.out_dim if self.input_feeding else 0)

    def pre_output_dim(self, emb_dim: int, memory_dim: int) -> int:
        return memory_dim + self.hidden_dim

    def start(self, enc: Encoded) -> DecoderState:
        state = super().start(enc)
        if self.input_feeding:
            state.feed = enc.memory.new_zeros(enc.memory.size(0), self.out_dim)
        return state

    def step(self, prev: Tensor, state: DecoderState) -> tuple[Tensor, Tensor, DecoderState]:
        emb = self.dropout(self.embedding(prev))
        rnn_in = torch.cat([emb, state.feed], -1) if self.input_feeding else emb
        out, hidden = self.rnn(rnn_in.unsqueeze(1), state.hidden)
        context, weights, attn = self.attention(out[:, 0], state.attn)
        pre = self.dropout(torch.tanh(self.pre_output(torch.cat([context, out[:, 0]], -1))))
        feed = pre if self.input_feeding else None
        return self.generate(pre), weights, DecoderState(hidden, attn, feed)

    def forward(self, tgt_in: Tensor, enc: Encoded) -> tuple[Tensor, Tensor]:
        """Without input feeding, a content scorer attends to all steps at once (unless a
        monotonic window makes each step depend on the last one's weights)."""
        parallel = hasattr(self.attention, "attend_all")
        parallel = parallel and getattr(self.attention, "window", None) is None
        if self.input_feeding or not parallel:
            return super().forward(tgt_in, enc)
        state = self.start(enc)
        out, _ = self.rnn(self.dropout(self.embedding(tgt_in)), state.hidden)
        contexts, weights = self.attention.attend_all(out, state.attn)
        pre = self.dropout(torch.tanh(self.pre_output(torch.cat([contexts, out], -1))))
        return self.generate(pre), weights


DECODERS: dict[str, type[AttentionDecoder]] = {"bahdanau": BahdanauDecoder, "luong": LuongDecoder}


class Seq2Seq(nn.Module):
    """Encoder + attention decoder. Special ids follow `aligner.text.symbols.SymbolTable`."""

    def __init__(
        self,
        encoder: BiGRUEncoder,
        decoder: AttentionDecoder,
        pad_id: int = 0,
        bos_id: int = 2,
        eos_id: int = 3,
    ) -> None:
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.pad_id, self.bos_id, self.eos_id = pad_id, bos_id, eos_id

    def encode(self, src: Tensor, src_lengths: Tensor) -> Encoded:
        """`src (B, T)`, `src_lengths (B,)` -> `Encoded`."""
        return self.encoder(src, src_lengths)

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor]:
        """Teacher forcing -> log-probs `(B, U, V)`, attention weights `(B, U, T)`."""
        return self.decoder(tgt_in, self.encode(src, src_lengths))

    def start(self, enc: Encoded) -> DecoderState:
        return self.decoder.start(enc)

    def step(self, prev: Tensor, state: DecoderState) -> tuple[Tensor, Tensor, DecoderState]:
        """`prev (B,)` -> log-probs `(B, V)`, weights `(B, T)`, new state."""
        return self.decoder.step(prev, state)

    @torch.no_grad()
    def score(self, src: Tensor, src_lengths: Tensor, tgt: Tensor, tgt_lengths: Tensor) -> Tensor:
        """Sum of log-probabilities of `tgt (B, U)` (each ending in </s>) -> `(B,)`."""
        bos = tgt.new_full((tgt.size(0), 1), self.bos_id)
        log_probs, _ = self(src, src_lengths, torch.cat([bos, tgt[:, :-1]], 1))
        token_lp = log_probs.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
        mask = lengths_to_mask(tgt_lengths, tgt.size(1))
        return (token_lp * mask).sum(1)


def build_seq2seq(
    src_vocab: int,
    tgt_vocab: int,
    decoder: str = "bahdanau",
    emb_dim: int = 128,
    enc_hidden: int = 256,
    enc_layers: int = 1,
    dec_hidden: int = 512,
    dec_layers: int = 1,
    attention: str = "additive",
    attn_dim: int = 256,
    attention_options: dict[str, Any] | None = None,
    out_dim: int = 256,
    dropout: float = 0.2,
    bridge: bool = True,
    input_feeding: bool = True,
    pad_id: int = 0,
    bos_id: int = 2,
    eos_id: int = 3,
) -> Seq2Seq:
    """Build a model from plain arguments (what a recipe's `model:` section holds)."""
    if decoder not in DECODERS:
        raise ValueError(f"unknown decoder {decoder!r}; choose one of {sorted(DECODERS)}")
    encoder = BiGRUEncoder(src_vocab, emb_dim, enc_hidden, enc_layers, dropout, pad_id)
    extra = {"input_feeding": input_feeding} if decoder == "luong" else {}
    dec = DECODERS[decoder](
        tgt_vocab,
        encoder.out_dim,
        emb_dim=emb_dim,
        hidden_dim=dec_hidden,
        num_layers=dec_layers,
        attention=attention,
        attn_dim=attn_dim,
        attention_options=attention_options,
        out_dim=out_dim,
        dropout=dropout,
        bridge=bridge,
        pad_id=pad_id,
        **extra,
    )
    return Seq2Seq(encoder, dec, pad_id, bos_id, eos_id)
