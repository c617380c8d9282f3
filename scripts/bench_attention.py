"""Time one decoder step of every attention mechanism against a naive reference.

Batch 32, source length 200, dimension 512 (query, memory), attention dimension 128, CPU.
The naive references are the classic blog implementations: keys re-projected at every
step and the query repeated along the source before its projection. ``additive`` and
``location`` have dedicated naive twins with the same parameters (outputs checked to be
equal); every other mechanism is compared with re-running its own ``init_state`` each
step (keys re-projected every step).

    python scripts/bench_attention.py [--batch 32] [--length 200] [--dim 512] [--threads 1]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
from torch import Tensor

from aligner.attention import available, build_attention
from aligner.attention.base import Attention, masked_softmax


def naive_additive(attn: Attention, query: Tensor, memory: Tensor, mask: Tensor) -> Tensor:
    """Bahdanau step as blogs write it: project memory and a repeated query every step."""
    repeated = query.unsqueeze(1).expand(-1, memory.size(1), -1)
    hidden = torch.tanh(attn.query_layer(repeated) + attn.key_layer(memory))
    weights = masked_softmax(attn.v(hidden).squeeze(-1), mask)
    return torch.bmm(weights.unsqueeze(1), memory).squeeze(1)


def naive_location(
    attn: Attention, query: Tensor, memory: Tensor, mask: Tensor, prev: Tensor, cum: Tensor
) -> Tensor:
    """Location-sensitive step with per-step key projection and a repeated query."""
    repeated = query.unsqueeze(1).expand(-1, memory.size(1), -1)
    location = attn.location(torch.stack([prev, cum], dim=1))
    hidden = torch.tanh(attn.query_layer(repeated) + attn.key_layer(memory) + location)
    weights = masked_softmax(attn.v(hidden).squeeze(-1), mask)
    return torch.bmm(weights.unsqueeze(1), memory).squeeze(1)


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Median milliseconds of ``fn`` over ``repeat`` runs after warm-up."""
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * sorted(times)[len(times) // 2]


def bench(name: str, args: argparse.Namespace) -> tuple[float, float, str]:
    """``(ms_step, ms_naive, reference)`` for one mechanism."""
    gen = torch.Generator().manual_seed(0)
    memory = torch.randn(args.batch, args.length, args.dim, generator=gen)
    lengths = torch.randint(args.length // 2, args.length + 1, (args.batch,), generator=gen)
    mask = torch.arange(args.length)[None] < lengths[:, None]
    query = torch.randn(args.batch, args.dim, generator=gen)
    attn = build_attention(name, query_dim=args.dim, memory_dim=args.dim, attn_dim=128).eval()
    state = attn.init_state(memory, mask)
    _, _, state = attn(query, state)  # one step in, so weights are not trivial
    ms = timeit(lambda: attn(query, state), args.repeat)
    if name == "additive":
        context, _, _ = attn(query, state)
        torch.testing.assert_close(naive_additive(attn, query, memory, mask), context)
        naive = timeit(lambda: naive_additive(attn, query, memory, mask), args.repeat)
        return ms, naive, "blog additive"
    if name == "location":
        prev, cum = state.prev_weights, state.cum_weights
        context, _, _ = attn(query, state)
        reference = naive_location(attn, query, memory, mask, prev, cum)
        torch.testing.assert_close(reference, context)
        naive = timeit(lambda: naive_location(attn, query, memory, mask, prev, cum), args.repeat)
        return ms, naive, "blog location"
    naive = timeit(lambda: attn(query, attn.init_state(memory, mask)), args.repeat)
    return ms, naive, "keys re-projected"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=200)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"one decoder step, batch {args.batch}, source length {args.length}, dim {args.dim}, "
        f"attn_dim 128, CPU, {args.threads} thread(s), torch {torch.__version__}"
    )
    print(f"{'mechanism':<10} {'ms/step':>9} {'naive ms':>9} {'speed-up':>9}  reference")
    with torch.inference_mode():
        for name in available():
            ms, naive, reference = bench(name, args)
            print(f"{name:<10} {ms:>9.3f} {naive:>9.3f} {naive / ms:>8.2f}x  {reference}")


if __name__ == "__main__":
    main()
