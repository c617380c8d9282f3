#!/usr/bin/env python
"""BLEU and chrF (sacrebleu) of translations against a manifest's targets.

    python scripts/eval_nmt.py --hyp exp/decode/test.hyp --manifest data/test.jsonl

`--hyp` holds one translation a line, in the manifest's order (what
`aligner translate --in data/test.jsonl` prints: detokenized text). Scores are
case-sensitive unless `--lowercase` is given (sacrebleu's 13a tokenization).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import sacrebleu

from aligner.data.manifest import read_manifest


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hyp", type=Path, required=True)
    parser.add_argument("--manifest", type=Path, required=True)
    parser.add_argument(
        "--lowercase",
        action="store_true",
        help="case-insensitive scores (for a model trained with data.lowercase_target)",
    )
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    for path in (args.hyp, args.manifest):
        if not path.is_file():
            sys.exit(f"{path} does not exist")
    refs = [item["target"] for item in read_manifest(args.manifest)]
    hyps = args.hyp.read_text(encoding="utf-8").splitlines()
    if len(hyps) != len(refs):
        sys.exit(f"{args.hyp} has {len(hyps)} lines but {args.manifest} {len(refs)} items")
    if args.lowercase:  # corpus_chrf has no lowercase option: fold both sides here
        hyps, refs = [h.lower() for h in hyps], [r.lower() for r in refs]
    bleu = sacrebleu.corpus_bleu(hyps, [refs])
    chrf = sacrebleu.corpus_chrf(hyps, [refs])
    scores = {"sentences": len(refs), "bleu": round(bleu.score, 2), "chrf": round(chrf.score, 2)}
    print(json.dumps(scores) if args.json else f"{bleu}\n{chrf}")


if __name__ == "__main__":
    main()
