"""Tacotron decoder shared by TTS and VC, on any attention mechanism of the core.

One decoder step (``r`` mel frames):

    x        = prenet(previous frame)                      (B, P)
    a_h      = AttentionLSTM([x; context_{t-1}])           (B, A)
    context  = attention(a_h, memory)                      (B, D)
    h_1      = RNN_1([a_h; context]);  h_k = RNN_k(h_{k-1}) + h_{k-1}   (B, H)
    frames   = Linear([h_K; context]) -> (B, r, M);  stop = Linear([h_K; context]) -> (B,)

Teacher forcing runs the prenet on all previous frames at once and the projections on all
steps at once; only the recurrent part loops over steps, never over batch items. With
``feedback`` (scheduled sampling) some steps' inputs are the model's own frames, so the
prenet and the last frame's projection run inside the loop.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from aligner.attention import build_attention
from aligner.attention.base import MAX_WINDOW, check_window
from aligner.models.tacotron.free_running import generate_dynamic
from aligner.models.tacotron.prenet import Prenet
from aligner.models.tacotron.static_decoding import generate_static
from aligner.models.tacotron.steps import DecoderOutput, DecoderState


class TacotronDecoder(nn.Module):
    """Autoregressive mel decoder with an attention RNN and a residual decoder-RNN stack.

    Args:
        n_mels: mel bins M.
        memory_dim: encoder memory dimension D.
        r: reduction factor, frames predicted per step.
        attention: registry name in ``aligner.attention`` (default ``"location"``).
        attn_dim: its attention dimension.
        attention_options: extra keyword options of that mechanism.
        dec_layers: K decoder LSTM layers; layer k > 1 is residual.
        rnn_dropout: dropout on the RNN outputs (training only).
        feedback: scheduled sampling (Bengio et al. 2015) in teacher forcing: the share of
            decoder steps, drawn per item and step, fed the model's own prediction of the
            previous frame instead of the recording's (training only; 0: never). The
            decoder then learns from the inputs it meets free-running.
        window: the monotonic window ``(back, front)`` that synthesis applies by default
            (`synthesis_window`: read by ``aligner.inference``, which `generate` does not
            apply itself; None: none). It does not change training or the free-running
            validation, which measure the attention as it is.
    """

    def __init__(
        self,
        n_mels: int,
        memory_dim: int,
        r: int = 1,
        prenet_dims: tuple[int, ...] = (256, 256),
        prenet_dropout: float = 0.5,
        attn_rnn_dim: int = 1024,
        attention: str = "location",
        attn_dim: int = 128,
        attention_options: dict[str, Any] | None = None,
        dec_dim: int = 1024,
        dec_layers: int = 1,
        rnn_dropout: float = 0.1,
        feedback: float = 0.0,
        window: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        if r < 1 or dec_layers < 1:
            raise ValueError(f"need r >= 1 and dec_layers >= 1, got r={r}, dec_layers={dec_layers}")
        if not 0.0 <= feedback <= 1.0:
            raise ValueError(f"model.decoder.feedback must be between 0 and 1, got {feedback}")
        self.n_mels, self.r, self.rnn_dropout = n_mels, r, rnn_dropout
        self.feedback = feedback
        try:
            self.synthesis_window = check_window(None if window is None else tuple(window))
        except (TypeError, ValueError):
            raise ValueError(
                f"model.decoder.window must be [back, front], two whole numbers from 0 to "
                f"{MAX_WINDOW}, or null for none; got {window!r}"
            ) from None
        self.prenet = Prenet(n_mels, tuple(prenet_dims), prenet_dropout)
        self.attn_rnn = nn.LSTMCell(self.prenet.out_dim + memory_dim, attn_rnn_dim)
        self.attention = build_attention(
            attention,
            query_dim=attn_rnn_dim,
            memory_dim=memory_dim,
            attn_dim=attn_dim,
            **(attention_options or {}),
        )
        in_dims = [attn_rnn_dim + memory_dim] + [dec_dim] * (dec_layers - 1)
        self.dec_rnns = nn.ModuleList(nn.LSTMCell(d, dec_dim) for d in in_dims)
        self.proj = nn.Linear(dec_dim + memory_dim, n_mels * r)
        self.stop = nn.Linear(dec_dim + memory_dim, 1)

    # ----------------------------------------------------------------- state and one step
    def init_state(self, memory: torch.Tensor, mask: torch.Tensor) -> DecoderState:
        """memory (B, T_enc, D), mask (B, T_enc) -> zero state (keys projected once here)."""
        b = memory.size(0)
        zeros = lambda n: memory.new_zeros(b, n)  # noqa: E731
        a, h = self.attn_rnn.hidden_size, self.dec_rnns[0].hidden_size
        k = len(self.dec_rnns)
        return DecoderState(
            zeros(a),
            zeros(a),
            tuple(zeros(h) for _ in range(k)),
            tuple(zeros(h) for _ in range(k)),
            zeros(memory.size(-1)),
            self.attention.init_state(memory, mask),
        )

    def _recur(
        self, x: torch.Tensor, s: DecoderState
    ) -> tuple[torch.Tensor, torch.Tensor, DecoderState]:
        """The recurrent part of a step: prenet output x (B, P) -> (features (B, H + D),
        attention weights (B, T_enc), next state)."""
        attn_h, attn_c = self.attn_rnn(torch.cat([x, s.context], -1), (s.attn_h, s.attn_c))
        query = F.dropout(attn_h, self.rnn_dropout, self.training)
        context, weights, attn_state = self.attention(query, s.attention)
        h = torch.cat([query, context], -1)
        dec_h, dec_c = [], []
        for k, cell in enumerate(self.dec_rnns):
            hk, ck = cell(h, (s.dec_h[k], s.dec_c[k]))
            dec_h.append(hk)
            dec_c.append(ck)
            hk = F.dropout(hk, self.rnn_dropout, self.training)
            h = hk + h if k > 0 else hk
        state = DecoderState(attn_h, attn_c, tuple(dec_h), tuple(dec_c), context, attn_state)
        return torch.cat([h, context], -1), weights, state

    def _project(self, feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """feats (B, S, H + D) -> frames (B, S * r, M), stop logits (B, S)."""
        b, s, _ = feats.shape
        return self.proj(feats).reshape(b, s * self.r, self.n_mels), self.stop(feats).squeeze(-1)

    def step(
        self, frame: torch.Tensor, state: DecoderState
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, DecoderState]:
        """One decoder step from the previous frame (B, M) (zeros at the start):
        -> frames (B, r, M), stop logit (B,), weights (B, T_enc), next state."""
        feats, weights, state = self._recur(self.prenet(frame), state)
        frames, stop = self._project(feats[:, None])
        return frames, stop[:, 0], weights, state

    # ----------------------------------------------------------------- teacher forcing
    def previous_frames(self, mel: torch.Tensor) -> torch.Tensor:
        """Decoder inputs for teacher forcing: mel (B, T, M) -> (B, S, M), S = ceil(T / r);
        step 0 gets zeros (the go frame), step s the last frame of group s - 1."""
        b, t, m = mel.shape
        steps = math.ceil(t / self.r)
        last = mel[:, self.r - 1 :: self.r][:, : steps - 1]
        return torch.cat([mel.new_zeros(b, 1, m), last], 1)

    def forward(self, memory: torch.Tensor, mask: torch.Tensor, mel: torch.Tensor) -> DecoderOutput:
        """Teacher forcing. memory (B, T_enc, D), mask (B, T_enc), target mel (B, T, M)
        -> DecoderOutput with mel (B, T, M), stop_logits (B, S), alignments (B, S, T_enc)."""
        previous = self.previous_frames(mel)
        state = self.init_state(memory, mask)
        feats, weights = [], []
        feeding = self.training and self.feedback > 0
        x = None if feeding else self.prenet(previous)  # every step's input at once
        for s in range(previous.size(1)):
            if x is not None:
                step_input = x[:, s]
            elif s == 0:
                step_input = self.prenet(previous[:, 0])
            else:
                step_input = self.prenet(self._fed_back(previous[:, s], feats[-1]))
            f, w, state = self._recur(step_input, state)
            feats.append(f)
            weights.append(w)
        frames, stop = self._project(torch.stack(feats, 1))
        return DecoderOutput(frames[:, : mel.size(1)], stop, torch.stack(weights, 1))

    def _fed_back(self, recorded: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """Scheduled sampling: the next step's input frame (B, M), per item the model's own
        prediction of the last frame of the step before (from its features (B, H + D), no
        gradient through it) with probability ``feedback``, else the recorded one."""
        last = slice((self.r - 1) * self.n_mels, None)  # the last frame's rows of proj
        with torch.no_grad():
            own = F.linear(feats, self.proj.weight[last], self.proj.bias[last])
        pick = torch.rand(recorded.size(0), 1, device=recorded.device) < self.feedback
        return torch.where(pick, own, recorded)

    # ----------------------------------------------------------------- free running
    @torch.no_grad()
    def generate(
        self,
        memory: torch.Tensor,
        mask: torch.Tensor,
        stop_threshold: float = 0.5,
        max_length_ratio: float = 10.0,
        max_steps: int | None = None,
        window: tuple[int, int] | None = None,
        static: bool = False,
    ) -> DecoderOutput:
        """Batched free-running decoding with a per-item stop.

        An item stops at the first step whose stop probability exceeds ``stop_threshold``
        (that step's frames are kept) or when it has produced
        ``ceil(max_length_ratio * source length)`` frames (reported in ``hit_max``).
        ``max_steps`` caps every item (also reported in ``hit_max``). ``window=(back, front)``
        restricts attention around the last attended source position (the core's monotonic
        constraint). Returns mel (B, T, M) zero past ``lengths``. ``static``: every shape
        fixed, the stop flags read every 16 steps, those steps one CUDA graph on a GPU
        (`aligner.models.tacotron.static_decoding`; the same output within rounding); otherwise
        finished items leave the batch (`aligner.models.tacotron.free_running`).
        """
        previous = self.attention.window
        self.attention.window = window
        try:
            if static:
                return generate_static(
                    self,
                    memory,
                    mask,
                    stop_threshold,
                    max_length_ratio,
                    max_steps,
                    graph=memory.is_cuda,
                )
            return generate_dynamic(self, memory, mask, stop_threshold, max_length_ratio, max_steps)
        finally:
            self.attention.window = previous
