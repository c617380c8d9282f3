"""Ensemble decoding: probabilities averaged per step, driven by the same searches."""

from __future__ import annotations

import pytest
import torch

from aligner.decode.beam import beam_search, greedy_search
from aligner.decode.ensemble import Ensemble

from .test_beam import batch, tiny_model


def members():
    return [tiny_model("bahdanau", seed=3), tiny_model("luong", seed=4)]


@torch.no_grad()
def ensemble_log_prob(models, src, src_len, tokens: list[int]) -> float:
    """Independent reference: teacher-force each member on `tokens </s>` and sum
    `log mean_m p_m(y_t | y_<t, x)` over the steps."""
    tgt = torch.tensor([tokens + [models[0].eos_id]])
    tgt_in = torch.cat([torch.tensor([[models[0].bos_id]]), tgt[:, :-1]], 1)
    probs = [m(src[None], src_len[None], tgt_in)[0].exp() for m in models]  # (1, U, V) each
    mean = torch.stack(probs).mean(0).gather(-1, tgt[..., None])
    return float(mean.log().sum())


def assert_same(hyps_a, hyps_b):
    for a, b in zip(hyps_a, hyps_b):
        assert a.tokens == b.tokens
        assert a.score == pytest.approx(b.score, abs=1e-5)
        torch.testing.assert_close(a.attention, b.attention)


def test_one_member_or_two_copies_decode_as_the_model_alone():
    model = tiny_model("bahdanau", seed=5)
    src, src_len = batch()
    alone_greedy = greedy_search(model, src, src_len)
    alone_beam = beam_search(model, src, src_len, beam_size=3, nbest=2, alpha=0.6)
    for ensemble in (Ensemble([model]), Ensemble([model, model])):
        assert_same(greedy_search(ensemble, src, src_len), alone_greedy)
        for ours, ref in zip(beam_search(ensemble, src, src_len, 3, 2, 0.6), alone_beam):
            assert_same(ours, ref)


def test_step_is_the_log_of_the_mean_probability():
    models = members()
    ensemble = Ensemble(models)
    src, src_len = batch()
    state = ensemble.start(ensemble.encode(src, src_len))
    prev = torch.full((src.size(0),), ensemble.bos_id)
    lp, weights, _ = ensemble.step(prev, state)
    refs = [m.step(prev, m.start(m.encode(src, src_len))) for m in models]
    expected = torch.log((refs[0][0].exp() + refs[1][0].exp()) / 2)
    torch.testing.assert_close(lp, expected)
    torch.testing.assert_close(weights, (refs[0][1] + refs[1][1]) / 2)
    torch.testing.assert_close(lp.exp().sum(-1), torch.ones(src.size(0)))


def test_beam_scores_equal_the_teacher_forced_ensemble_probability():
    models = members()
    src, src_len = batch(seed=7)
    for b, hyps in enumerate(beam_search(Ensemble(models), src, src_len, 4, 3, 0.0)):
        assert hyps
        for hyp in hyps:
            ref = ensemble_log_prob(models, src[b, : src_len[b]], src_len[b], hyp.tokens)
            assert hyp.log_prob == pytest.approx(ref, abs=1e-4)
            assert hyp.score == pytest.approx(ref, abs=1e-4)


def test_ensemble_batch_equals_items_alone_and_beam_one_equals_greedy():
    ensemble = Ensemble(members())
    src, src_len = batch(seed=2)
    together = beam_search(ensemble, src, src_len, 3, 1, 0.0)
    for b in range(src.size(0)):
        n = int(src_len[b])
        (alone,) = beam_search(ensemble, src[b : b + 1, :n], src_len[b : b + 1], 3, 1, 0.0)
        assert alone[0].tokens == together[b][0].tokens
        assert alone[0].score == pytest.approx(together[b][0].score, abs=1e-5)
    greedy = greedy_search(ensemble, src, src_len)
    for g, (one,) in zip(greedy, beam_search(ensemble, src, src_len, 1, 1, 0.0)):
        assert g.tokens == one.tokens and g.score == pytest.approx(one.score, abs=1e-5)


def test_members_must_agree_on_special_ids():
    a, b = members()
    b.eos_id = 5
    with pytest.raises(ValueError, match="special ids"):
        Ensemble([a, b])
    with pytest.raises(ValueError, match="at least one"):
        Ensemble([])
    assert Ensemble([a]).eos_id == a.eos_id
