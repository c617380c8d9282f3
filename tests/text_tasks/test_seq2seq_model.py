"""The text seq2seq model: packing, the two decoders, teacher forcing vs stepping."""

from __future__ import annotations

import pytest
import torch

from aligner.models.seq2seq.model import build_seq2seq


def model(decoder="bahdanau", **kw):
    args = dict(emb_dim=8, enc_hidden=6, dec_hidden=10, attn_dim=7, out_dim=9, dropout=0.0)
    args.update(kw)
    return build_seq2seq(13, 11, decoder=decoder, **args).eval()


def padded(lengths, vocab=13, seed=0):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor(lengths)
    src = torch.randint(4, vocab, (len(lengths), int(lengths.max())), generator=g)
    src[torch.arange(src.size(1))[None] >= lengths[:, None]] = 0
    return src, lengths


@pytest.mark.parametrize("layers", [1, 2])
def test_encoder_any_length_order_equals_items_alone(layers):
    m = model(enc_layers=layers)
    src, lengths = padded([3, 7, 1, 5])  # unsorted on purpose
    enc = m.encode(src, lengths)
    assert enc.mask.tolist() == (torch.arange(7)[None] < lengths[:, None]).tolist()
    for i, n in enumerate(lengths.tolist()):
        alone = m.encode(src[i : i + 1, :n], lengths[i : i + 1])
        torch.testing.assert_close(enc.memory[i, :n], alone.memory[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(enc.final[i], alone.final[0], atol=1e-6, rtol=1e-5)
        assert bool((enc.memory[i, n:] == 0).all())


@pytest.mark.parametrize("decoder", ["bahdanau", "luong"])
@pytest.mark.parametrize("attention", ["additive", "general", "local-p"])
def test_teacher_forcing_equals_stepping_and_padding_is_ignored(decoder, attention):
    m = model(decoder, attention=attention, dec_layers=2)
    src, lengths = padded([4, 6, 2], seed=1)
    tgt = torch.randint(2, 11, (3, 5))
    log_probs, weights = m(src, lengths, tgt)
    assert torch.allclose(log_probs.exp().sum(-1), torch.ones(3, 5), atol=1e-5)
    assert bool((weights[0, :, 4:] == 0).all()) and bool((weights[2, :, 2:] == 0).all())
    state = m.start(m.encode(src, lengths))
    for t in range(5):
        lp, w, state = m.step(tgt[:, t], state)
        torch.testing.assert_close(lp, log_probs[:, t])
        torch.testing.assert_close(w, weights[:, t])


def test_luong_without_input_feeding_attends_all_at_once_like_the_step_loop():
    m = model("luong", input_feeding=False, attention="general")
    src, lengths = padded([5, 3], seed=2)
    tgt = torch.randint(2, 11, (2, 6))
    fast = m(src, lengths, tgt)
    slow = super(type(m.decoder), m.decoder).forward(tgt, m.encode(src, lengths))
    for a, b in zip(fast, slow):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_luong_with_a_monotonic_window_steps_instead_of_attending_all_at_once():
    m = model("luong", input_feeding=False, attention="general")
    m.decoder.attention.window = (1, 2)
    src, lengths = padded([5, 3], seed=2)
    tgt = torch.randint(2, 11, (2, 6))
    log_probs, weights = m(src, lengths, tgt)  # attend_all would raise here
    slow = super(type(m.decoder), m.decoder).forward(tgt, m.encode(src, lengths))
    torch.testing.assert_close(log_probs, slow[0])
    assert (weights[0, 0, 3:] == 0).all()  # the window limits the first step to 0..2


def test_bahdanau_attends_with_the_previous_state_luong_with_the_new_one():
    src, lengths = padded([4, 5], seed=3)
    prev = torch.tensor([2, 2])
    for decoder in ("bahdanau", "luong"):
        m = model(decoder)
        enc = m.encode(src, lengths)
        state = m.start(enc)
        _, weights, _ = m.step(prev, state)
        if decoder == "bahdanau":
            query = state.hidden[-1]  # the bridge's state, before the GRU step
        else:
            emb = m.decoder.embedding(prev)
            rnn_in = torch.cat([emb, state.feed], -1).unsqueeze(1)
            query = m.decoder.rnn(rnn_in, state.hidden)[0][:, 0]
        _, expected, _ = m.decoder.attention(
            query, m.decoder.attention.init_state(enc.memory, enc.mask)
        )
        torch.testing.assert_close(weights, expected)


def test_bridge_starts_from_the_encoder_final_states_and_gradients_reach_everything():
    m = model(dec_layers=2).train()
    src, lengths = padded([4, 2], seed=4)
    enc = m.encode(src, lengths)
    expected = torch.tanh(m.decoder.bridge(enc.final)).view(2, 2, 10).transpose(0, 1)
    torch.testing.assert_close(m.decoder.init_hidden(enc), expected)
    log_probs, _ = m(src, lengths, torch.randint(2, 11, (2, 3)))
    log_probs.sum().backward()
    unused = {"encoder.embedding.weight"}  # row updates only; all used here anyway
    for name, p in m.named_parameters():
        assert p.grad is not None and (p.grad.abs().sum() > 0 or name in unused), name


def test_bad_inputs_raise_clear_errors():
    m = model()
    with pytest.raises(ValueError, match="at least one token"):
        m.encode(torch.tensor([[4, 5]]), torch.tensor([0]))
    with pytest.raises(ValueError, match="unknown decoder"):
        build_seq2seq(5, 5, decoder="transformer")
