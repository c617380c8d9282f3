"""Time the batched beam search: a whole batch at once against one item at a time, and
the cost of a step at short and long outputs.

A randomly initialized seq2seq model (the G2P recipe's sizes by default) decodes
`--batch` sources of `--length` tokens. Random weights rarely choose </s>, so the
outputs run to their length limit (`--ratio` times the source length), which makes the
step count known. Both searches must return the same hypotheses; the script checks it.

    python scripts/bench_beam.py [--batch 64] [--length 12] [--beam 5] [--threads 1]
        [--long-src 40] [--long-ratio 6] [--decoder bahdanau|luong]

Prints the seconds of each, the speed-up of batching, and milliseconds per step for
`--batch` sources of `--long-src` tokens with outputs of half that length and of
`--long-ratio` times it: their ratio is about 1 when a step's cost does not grow with
the output length.
"""

from __future__ import annotations

import argparse
import time

import torch

from aligner.decode.beam import beam_search
from aligner.models.seq2seq.model import build_seq2seq


def model_for(args: argparse.Namespace) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_seq2seq(
        args.vocab,
        args.vocab,
        decoder=args.decoder,
        emb_dim=128,
        enc_hidden=256,
        enc_layers=2,
        dec_hidden=512,
        attn_dim=256,
        out_dim=256,
        dropout=0.0,
    ).eval()


def sources(
    batch: int, length: int, vocab: int, full: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch` random sources of `length` tokens (with `full`) or of length/2..length."""
    gen = torch.Generator().manual_seed(1)
    shortest = length if full else max(1, length // 2)
    lengths = torch.randint(shortest, length + 1, (batch,), generator=gen)
    src = torch.randint(4, vocab, (batch, length), generator=gen)
    src[torch.arange(length)[None] >= lengths[:, None]] = 0
    return src, lengths


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=12, help="source tokens (longest)")
    parser.add_argument("--long-src", type=int, default=40, help="source tokens, step timing")
    parser.add_argument("--long-ratio", type=float, default=6.0, help="long outputs' ratio")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--ratio", type=float, default=1.5, help="max output/source length")
    parser.add_argument("--vocab", type=int, default=60)
    parser.add_argument("--decoder", choices=["bahdanau", "luong"], default="bahdanau")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = model_for(args)
    src, lengths = sources(args.batch, args.length, args.vocab)

    def search(s, n):
        return beam_search(model, s, n, args.beam, 1, 0.0, args.ratio)

    search(src[:2], lengths[:2])  # warm-up
    t_batch, together = timed(lambda: search(src, lengths))
    t_alone, alone = timed(
        lambda: [
            search(src[i : i + 1, : lengths[i]], lengths[i : i + 1])[0] for i in range(len(src))
        ]
    )
    same = all(a[0].tokens == b[0].tokens for a, b in zip(together, alone))
    print(f"beam {args.beam}, {args.batch} sources of up to {args.length} tokens, {args.decoder}")
    print(
        f"batched: {t_batch:.2f} s   one at a time: {t_alone:.2f} s   speed-up {t_alone / t_batch:.1f}x"
    )
    print(f"same hypotheses: {same}")

    per_step = {}
    s, n = sources(args.batch, args.long_src, args.vocab, full=True)
    for ratio in (0.5, args.long_ratio):
        t, out = timed(lambda r=ratio: beam_search(model, s, n, args.beam, 1, 0.0, r))
        steps = max(len(h[0].tokens) + 1 for h in out)
        per_step[ratio] = 1000 * t / steps
        ms = per_step[ratio]
        print(f"{args.batch} sources of {args.long_src} tokens: {steps} steps, {ms:.2f} ms/step")
    grow = per_step[args.long_ratio] / per_step[0.5]
    print(f"ms/step of the long outputs over the short ones: {grow:.2f}")
    if not same:
        raise SystemExit("batched and one-at-a-time search disagree")


if __name__ == "__main__":
    main()
