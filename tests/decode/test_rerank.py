"""Reranking an n-best with a model that reads the target the other way round."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.decode.beam import Hypothesis, beam_search, length_penalty
from aligner.decode.ensemble import Ensemble
from aligner.decode.rerank import rerank, reverse_scores, sequence_log_probs

from .test_beam import batch, rescore, tiny_model


def padded_targets(seqs: list[list[int]], pad: int = 0):
    lengths = torch.tensor([len(s) for s in seqs])
    tgt = torch.full((len(seqs), int(lengths.max())), pad)
    for i, s in enumerate(seqs):
        tgt[i, : len(s)] = torch.tensor(s)
    return tgt, lengths


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
def test_stepped_log_probs_equal_the_teacher_forced_score(decoder):
    model = tiny_model(decoder, seed=2)
    src, src_len = batch()
    eos = model.eos_id
    tgt, lengths = padded_targets([[4, 5, eos], [eos], [6, 7, 8, 4, eos], [5, eos]])
    ours = sequence_log_probs(model, src, src_len, tgt, lengths)
    torch.testing.assert_close(ours, model.score(src, src_len, tgt, lengths))


def test_an_ensemble_scores_its_own_beam_output_with_the_beam_log_probs():
    ensemble = Ensemble([tiny_model("bahdanau", seed=3), tiny_model("luong", seed=4)]).eval()
    src, src_len = batch(seed=5)
    nbest = beam_search(ensemble, src, src_len, beam_size=3, nbest=3, alpha=0.0)
    rows = [b for b, hyps in enumerate(nbest) for _ in hyps]
    tgt, lengths = padded_targets([h.tokens + [ensemble.eos_id] for hyps in nbest for h in hyps])
    index = torch.tensor(rows)
    ours = sequence_log_probs(ensemble, src[index], src_len[index], tgt, lengths)
    expected = torch.tensor([h.log_prob for hyps in nbest for h in hyps])
    torch.testing.assert_close(ours, expected, atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 0.8])
def test_reverse_scores_are_the_other_model_on_the_reversed_tokens(alpha):
    """Items with different numbers of hypotheses (none, one, three) in one batch."""
    forward, backward = tiny_model("bahdanau", seed=6), tiny_model("luong", seed=7)
    src, src_len = batch(seed=8, lengths=(5, 2, 7))
    found = beam_search(forward, src, src_len, beam_size=3, nbest=3, alpha=alpha)
    nbest = [found[0][:1], [], found[2]]
    scores = reverse_scores(backward, src, src_len, nbest, alpha)
    assert [len(s) for s in scores] == [1, 0, 3]
    for b, hyps in enumerate(nbest):
        for h, ours in zip(hyps, scores[b]):
            lp, _ = rescore(backward, src[b], src_len[b], h.tokens[::-1])
            assert ours == pytest.approx(lp / float(length_penalty(len(h.tokens) + 1, alpha)))
    assert reverse_scores(backward, src[:1], src_len[:1], [[]]) == [[]]


def hyp(tokens, score):
    return Hypothesis(tokens, score, score * 2, torch.zeros(len(tokens) + 1, 3))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(-20, 0, allow_nan=False), st.floats(-20, 0, allow_nan=False)),
        min_size=1,
        max_size=6,
    ),
    st.floats(0, 1),
)
def test_rerank_orders_by_the_interpolated_score(pairs, weight):
    forward = sorted((f for f, _ in pairs), reverse=True)  # as the beam returns them
    hyps = [hyp([4 + i], f) for i, f in enumerate(forward)]
    back = [b for _, b in pairs]
    (out,) = rerank([hyps], [back], weight)
    assert sorted(h.tokens for h in out) == sorted(h.tokens for h in hyps)  # a permutation
    combined = {h.tokens[0]: (1 - weight) * h.score + weight * b for h, b in zip(hyps, back)}
    assert [h.score for h in out] == pytest.approx([combined[h.tokens[0]] for h in out])
    assert all(a.score >= b.score for a, b in zip(out, out[1:]))
    by_token = {h.tokens[0]: h for h in hyps}
    assert all(h.log_prob == by_token[h.tokens[0]].log_prob for h in out)


def test_weight_zero_keeps_the_beam_and_weight_one_follows_the_reverse_model():
    hyps = [hyp([4], -1.0), hyp([5], -1.0), hyp([6], -3.0)]  # a tie first: the beam's order
    (same,) = rerank([hyps], [[-9.0, -2.0, -1.0]], 0.0)
    assert [h.tokens for h in same] == [[4], [5], [6]]
    assert [h.score for h in same] == [-1.0, -1.0, -3.0]
    (back,) = rerank([hyps], [[-9.0, -2.0, -1.0]], 1.0)
    assert [h.tokens for h in back] == [[6], [5], [4]]
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        rerank([hyps], [[0.0, 0.0, 0.0]], 1.5)
    with pytest.raises(ValueError, match="3 hypotheses but 2"):
        rerank([hyps], [[0.0, 0.0]], 0.5)
    assert math.isclose(rerank([hyps], [[-9.0, -2.0, -1.0]], 0.5)[0][0].score, -1.5)
