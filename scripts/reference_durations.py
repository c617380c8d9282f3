"""Durations files whose frames are a manifest's reference timings: each item's durations
file of the alignment model (`aligner align`: its tokens, hop and length) with every
token's frames taken from the item's reference phone times instead, so that a duration
model can be trained on the truth and compared with one trained on the alignment model's
estimate: what the labels cost (egs/espeak/tts1/RESULTS.md, "What holds the durations
back").

The reference phones (silences left out) pair with the file's tokens as another tool's
TextGrid phones do for a guide (`aligner.alignment.transfer.transferred_frames`: labels
compared without case and stress, pauses to the separator or punctuation between two
phones); an item whose phones do not pair is left out and counted.

    python scripts/reference_durations.py --data egs/espeak/tts1/data \
        --durations durations --out durations_reference [--splits train valid]
    python scripts/duration_model_alone.py --data egs/espeak/tts1/data \
        --set data.durations=durations_reference
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from aligner.alignment.intervals import SILENCE_LABELS, Interval
from aligner.alignment.tiers import optional_tokens
from aligner.alignment.transfer import pair_labels, transferred_frames

SUFFIX = ".durations.json"


def reference_frames(
    record: dict[str, Any], phones: list[list[Any]]
) -> tuple[list[int], list[list[Any]]] | None:
    """The frames (N,) of ``record``'s tokens from reference ``phones`` ([start, end,
    label] seconds), with the phones tier of the tokens they pair with (the reference's
    times, the tokens' labels); None when the phones do not pair with the tokens."""
    tokens = record["tokens"]
    timed = [Interval(float(a), float(b), str(c)) for a, b, c in phones]
    timed = [p for p in timed if p.label.strip().lower() not in SILENCE_LABELS]
    hop = record["hop_length"] / record["sample_rate"]
    optional = optional_tokens(tokens)
    found = transferred_frames(timed, tokens, optional, int(record["total_frames"]), hop)
    if found is None:
        return None
    sounds = [k for k in range(len(tokens)) if not optional[k]]
    paired, _ = pair_labels([p.label for p in timed], [tokens[k] for k in sounds])
    tier = [[p.start, p.end, tokens[sounds[j]]] for p, j in zip(timed, paired) if j is not None]
    return found[0].tolist(), tier


def convert(data: Path, durations: str, out: str, split: str) -> tuple[int, int]:
    """Write ``data/out/split`` from ``data/durations/split`` and ``data/split.jsonl``;
    returns (written, left out)."""
    items, manifest = {}, data / f"{split}.jsonl"
    for number, line in enumerate(manifest.read_text(encoding="utf-8").splitlines(), 1):
        try:
            item = json.loads(line) if line.strip() else None
            if item is not None:
                items[str(item["id"])] = item
        except (json.JSONDecodeError, KeyError, TypeError):
            raise SystemExit(f"{manifest}:{number}: not a manifest item with an id") from None
    target = data / out / split
    target.mkdir(parents=True, exist_ok=True)
    written = left_out = 0
    for path in sorted((data / durations / split).glob(f"*{SUFFIX}")):
        record = json.loads(path.read_text(encoding="utf-8"))
        phones = (items.get(record["id"], {}).get("timings") or {}).get("phones") or []
        found = reference_frames(record, phones)
        if found is None:
            left_out += 1
            continue
        frames, tier = found
        hop = record["hop_length"] / record["sample_rate"]
        starts = np.concatenate([[0], np.cumsum(frames)[:-1]]) * hop
        timings = items[record["id"]]["timings"]
        record.update(
            method="reference",
            frames=frames,
            seconds=[round(f * hop, 6) for f in frames],
            start_seconds=[round(float(s), 6) for s in starts],
            # the tiers too: `duration_target: sub_frame` learns the reference's boundaries
            phones=tier,
            words=timings.get("words", record.get("words", [])),
        )
        (target / path.name).write_text(json.dumps(record, indent=1), encoding="utf-8")
        written += 1
    return written, left_out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--durations", default="durations")
    parser.add_argument("--out", default="durations_reference")
    parser.add_argument("--splits", nargs="+", default=["train", "valid"])
    args = parser.parse_args(argv)
    for split in args.splits:
        source = args.data / args.durations / split
        if not source.is_dir() or not (args.data / f"{split}.jsonl").is_file():
            print(f"{source}: no durations or no {split}.jsonl beside them", file=sys.stderr)
            return 2
        written, left_out = convert(args.data, args.durations, args.out, split)
        print(
            f"{split}: {written} written to {args.data / args.out / split}, "
            f"{left_out} left out (their reference phones do not pair with the tokens)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
