"""Batched beam search and greedy decoding against independent references."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.decode.beam import beam_search, greedy_search, length_penalty, max_lengths
from aligner.models.seq2seq.model import build_seq2seq


def tiny_model(decoder: str = "bahdanau", tgt_vocab: int = 9, seed: int = 0, **kw):
    torch.manual_seed(seed)
    model = build_seq2seq(
        11,
        tgt_vocab,
        decoder=decoder,
        emb_dim=8,
        enc_hidden=8,
        dec_hidden=12,
        attn_dim=8,
        out_dim=8,
        dropout=0.0,
        **kw,
    )
    # Larger output weights give peaked, varied distributions (harder for the search).
    with torch.no_grad():
        model.decoder.generator.weight.mul_(4.0)
    return model.eval()


def batch(seed: int = 1, lengths=(5, 2, 7, 3)):
    g = torch.Generator().manual_seed(seed)
    src_len = torch.tensor(lengths)
    src = torch.randint(4, 11, (len(lengths), max(lengths)), generator=g)
    src[torch.arange(max(lengths))[None] >= src_len[:, None]] = 0
    return src, src_len


@torch.no_grad()
def rescore(model, src, src_len, tokens: list[int]) -> tuple[float, torch.Tensor]:
    """Teacher-forced log P(tokens </s>) and attention weights of one item."""
    tgt = torch.tensor([tokens + [model.eos_id]])
    bos = torch.tensor([[model.bos_id]])
    log_probs, weights = model(src[None], src_len[None], torch.cat([bos, tgt[:, :-1]], 1))
    return float(log_probs.gather(-1, tgt[..., None]).sum()), weights[0]


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
def test_beam_one_equals_greedy(decoder):
    model = tiny_model(decoder)
    src, src_len = batch()
    greedy = greedy_search(model, src, src_len, max_len_ratio=1.5)
    beam = beam_search(model, src, src_len, beam_size=1, alpha=0.0, max_len_ratio=1.5)
    for g, (b,) in zip(greedy, beam):
        assert g.tokens == b.tokens
        assert g.score == pytest.approx(b.score, abs=1e-5)
        torch.testing.assert_close(g.attention, b.attention)


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
def test_batch_equals_items_alone(decoder):
    model = tiny_model(decoder, seed=3)
    src, src_len = batch(seed=4)
    together = beam_search(model, src, src_len, beam_size=4, nbest=3, alpha=0.6)
    for i in range(len(src_len)):
        n = int(src_len[i])
        (alone,) = beam_search(model, src[i : i + 1, :n], src_len[i : i + 1], 4, 3, 0.6)
        assert [h.tokens for h in alone] == [h.tokens for h in together[i]]
        for a, b in zip(alone, together[i]):
            assert a.score == pytest.approx(b.score, abs=1e-5)
            torch.testing.assert_close(a.attention, b.attention, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.2])
def test_scores_equal_teacher_forced_log_probs(alpha):
    model = tiny_model("luong", seed=5)
    src, src_len = batch(seed=6)
    results = beam_search(model, src, src_len, beam_size=5, nbest=5, alpha=alpha)
    for i, hyps in enumerate(results):
        assert len(hyps) == 5
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
        for h in hyps:
            log_prob, weights = rescore(model, src[i, : src_len[i]], src_len[i], h.tokens)
            n = len(h.tokens) + 1
            assert h.log_prob == pytest.approx(log_prob, abs=1e-4)
            assert h.score == pytest.approx(log_prob / ((5 + n) / 6) ** alpha, abs=1e-4)
            torch.testing.assert_close(h.attention, weights, atol=1e-5, rtol=1e-5)


def exhaustive_best(model, src, src_len, max_len: int, alpha: float, top: int):
    """Score every output (tokens + </s>, at most max_len long) by teacher forcing."""
    vocab = len(model.decoder.generator.weight)
    allowed = [t for t in range(vocab) if t not in (model.pad_id, model.bos_id, model.eos_id)]
    scored = []
    for n in range(max_len):
        for seq in itertools.product(allowed, repeat=n):
            log_prob, _ = rescore(model, src, src_len, list(seq))
            scored.append((log_prob / float(length_penalty(n + 1, alpha)), list(seq)))
    scored.sort(key=lambda x: -x[0])
    return scored[:top]


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), alpha=st.sampled_from([0.0, 0.5, 1.0, 2.0]))
def test_wide_beam_equals_exhaustive_search(seed, alpha):
    # Vocabulary of 4 outputs (<unk>, two symbols, </s>) and at most 4 tokens with </s>:
    # a beam of 27 = 3**3 keeps every prefix, so it must find the exact n-best.
    model = tiny_model("bahdanau", tgt_vocab=6, seed=seed)
    src, src_len = batch(seed=seed + 1, lengths=(4,))
    best = exhaustive_best(model, src[0], src_len[0], max_len=4, alpha=alpha, top=3)
    (hyps,) = beam_search(model, src, src_len, beam_size=27, nbest=3, alpha=alpha, max_len=4)
    assert [h.tokens for h in hyps] == [seq for _, seq in best]
    for h, (score, _) in zip(hyps, best):
        assert h.score == pytest.approx(score, abs=1e-4)


def test_lengths_respect_the_ratio_and_cap():
    model = tiny_model(seed=7)
    src, src_len = batch(seed=8)
    limits = max_lengths(src_len, 0.5, None)
    assert limits.tolist() == [math.ceil(0.5 * n) for n in src_len.tolist()]
    for hyps, limit in zip(beam_search(model, src, src_len, 3, 3, max_len_ratio=0.5), limits):
        assert all(len(h.tokens) + 1 <= limit for h in hyps)
    for h in greedy_search(model, src, src_len, max_len_ratio=3.0, max_len=2):
        assert len(h.tokens) <= 1


def test_never_emits_pad_or_bos_and_checks_arguments():
    model = tiny_model(seed=9)
    src, src_len = batch(seed=10)
    for hyps in beam_search(model, src, src_len, beam_size=6, nbest=6, alpha=0.3):
        for h in hyps:
            assert model.pad_id not in h.tokens and model.bos_id not in h.tokens
            assert model.eos_id not in h.tokens
    with pytest.raises(ValueError, match="nbest"):
        beam_search(model, src, src_len, beam_size=2, nbest=3)
