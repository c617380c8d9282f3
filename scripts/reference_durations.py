"""Durations files whose frames are a manifest's reference timings: each item's durations
file of the alignment model (`aligner align`: its tokens, hop and length) with every
token's frames taken from the item's reference phone times instead, so that a duration
model can be trained on the truth and compared with one trained on the alignment model's
estimate: what the labels cost (egs/espeak/tts1/RESULTS.md, "What holds the durations
back").

The reference phones pair with the file's phone tokens (every token that belongs to a
word) in order; an item whose counts differ is left out and counted. A token that belongs
to no word (separator, punctuation, ``<s>``) ends where the next phone starts (after the
last phone, where it ends), and the last token takes the rest of the recording; ends are
rounded to frames along the utterance, a time t at frame edge t / hop + 1/2 (the alignment
model's tiers put a boundary half a frame before the frame's centre).

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

from aligner.alignment.tiers import FRAME_CENTRE, optional_tokens

SUFFIX = ".durations.json"


def reference_frames(record: dict[str, Any], phones: list[list[Any]]) -> list[int] | None:
    """The frames (N,) of ``record``'s tokens from reference ``phones`` ([start, end,
    label] seconds), or None when the phones do not pair with the record's phone tokens."""
    tokens = record["tokens"]
    is_phone = ~optional_tokens(tokens)
    if int(is_phone.sum()) != len(phones) or not phones:
        return None
    hop = record["hop_length"] / record["sample_rate"]
    total = int(record["total_frames"])
    ends, k = [], 0
    for phone in is_phone:
        if phone:
            ends.append(float(phones[k][1]))
            k += 1
        else:  # up to the next phone's start; after the last phone, its end
            ends.append(float(phones[k][0] if k < len(phones) else phones[-1][1]))
    frames, previous = [], 0
    for end in ends:
        boundary = int(np.clip(round(end / hop + FRAME_CENTRE), previous, total))
        frames.append(boundary - previous)
        previous = boundary
    frames[-1] += total - previous
    return frames


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
        frames = reference_frames(record, phones)
        if frames is None:
            left_out += 1
            continue
        hop = record["hop_length"] / record["sample_rate"]
        starts = np.concatenate([[0], np.cumsum(frames)[:-1]]) * hop
        labels = [
            t for t, skip in zip(record["tokens"], optional_tokens(record["tokens"])) if not skip
        ]
        timings = items[record["id"]]["timings"]
        record.update(
            method="reference",
            frames=frames,
            seconds=[round(f * hop, 6) for f in frames],
            start_seconds=[round(float(s), 6) for s in starts],
            # the tiers too: `duration_target: sub_frame` learns the reference's boundaries
            phones=[[float(a), float(b), label] for (a, b, _), label in zip(phones, labels)],
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
