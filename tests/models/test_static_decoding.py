"""Free-running decoding with fixed shapes (`aligner.models.tacotron.static_decoding`): the same output as
`TacotronDecoder.generate` for every mechanism of the registry, and a step with no host
sync (what a CUDA graph needs), checked on the CPU by tracing it whole."""

from __future__ import annotations

import math

import pytest
import torch

from aligner.attention import available
from aligner.attention.base import lengths_to_mask
from aligner.models.tacotron.static_decoding import (
    WARMUP,
    StaticSteps,
    copy_state,
    distinct,
    generate_static,
    state_tensors,
)
from aligner.models.tacotron.steps import DecoderState, stop_cut
from tests.models.helpers import MEM, padded, small_decoder

LENGTHS = [7, 4, 6]


def memory_and_mask(lengths=LENGTHS, seed=0):
    torch.manual_seed(seed)
    return padded(lengths, MEM), lengths_to_mask(torch.tensor(lengths))


def threshold_for(decoder, memory, mask) -> float:
    """A stop threshold at which one item never stops (it hits its limit) and the others
    stop: between the two lowest of the items' highest stop logits in a decode that never
    stops."""
    logits = decoder.generate(memory, mask, stop_threshold=1.0, max_length_ratio=2.0).stop_logits
    highest = logits.max(1).values.sort().values
    return float(torch.sigmoid((highest[0] + highest[1]) / 2))


def assert_same(got, want) -> None:
    assert torch.equal(got.lengths, want.lengths) and torch.equal(got.hit_max, want.hit_max)
    torch.testing.assert_close(got.mel, want.mel, atol=1e-5, rtol=0)
    torch.testing.assert_close(got.alignments, want.alignments, atol=1e-5, rtol=0)
    assert torch.equal(torch.isinf(got.stop_logits), torch.isinf(want.stop_logits))
    finite = torch.isfinite(want.stop_logits)
    torch.testing.assert_close(got.stop_logits[finite], want.stop_logits[finite], atol=1e-5, rtol=0)


@pytest.mark.parametrize("attention", available())
def test_static_decoding_equals_generate_for_every_mechanism(attention):
    """Three padded items that stop at different steps or at their limit; the stop flags
    read every step, every 5 and every 16: the same decode."""
    decoder = small_decoder(r=2, attention=attention, dim=MEM)
    memory, mask = memory_and_mask()
    threshold = threshold_for(decoder, memory, mask)
    want = decoder.generate(memory, mask, stop_threshold=threshold, max_length_ratio=2.0)
    assert len(set(want.lengths.tolist())) > 1  # the case is not trivial
    assert want.hit_max.any() and not want.hit_max.all()
    for every in (1, 5, 16):
        got = generate_static(decoder, memory, mask, threshold, 2.0, check_every=every)
        assert_same(got, want)
    assert_same(decoder.generate(memory, mask, threshold, 2.0, static=True), want)


def test_static_decoding_keeps_the_window_and_max_steps():
    decoder = small_decoder(r=1)
    memory, mask = memory_and_mask([9, 6])
    options = {"stop_threshold": 1.0, "max_steps": 11, "window": (0, 1)}
    want = decoder.generate(memory, mask, **options)
    got = decoder.generate(memory, mask, static=True, **options)
    assert got.lengths.tolist() == [11, 11] and got.hit_max.all()
    assert_same(got, want)
    assert decoder.attention.window is None


@pytest.mark.parametrize("attention", available())
def test_a_static_step_traces_whole_with_no_host_sync(attention):
    """torch.compile(fullgraph=True) refuses a step that reads a value back to Python
    (``.item()``, ``bool(tensor)``, a data-dependent shape), which graph capture forbids."""
    torch._dynamo.reset()
    decoder = small_decoder(r=2, attention=attention, dim=MEM)
    memory, mask = memory_and_mask()
    limit = torch.tensor([5, 3, 4])
    eager = StaticSteps(decoder, memory, mask, limit, stop_cut(0.5))
    traced = StaticSteps(decoder, memory, mask, limit, stop_cut(0.5))
    step = torch.compile(traced.step, backend="eager", fullgraph=True)
    with torch.no_grad():
        for _ in range(3):
            eager.step()
            step()
    torch.testing.assert_close(traced.frames, eager.frames)
    assert torch.equal(traced.counter, eager.counter) and traced.counter.item() == 3


