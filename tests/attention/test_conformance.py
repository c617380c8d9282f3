"""Conformance suite: properties every registered mechanism must have."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call

from aligner.attention import available

from .helpers import CASES, DIM, IDS, lengths_mask, make, run_steps

LENGTHS = [6, 3, 1]


def test_cases_cover_registry() -> None:
    assert {name for name, _ in CASES} == set(available())


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_weights_sum_to_one_and_zero_on_padding(name: str, opts: dict) -> None:
    attn = make(name, opts)
    mask = lengths_mask(LENGTHS)
    memory = torch.randn(3, 6, DIM)
    _, weights, _ = run_steps(attn, memory, mask, torch.randn(3, 5, DIM))
    assert torch.allclose(weights.sum(-1), torch.ones(3, 5), atol=1e-5)
    assert (weights.masked_select(~mask[:, None, :].expand_as(weights)) == 0).all()
    assert (weights >= 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_half_precision_and_empty_row(name: str, opts: dict, dtype: torch.dtype) -> None:
    attn = make(name, opts, dtype)
    mask = lengths_mask([6, 2, 0], 6)  # the last item has no valid position at all
    memory = (torch.randn(3, 6, DIM) * 30).to(dtype)  # large energies
    contexts, weights, state = run_steps(attn, memory, mask, torch.randn(3, 5, DIM).to(dtype))
    for tensor in (contexts, weights, state.cum_weights):
        assert torch.isfinite(tensor).all()
    sums = weights.float().sum(-1)
    assert torch.allclose(sums[:2], torch.ones(2, 5), atol=2e-2)
    assert (weights[2] == 0).all() and (contexts[2] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["fp16", "bf16"])
@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_autocast_with_float32_inputs(name: str, opts: dict, dtype: torch.dtype) -> None:
    """Under `torch.autocast` (what train.precision=bf16/fp16 runs) with float32 modules and
    inputs: finite weights that sum to one, zero on padding, an empty row all zeros, and
    the float32 result within the lower precision's error."""
    attn = make(name, opts)
    mask = lengths_mask([6, 2, 0], 6)
    memory, queries = torch.randn(3, 6, DIM) * 3, torch.randn(3, 5, DIM)
    with torch.autocast("cpu", dtype=dtype):
        contexts, weights, state = run_steps(attn, memory, mask, queries)
    for tensor in (contexts, weights, state.cum_weights):
        assert torch.isfinite(tensor).all()
    assert torch.allclose(weights.float().sum(-1)[:2], torch.ones(2, 5), atol=2e-2)
    assert (weights.masked_select(~mask[:, None, :].expand_as(weights)) == 0).all()
    _, exact, _ = run_steps(attn, memory, mask, queries)
    assert (weights.float() - exact).abs().max() < 0.15


