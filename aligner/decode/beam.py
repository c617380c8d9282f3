"""Greedy and batched beam search for attention seq2seq models.

Works on any model offering `encode(src, src_lengths) -> Encoded`, `start(enc) -> state`,
`step(prev (B,), state) -> (log_probs (B, V), weights (B, T), state)` with
`state.index_select(index)`, and the ids `pad_id`, `bos_id`, `eos_id`
(see `aligner.models.seq2seq.model.Seq2Seq`).

The whole batch is searched at once: the `K` hypotheses of the `B` items live in
tensors of shape `(B*K, ...)`. Their histories are back-pointers, followed once at the
end, so a step costs the same however long the outputs are. Finished hypotheses sit
in a fixed-size buffer per item, merged with `topk`, and are kept until no alive
hypothesis can beat the n-th best of them (the GNMT length penalty can raise a longer
hypothesis' score, so the bound uses each item's maximum length).

Lengths count the output tokens including the final </s>. Hypothesis scores are
`log P(y | x) / lp(|y|)` with `lp(n) = ((5 + n) / 6) ** alpha` (Wu et al. 2016);
`alpha = 0` gives the plain sum of log-probabilities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class Hypothesis:
    """One output: `tokens` (ids, without </s>), `score` (length-penalized),
    `log_prob` (sum over the tokens and </s>), `attention (len(tokens) + 1, T_src)`."""

    tokens: list[int]
    score: float
    log_prob: float
    attention: Tensor


def length_penalty(length: Tensor | int, alpha: float) -> Tensor:
    """GNMT length penalty `((5 + n) / 6) ** alpha`."""
    return ((5.0 + torch.as_tensor(length, dtype=torch.float32)) / 6.0) ** alpha


def max_lengths(src_lengths: Tensor, max_len_ratio: float, max_len: int | None) -> Tensor:
    """Per-item output length limit (with </s>): `ceil(ratio * src_len)`, capped by `max_len`."""
    limit = torch.ceil(src_lengths.float() * max_len_ratio).long().clamp(min=1)
    return limit if max_len is None else limit.clamp(max=max_len)


def _ban(log_probs: Tensor, model: object) -> Tensor:
    """Forbid <pad> and <s> as outputs."""
    log_probs = log_probs.clone()
    log_probs[:, [model.pad_id, model.bos_id]] = -math.inf
    return log_probs


def _force_eos(log_probs: Tensor, at_limit: Tensor, eos_id: int) -> Tensor:
    """Rows where `at_limit (N,)` is True may only emit </s>."""
    keep = log_probs[:, eos_id].clone()
    log_probs = log_probs.masked_fill(at_limit[:, None], -math.inf)
    log_probs[:, eos_id] = keep
    return log_probs


@torch.no_grad()
def greedy_search(
    model: object,
    src: Tensor,
    src_lengths: Tensor,
    max_len_ratio: float = 2.0,
    max_len: int | None = None,
) -> list[Hypothesis]:
    """Arg-max decoding of a batch `src (B, T)` -> one `Hypothesis` per item."""
    enc = model.encode(src, src_lengths)
    state = model.start(enc)
    batch = src.size(0)
    limits = max_lengths(src_lengths, max_len_ratio, max_len).to(src.device)
    prev = src.new_full((batch,), model.bos_id)
    done = torch.zeros(batch, dtype=torch.bool, device=src.device)
    total = torch.zeros(batch, device=src.device)
    out_len = torch.zeros(batch, dtype=torch.long, device=src.device)
    tokens, weights = [], []
    for t in range(int(limits.max())):
        log_probs, w, state = model.step(prev, state)
        log_probs = _force_eos(_ban(log_probs, model), limits == t + 1, model.eos_id)
        lp, prev = log_probs.max(-1)
        total += torch.where(done, torch.zeros_like(lp), lp)
        out_len += (~done).long()
        done |= prev == model.eos_id
        tokens.append(prev)
        weights.append(w)
        if bool(done.all()):
            break
    tokens_t, weights_t = torch.stack(tokens, 1), torch.stack(weights, 1)
    return [
        Hypothesis(
            tokens_t[b, : out_len[b] - 1].tolist(),
            float(total[b]),
            float(total[b]),
            weights_t[b, : out_len[b], : int(src_lengths[b])].cpu(),
        )
        for b in range(batch)
    ]


class _Finished:
    """Per-item buffer of the `F` best finished hypotheses: their scores, lengths and
    the alive row each ended from; `_History.trace` recovers their tokens at the end."""

    def __init__(self, batch: int, size: int, device: torch.device):
        self.size = size
        self.score = torch.full((batch, size), -math.inf, device=device)
        self.log_prob = torch.full((batch, size), -math.inf, device=device)
        self.length = torch.ones(batch, size, dtype=torch.long, device=device)
        self.origin = torch.zeros(batch, size, dtype=torch.long, device=device)

    def merge(self, score: Tensor, log_prob: Tensor, length: int, origin: Tensor):
        """Add candidates `score (B, C)` (-inf = none) of `length` tokens (with </s>)
        ending from the alive rows `origin (B, C)`, keeping the `F` best per item."""
        self.score, idx = torch.cat([self.score, score], 1).topk(self.size, dim=1)
        self.log_prob = torch.cat([self.log_prob, log_prob], 1).gather(1, idx)
        lengths = torch.full_like(origin, length)
        self.length = torch.cat([self.length, lengths], 1).gather(1, idx)
        self.origin = torch.cat([self.origin, origin], 1).gather(1, idx)


class _History:
    """Back-pointers of the alive hypotheses, so a step costs the same at any length.

    Step `t` keeps the attention `weights (B*K, T)` that each alive row of step `t - 1`
    produced, and for the rows alive after it their `token (B*K,)` and `parent (B*K,)`
    (a row of step `t - 1`).
    """

    def __init__(self, eos_id: int):
        self.eos_id = eos_id
        self.weights: list[Tensor] = []
        self.token: list[Tensor] = []
        self.parent: list[Tensor] = []

    def add(self, weights: Tensor, token: Tensor, parent: Tensor) -> None:
        self.weights.append(weights)
        self.token.append(token)
        self.parent.append(parent)

    def trace(self, origin: Tensor, length: Tensor) -> tuple[Tensor, Tensor]:
        """Tokens `(B, F, L)` (</s> last, 0 after) and attention `(B, F, L, T)` of
        hypotheses that ended with </s> at step `length - 1` from alive row `origin`."""
        steps = int(length.max())
        row = origin.clone()
        tokens = origin.new_zeros(*origin.shape, steps)
        attn = self.weights[0].new_zeros(*origin.shape, steps, self.weights[0].size(1))
        for s in range(steps - 1, -1, -1):
            live, end = length > s, length - 1 == s  # step s is in the output / its </s>
            parent = self.parent[s][row]
            tokens[..., s] = torch.where(end, self.eos_id, self.token[s][row]) * live
            attn[..., s, :] = self.weights[s][torch.where(end, row, parent)] * live[..., None]
            row = torch.where(live & ~end, parent, row)
        return tokens, attn


@torch.no_grad()
def beam_search(
    model: object,
    src: Tensor,
    src_lengths: Tensor,
    beam_size: int = 5,
    nbest: int = 1,
    alpha: float = 0.0,
    max_len_ratio: float = 2.0,
    max_len: int | None = None,
) -> list[list[Hypothesis]]:
    """Beam search over a batch `src (B, T)`, `src_lengths (B,)` -> per item up to `nbest`
    hypotheses, best first."""
    _check_beam(beam_size, nbest, alpha)
    batch, k, device = src.size(0), beam_size, src.device
    enc = model.encode(src, src_lengths)
    expand = torch.arange(batch, device=device).repeat_interleave(k)
    state = model.start(enc).index_select(expand)
    limits = max_lengths(src_lengths, max_len_ratio, max_len).to(device)  # (B,)
    finished = _Finished(batch, k, device)
    history = _History(model.eos_id)
    bound_lp = length_penalty(limits, alpha).to(device)  # best possible penalty per item

    alive = torch.full((batch, k), -math.inf, device=device)
    alive[:, 0] = 0.0  # only the first copy of each item starts alive
    prev = src.new_full((batch * k,), model.bos_id)
    base = (torch.arange(batch, device=device) * k)[:, None]
    for t in range(int(limits.max())):
        log_probs, weights, state = model.step(prev, state)
        at_limit = (limits == t + 1).repeat_interleave(k)
        log_probs = _force_eos(_ban(log_probs, model), at_limit, model.eos_id)
        vocab = log_probs.size(-1)
        cand = (alive.view(-1, 1) + log_probs).view(batch, k * vocab)
        top_lp, top_idx = cand.topk(min(2 * k, k * vocab), dim=1)  # (B, 2K)
        origin = base + top_idx // vocab  # flat row of the parent hypothesis
        token = top_idx % vocab
        is_eos = token == model.eos_id
        _finish(finished, top_lp, is_eos, origin, k, t + 1, alpha)
        # Alive: the K best candidates that did not end.
        alive, pick = torch.where(is_eos, -math.inf, top_lp).topk(k, dim=1)  # (B, K)
        rows = origin.gather(1, pick).view(-1)
        prev = token.gather(1, pick).view(-1)
        history.add(weights, prev, rows)
        state = state.index_select(rows)
        # alive log-probs only fall, and lp(n) grows with n: the best any alive
        # hypothesis can still reach is its log-prob over the largest penalty.
        can_reach = alive.max(1).values / bound_lp
        if bool((finished.score[:, nbest - 1] >= can_reach).all()):
            break
    return _collect(finished, history, nbest, src_lengths)


def _check_beam(beam_size: int, nbest: int, alpha: float) -> None:
    if not 1 <= nbest <= beam_size:
        raise ValueError(f"nbest must be between 1 and beam_size={beam_size}, got {nbest}")
    if alpha < 0:
        raise ValueError(f"length penalty alpha must be >= 0, got {alpha}")


def _finish(
    finished: _Finished,
    top_lp: Tensor,
    is_eos: Tensor,
    origin: Tensor,
    k: int,
    length: int,
    alpha: float,
) -> None:
    """Move the candidates `(B, 2K)` that end with </s> among the top K into `finished`."""
    ranks = torch.arange(top_lp.size(1), device=top_lp.device)[None]
    fin = is_eos & (ranks < k) & torch.isfinite(top_lp)
    if bool(fin.any()):  # most steps end nothing
        score = torch.where(fin, top_lp / length_penalty(length, alpha), -math.inf)
        finished.merge(score, torch.where(fin, top_lp, -math.inf), length, origin)


def _collect(
    finished: _Finished, history: _History, nbest: int, src_lengths: Tensor
) -> list[list[Hypothesis]]:
    """Turn the finished buffer into per-item lists of `Hypothesis`, best first."""
    length = finished.length[:, :nbest]
    tokens, attn = history.trace(finished.origin[:, :nbest], length)
    results = []
    for b in range(finished.score.size(0)):
        hyps = []
        for j in range(nbest):
            score = float(finished.score[b, j])
            if not math.isfinite(score):
                break
            n = int(length[b, j])
            hyps.append(
                Hypothesis(
                    tokens[b, j, : n - 1].tolist(),
                    score,
                    float(finished.log_prob[b, j]),
                    attn[b, j, :n, : int(src_lengths[b])].cpu(),
                )
            )
        results.append(hyps)
    return results


def search(
    model: object,
    src: Tensor,
    src_lengths: Tensor,
    beam: int = 1,
    nbest: int = 1,
    alpha: float = 0.0,
    max_len_ratio: float = 2.0,
) -> list[list[Hypothesis]]:
    """Greedy (`beam == 1` and `nbest == 1`) or beam search -> an n-best list per item."""
    if beam == 1 and nbest == 1:
        return [[h] for h in greedy_search(model, src, src_lengths, max_len_ratio)]
    return beam_search(model, src, src_lengths, beam, nbest, alpha, max_len_ratio)
