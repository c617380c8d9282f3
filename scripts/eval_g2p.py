#!/usr/bin/env python
"""PER/WER of a G2P checkpoint on a CMUdict split, side by side with the g2p_en package.

    python scripts/eval_g2p.py --checkpoint exp/g2p/checkpoints/best.pt --data data/cmudict

Several checkpoints (`--checkpoint A.pt B.pt ...`) are decoded as one ensemble
(`aligner.decode.ensemble`: the members' probabilities averaged at every step).
`--r2l R.pt [...] --r2l-weight 0.3 0.5` adds one row per weight: the beam's n-best
reranked by right-to-left models (`aligner.decode.rerank`); choose the weight on the
valid split (`--split valid`), then report it on the test split. With `--r2l`, the
`aligner` row's words per second count the search for the whole n-best (its best output
is the same as without).

A word is correct when its output equals ANY of its reference pronunciations (the
manifest may hold several lines per word); PER sums the edit distance to the closest
reference over the summed length of those references. `g2p_en`'s neural model
(`G2p.predict`, no dictionary look-up, no tagger download) runs on the same words;
note that it was trained on CMUdict, possibly on some of these test words.
Both systems are scored twice: on the phones with their stress digits (as trained and as
CMUdict writes them) and with the stress digits removed (the 39-phoneme setting in which
most published CMUdict results, e.g. Yao & Zweig 2015, are reported).
Words per second are measured on this machine for each system (batched beam search
for aligner, g2p_en's one-word-at-a-time numpy decoder).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import types
from pathlib import Path

import torch

from aligner.data.collate import length_batches, pad
from aligner.data.manifest import read_manifest
from aligner.decode.beam import search
from aligner.decode.rerank import rerank, reverse_scores
from aligner.inference import InferenceError, load_reverse_model, load_text_model
from aligner.text.metrics import g2p_scores
from aligner.text.splitting import splitter


def references(manifest: Path, lowercase: bool) -> dict[str, list[list[str]]]:
    """word -> list of pronunciations (token lists), in manifest order."""
    refs: dict[str, list[list[str]]] = {}
    for item in read_manifest(manifest):
        word = item["source"].lower() if lowercase else item["source"]
        refs.setdefault(word, []).append(item["target"].split())
    return refs


def run_aligner(
    ckpts: list[Path],
    words: list[str],
    beam: int,
    alpha: float | None,
    batch: int,
    reverse: list[Path] | None = None,
    weights: list[float] = (),
):
    """Hypotheses (word -> phones) and words per second of an aligner checkpoint (or of
    an ensemble of several), as `{name: (hyps, speed)}`, and the length penalty used.

    With `reverse` checkpoints (models reading the target the other way), the beam's
    n-best is also reranked with them at each of `weights` (`aligner.decode.rerank`):
    rows ``r2l@W``, whose speed counts both models."""
    try:
        main = load_text_model(ckpts, "g2p")
        back = load_reverse_model(reverse, main).model if reverse else None
        alpha, max_len_ratio = main.decoding(alpha)
    except InferenceError as err:
        sys.exit(str(err))
    split = splitter(main.data["src_split"], main.data["lowercase"])
    nbests: dict[str, list] = {}
    backs: dict[str, list[float]] = {}
    nbest = beam if back is not None else 1
    reverse_seconds = 0.0
    start = time.perf_counter()  # tokenizing and padding count, as before --r2l existed
    encoded = [main.src.encode(split(w), unknown="map") for w in words]
    for chunk in length_batches([len(ids) for ids in encoded], batch):
        padded, lengths, _ = pad([torch.tensor(encoded[k], dtype=torch.long) for k in chunk], 0)
        results = search(main.model, padded, lengths, beam, nbest, alpha, max_len_ratio)
        nbests.update((words[k], hyps) for k, hyps in zip(chunk, results))
        if back is not None:
            started = time.perf_counter()
            scores = reverse_scores(back, padded, lengths, results, alpha)
            backs.update((words[k], s) for k, s in zip(chunk, scores))
            reverse_seconds += time.perf_counter() - started
    total_seconds = time.perf_counter() - start

    phones = main.output_tokens
    forward = len(words) / (total_seconds - reverse_seconds)
    systems = {"aligner": ({w: phones(nbests[w][0]) for w in words}, forward)}
    for weight in weights if back is not None else ():
        reranked = rerank([nbests[w] for w in words], [backs[w] for w in words], weight)
        hyps = {w: phones(r[0]) for w, r in zip(words, reranked)}
        systems[f"r2l@{weight:g}"] = (hyps, len(words) / total_seconds)
    return systems, alpha


def load_g2p_en():
    """g2p_en's G2p without its NLTK downloads (its neural model needs neither the
    tagger nor NLTK's cmudict)."""
    import nltk

    nltk.download = lambda *args, **kwargs: False  # offline: no download attempts
    import g2p_en.g2p as module

    saved = module.cmudict
    module.cmudict = types.SimpleNamespace(dict=dict)
    try:
        return module.G2p()
    finally:
        module.cmudict = saved