class _Runner(torch.nn.Module):
    """Wraps a mechanism so that ``functional_call`` can run several steps with given
    parameters."""

    def __init__(self, attn: torch.nn.Module, mask: torch.Tensor) -> None:
        super().__init__()
        self.attn = attn
        self.mask = mask

    def forward(self, memory: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        contexts, weights, _ = run_steps(self.attn, memory, self.mask, queries)
        return torch.cat([contexts.flatten(), weights.flatten()])


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_gradcheck_reaches_every_parameter(name: str, opts: dict) -> None:
    runner = _Runner(make(name, opts, torch.float64), lengths_mask([4, 3]))
    names = [n for n, _ in runner.named_parameters()]
    params = tuple(p.detach().clone().requires_grad_() for _, p in runner.named_parameters())
    memory = torch.randn(2, 4, DIM, dtype=torch.float64, requires_grad=True)
    queries = torch.randn(2, 3, DIM, dtype=torch.float64, requires_grad=True)

    def steps(*inputs: torch.Tensor) -> torch.Tensor:
        tensors = dict(zip(names, inputs[: len(names)]))
        return functional_call(runner, tensors, (inputs[-2], inputs[-1]))

    inputs = (*params, memory, queries)
    assert torch.autograd.gradcheck(steps, inputs, eps=1e-6, atol=1e-5)
    out = steps(*inputs)
    grads = torch.autograd.grad((out * torch.randn_like(out)).sum(), inputs)
    for pname, grad in zip([*names, "memory", "queries"], grads):
        assert grad.abs().sum() > 0, f"no gradient reaches {pname}"


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_padded_batch_equals_items_alone(name: str, opts: dict) -> None:
    attn = make(name, opts).eval()
    memory = torch.randn(3, 6, DIM)
    queries = torch.randn(3, 4, DIM)
    contexts, weights, _ = run_steps(attn, memory, lengths_mask(LENGTHS), queries)
    for b, length in enumerate(LENGTHS):
        c1, w1, _ = run_steps(attn, memory[b : b + 1, :length], None, queries[b : b + 1])
        torch.testing.assert_close(weights[b, :, :length], w1[0], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(contexts[b], c1[0], atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_index_select_equals_recomputation(name: str, opts: dict) -> None:
    attn = make(name, opts).eval()
    memory = torch.randn(3, 6, DIM)
    mask = lengths_mask(LENGTHS)
    queries = torch.randn(3, 3, DIM)
    index = torch.tensor([2, 0, 0, 1])
    _, _, state = run_steps(attn, memory, mask, queries[:, :2])
    context, weights, after = attn(queries[index, 2], state.index_select(index))
    expected_c, expected_w, expected_state = run_steps(
        attn, memory[index], mask[index], queries[index]
    )
    torch.testing.assert_close(weights, expected_w[:, -1])
    torch.testing.assert_close(context, expected_c[:, -1])
    torch.testing.assert_close(after.cum_weights, expected_state.cum_weights)
    for key, value in after.extras.items():
        torch.testing.assert_close(value, expected_state.extras[key])


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_window_constraint_per_item(name: str, opts: dict) -> None:
    """Items with different last positions each stay inside their own window."""
    attn = make(name, opts).eval()
    memory = torch.randn(3, 9, DIM)
    mask = lengths_mask([9, 9, 7])
    state = attn.init_state(memory, mask)
    state.position = torch.tensor([1, 7, 4])
    attn.window = (1, 2)
    _, weights, state = attn(torch.randn(3, DIM), state)
    allowed = torch.zeros(3, 9, dtype=torch.bool)
    for b, (lo, hi) in enumerate([(0, 3), (6, 8), (3, 6)]):
        allowed[b, lo : hi + 1] = True
    assert (weights[~allowed] == 0).all()
    nonempty = weights.sum(1) > 0  # an empty row (local window outside) keeps its position
    expected = torch.where(nonempty, weights.argmax(1), torch.tensor([1, 7, 4]))
    assert torch.equal(state.position, expected)
    # and then step by step: each argmax stays within (back, front) of the previous one
    for _ in range(4):
        previous = state.position
        _, weights, state = attn(torch.randn(3, DIM), state)
        moved = state.position - previous
        assert ((moved >= -1) & (moved <= 2)).all()
        sums = weights.sum(1)
        if name.startswith("local"):  # the local window may miss the constraint: empty row
            assert (torch.isclose(sums, torch.ones(3), atol=1e-5) | (sums == 0)).all()
        else:
            assert torch.allclose(sums, torch.ones(3), atol=1e-5)


@pytest.mark.parametrize(("name", "opts"), CASES, ids=IDS)
def test_wrong_shapes_raise_value_error(name: str, opts: dict) -> None:
    attn = make(name, opts)
    with pytest.raises(ValueError, match=r"\(B, T, D_mem\).*got \(2, 5, 7\)"):
        attn.init_state(torch.randn(2, 5, 7))
    with pytest.raises(ValueError, match=r"mask.*\(2, 5\).*got \(2, 4\)"):
        attn.init_state(torch.randn(2, 5, DIM), torch.ones(2, 4, dtype=torch.bool))
    state = attn.init_state(torch.randn(2, 5, DIM))
    with pytest.raises(ValueError, match=r"query.*\(2, 4\).*got \(3, 4\)"):
        attn(torch.randn(3, DIM), state)
    with pytest.raises(ValueError, match=r"query.*got \(2, 5\)"):
        attn(torch.randn(2, 5), state)