def test_one_step_decodes_and_the_buffers_have_room_for_a_warm_up():
    decoder = small_decoder(r=1)
    memory, mask = memory_and_mask()
    want = decoder.generate(memory, mask, stop_threshold=1.0, max_steps=1)
    assert_same(decoder.generate(memory, mask, stop_threshold=1.0, max_steps=1, static=True), want)
    steps = StaticSteps(decoder, memory, mask, torch.tensor([1, 1, 1]), math.inf)
    with torch.no_grad():
        for _ in range(1 + WARMUP):  # a capture's warm-up steps before the first real one
            steps.step()
    assert steps.frames.shape[1] == 1 + WARMUP


def test_reset_restores_the_start():
    decoder = small_decoder(r=1)
    memory, mask = memory_and_mask()
    steps = StaticSteps(decoder, memory, mask, torch.tensor([5, 2, 4]), math.inf)
    assert steps.size == 5 and steps.frames.shape[1] == 5 + WARMUP
    with torch.no_grad():
        for _ in range(3):
            steps.step()
        first = steps.frames.clone()
        assert steps.counter.item() == 3 and steps.frames[:, 3:].abs().max() == 0
        assert steps.done.tolist() == [False, True, False]  # item 1 at its limit
        steps.reset()
        assert steps.counter.item() == 0 and steps.frames.abs().max() == 0
        assert not steps.done.any()
        for _ in range(3):
            steps.step()
    torch.testing.assert_close(steps.frames, first)


def test_copy_state_copies_in_place_even_when_fields_trade_tensors():
    a, b, c, d, e, f = (torch.full((2, 3), float(k)) for k in range(6))
    target = DecoderState(a, b, (c,), (d,), e, {"x": f})
    # the next state moves attn_c's tensor to attn_h and attn_h's to dec_c, keeps e and f
    source = DecoderState(b, a + 10, (c + 10,), (a,), e, {"x": f})
    copy_state(target, source)
    assert target.attn_h is a and target.dec_c[0] is d and target.context is e
    values = [float(t[0, 0]) for t in state_tensors(target)]
    assert values == [1.0, 10.0, 12.0, 0.0, 4.0, 5.0]  # dec_c got attn_h's old value
    with pytest.raises(ValueError, match="states differ"):
        copy_state(target, DecoderState(a, b, (), (), e, None))


def test_distinct_gives_a_shared_tensor_a_buffer_of_its_own():
    zeros = torch.zeros(2, 3)
    state = distinct(DecoderState(zeros, zeros, (zeros,), (), zeros, {"x": zeros}))
    tensors = list(state_tensors(state))
    assert tensors[0] is zeros and len({id(t) for t in tensors}) == len(tensors) == 5


def test_bad_arguments_are_one_line():
    decoder = small_decoder()
    memory, mask = memory_and_mask()
    with pytest.raises(ValueError, match="check_every must be at least 1"):
        generate_static(decoder, memory, mask, check_every=0)
    with pytest.raises(ValueError, match="needs the model on a CUDA device"):
        generate_static(decoder, memory, mask, graph=True)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_cuda_graph_decodes_what_the_eager_loop_does():
    decoder = small_decoder(r=2).cuda()
    memory, mask = (t.cuda() for t in memory_and_mask())
    threshold = threshold_for(decoder, memory, mask)
    want = decoder.generate(memory, mask, stop_threshold=threshold, max_length_ratio=2.0)
    got = generate_static(decoder, memory, mask, threshold, 2.0, check_every=4, graph=True)
    assert_same(got, want)
