"""Rerank one model's n-best with a model that reads the target the other way round.

A right-to-left model (trained with `data.reverse_target: true`) predicts the last
phone first, so it errs in other places than a left-to-right one: its mistakes pile up
at the start of a word, the left-to-right model's at the end. Scoring every candidate
of the left-to-right beam both ways and keeping the best interpolation

    (1 - w) * score_l2r(y | x) + w * score_r2l(reverse(y) | x)

mends some of the forward model's choices (the agreement reranking of Liu et al. 2016,
"Agreement on Target-bidirectional Neural Machine Translation", used since in WMT and
G2P systems). Both scores are sums of token log-probabilities (with </s>) divided by the
same GNMT length penalty (a beam search's; greedy search leaves one candidate, nothing to
rerank), so `w = 0` keeps the beam's own order and scores.

Either side may be a single `Seq2Seq` or an `aligner.decode.ensemble.Ensemble`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import torch
from torch import Tensor

from aligner.data.collate import pad
from aligner.decode.beam import Hypothesis, length_penalty


@torch.no_grad()
def sequence_log_probs(
    model: object,
    src: Tensor,
    src_lengths: Tensor,
    tgt: Tensor,
    tgt_lengths: Tensor,
    rows: Tensor | None = None,
) -> Tensor:
    """Sum of `log p(tgt_t | tgt_<t, src)` over each row of `tgt (N, U)` (ids ending in
    </s>, padded after `tgt_lengths (N,)`) -> `(N,)`.

    `rows (N,)` names the source row of `src (B, T)` each target belongs to (default:
    row n for target n); every source is encoded once. Steps `model` (anything with
    `encode`/`start`/`step`: a `Seq2Seq` or an `Ensemble`) through the targets exactly as
    the searches do, so for an ensemble each token costs the log of the members' mean
    probability.
    """
    state = model.start(model.encode(src, src_lengths))
    if rows is not None:
        state = state.index_select(rows)
    prev = tgt.new_full((tgt.size(0),), model.bos_id)
    total = torch.zeros(tgt.size(0), device=tgt.device)
    for t in range(tgt.size(1)):
        log_probs, _, state = model.step(prev, state)
        token_lp = log_probs.gather(1, tgt[:, t : t + 1]).squeeze(1)
        total += torch.where(t < tgt_lengths, token_lp, torch.zeros_like(token_lp))
        prev = tgt[:, t]
    return total


def reverse_scores(
    model: object,
    src: Tensor,
    src_lengths: Tensor,
    nbest: Sequence[Sequence[Hypothesis]],
    alpha: float = 0.0,
) -> list[list[float]]:
    """The length-penalized log-probability that `model`, which reads the target in the
    opposite direction, gives every hypothesis: `log p(reverse(tokens) </s> | src) /
    lp(len + 1)`. `nbest[b]` are the hypotheses of source row `b`; all are scored in
    one batch."""
    rows = [b for b, hyps in enumerate(nbest) for _ in hyps]
    if not rows:
        return [[] for _ in nbest]
    seqs = [torch.tensor(h.tokens[::-1] + [model.eos_id]) for hyps in nbest for h in hyps]
    tgt, lengths, _ = pad(seqs, model.pad_id)
    index = torch.tensor(rows, device=src.device)
    lp = sequence_log_probs(
        model, src, src_lengths, tgt.to(src.device), lengths.to(src.device), index
    )
    flat = (lp.cpu() / length_penalty(lengths, alpha)).tolist()
    out, start = [], 0
    for hyps in nbest:
        out.append(flat[start : start + len(hyps)])
        start += len(hyps)
    return out


def rerank(
    nbest: Sequence[Sequence[Hypothesis]], reverse: Sequence[Sequence[float]], weight: float
) -> list[list[Hypothesis]]:
    """Each item's hypotheses reordered, best first, by `(1 - weight) * h.score + weight *
    reverse` (`reverse_scores`), which becomes their `score`; `log_prob` and `attention`
    stay the forward model's. `weight` is in [0, 1]; ties keep the beam's order."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the reverse model's weight must be in [0, 1], got {weight}")
    out = []
    for hyps, back in zip(nbest, reverse, strict=True):
        if len(hyps) != len(back):
            raise ValueError(f"{len(hyps)} hypotheses but {len(back)} reverse scores")
        scored = [replace(h, score=(1 - weight) * h.score + weight * r) for h, r in zip(hyps, back)]
        out.append(sorted(scored, key=lambda h: -h.score))
    return out