def run_g2p_en(words: list[str]):
    """Hypotheses and words per second of g2p_en's neural prediction."""
    g2p = load_g2p_en()
    start = time.perf_counter()
    hyps = {w: g2p.predict(w) for w in words}
    return hyps, len(words) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint", type=Path, nargs="+", required=True, help="several: an ensemble"
    )
    parser.add_argument(
        "--r2l",
        type=Path,
        nargs="+",
        default=None,
        help="right-to-left checkpoint(s) (data.reverse_target) that rerank the beam's n-best",
    )
    parser.add_argument(
        "--r2l-weight",
        type=float,
        nargs="+",
        default=None,
        help="weight(s) of the right-to-left score in [0, 1]; one row each (default 0.5)",
    )
    parser.add_argument("--data", type=Path, required=True, help="folder with test.jsonl")
    parser.add_argument("--split", default="test", help="manifest name (default: test)")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument(
        "--alpha", type=float, default=None, help="GNMT length penalty (default: the recipe's)"
    )
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--limit", type=int, default=None, help="first N words only")
    parser.add_argument("--no-g2p-en", action="store_true", help="skip the g2p_en comparison")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    args = parser.parse_args(argv)
    if args.batch < 1 or args.beam < 1:
        sys.exit(f"need --batch >= 1 and --beam >= 1, got {args.batch} and {args.beam}")
    if args.threads:
        torch.set_num_threads(args.threads)
    if not args.no_g2p_en:  # fail before the long decoding, not after it
        # find_spec, not import: importing g2p_en before load_g2p_en has disabled NLTK's
        # downloads makes it try to fetch its tagger and print errors when offline.
        missing = [m for m in ("g2p_en", "nltk") if importlib.util.find_spec(m) is None]
        if missing:
            sys.exit(
                f"{' and '.join(missing)} not installed: pip install -e '.[g2p-compare]', "
                "or pass --no-g2p-en"
            )
    manifest = args.data / f"{args.split}.jsonl"
    if not manifest.is_file():
        sys.exit(f"{manifest} does not exist; run `aligner prepare cmudict` first")
    refs = references(manifest, lowercase=True)
    words = list(refs)[: args.limit]
    refs = {w: refs[w] for w in words}
    if args.r2l_weight is not None and not args.r2l:
        sys.exit("--r2l-weight needs --r2l CHECKPOINT to rerank with")
    if args.r2l and args.beam < 2:
        sys.exit("--r2l reranks the beam's candidates: give --beam 2 or more")
    weights = list(dict.fromkeys(args.r2l_weight or [0.5]))  # each weight once
    if not all(0 <= w <= 1 for w in weights):
        sys.exit(f"--r2l-weight takes weights in [0, 1], got {args.r2l_weight}")
    systems, alpha = run_aligner(
        args.checkpoint, words, args.beam, args.alpha, args.batch, args.r2l, weights
    )
    rows = [(name, *_score(result, refs)) for name, result in systems.items()]
    if not args.no_g2p_en:
        rows.append(("g2p_en", *_score(run_g2p_en(words), refs)))
    members = f", ensemble of {len(args.checkpoint)}" if len(args.checkpoint) > 1 else ""
    if args.r2l:
        members += f", r2l@W: n-best reranked by {len(args.r2l)} right-to-left model(s)"
    print(f"{len(words)} words from {manifest} (beam {args.beam}, alpha {alpha}{members})")
    print(f"{'':<12}{'with stress':>16}{'without stress':>18}")
    print(f"{'system':<12}{'PER %':>8}{'WER %':>8}{'PER %':>9}{'WER %':>9}{'words/s':>10}")
    for name, per, wer, per_ns, wer_ns, speed in rows:
        print(f"{name:<12}{per:>8.2f}{wer:>8.2f}{per_ns:>9.2f}{wer_ns:>9.2f}{speed:>10.1f}")


def _score(result, refs):
    """(PER %, WER %) with stress, (PER %, WER %) without, words per second."""
    hyps, speed = result
    scores = g2p_scores(hyps, refs)
    return (*(scores[k] for k in ("per", "wer", "per_no_stress", "wer_no_stress")), speed)


if __name__ == "__main__":
    main()
