"""How right and how robust a TTS model's timing is, checkpoint by checkpoint: a
Tacotron's attention or a FastPitch's durations (the tables of egs/espeak/tts1/RESULTS.md
and egs/festival/tts1/RESULTS.md).

For each experiment folder and each of its last ``--last`` checkpoints: `aligner align`
(teacher-forced) on the valid and test splits and the word and phone boundary errors of
`aligner score-alignment` against the corpus's reference timings; for the last one also
long-form synthesis: ``--long`` sentences made of 2 to 4 training sentences joined with
commas, decoded free-running, each counted as a failure when it skips or repeats a token
(the core's metrics; each skipped token is listed with its neighbours and the weight it
got, in decoder steps, and each stretch where the attention went back with how far, how
long and how focused it was) or does not predict its end; and synthesis quality: the mel
distortion of ``--quality`` test sentences synthesized free-running against their
recordings (after DTW), their length ratio and the timing they were spoken with (the
alignment's frames per token fitted to the recording's length, scored against the
reference timings: a duration model's timing is measured the same way); ``--audio DIR``
writes them through Griffin-Lim for `phone_error_rate.py --audio-dir`. ``--seed`` names
the prenet dropout's seeds (long-form decodes once per seed); ``--window BACK,FRONT`` (or
``none``) decodes under that monotonic window, as ``aligner synthesize --window`` does; by default under the
recipe's (``model.decoder.window``), as ``aligner synthesize`` does.

    python scripts/eval_guide.py exp/dca_guided exp/dca_diagonal --data data [--last 5] \
        [--long 12] [--quality 50] [--seed 0 1 2] [--window 0,2|none] [--no-boundaries] \
        [--audio synth/] [--json table.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import torch

from aligner.inference.common import RECIPE_WINDOW


def checkpoints(exp: Path, last: int) -> list[Path]:
    """The last `last` ``ckpt-STEP.pt`` of an experiment, oldest first."""
    from aligner.checkpoint import list_checkpoints

    found = list_checkpoints(exp / "checkpoints")
    if not found:
        raise SystemExit(f"{exp}: no checkpoints")
    return found[-last:]


def boundary_errors(ckpt: Path, manifest: Path) -> dict[str, float]:
    """Mean word and phone boundary errors (ms) and the words within 20 ms (%)."""
    from aligner.evaluation.alignment import score_alignments
    from aligner.inference.align import align_manifest

    with tempfile.TemporaryDirectory() as tmp:
        align_manifest(ckpt, manifest, Path(tmp) / "a", png=False, force=True)
        score = score_alignments(manifest, Path(tmp) / "a")
    return {
        "words_ms": score["words"]["mean_ms"],
        "words_within_20ms": score["words"]["within_20ms"],
        "phones_ms": score["phones"]["mean_ms"]
        if score.get("phones", {}).get("boundaries")
        else None,
    }


def long_sentences(manifest: Path, n: int, seed: int = 0) -> list[tuple[int, str]]:
    """`n` texts of 2, 3 or 4 of the manifest's sentences (as many as it has, if fewer)
    joined with commas: (parts, text)."""
    from aligner.data.manifest import read_manifest

    texts = [str(it["text"]).strip().rstrip(".!?") for it in read_manifest(manifest)]
    texts = [t for t in texts if t]
    if len(texts) < 2:
        raise SystemExit(f"{manifest}: long-form needs 2 or more texts, found {len(texts)}")
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = min(2 + i % 3, len(texts))
        parts = rng.sample(texts, k)
        out.append(
            (k, ", ".join(p[0].lower() + p[1:] if j else p for j, p in enumerate(parts)) + ".")
        )
    return out


def long_form(
    ckpt: Path,
    sentences: list[tuple[int, str]],
    seeds: Sequence[int] = (0,),
    window: tuple[int, int] | str | None = RECIPE_WINDOW,
) -> dict[str, float]:
    """Failures of free-running synthesis, the sentences decoded once per seed of the
    prenet's dropout (under the monotonic `window`, as ``aligner synthesize --window``;
    ``"recipe"``: the recipe's): a skip, a repeat or no predicted end, counted over every
    decode."""
    from aligner.alignment.tiers import optional_tokens
    from aligner.attention.metrics import alignment_metrics
    from aligner.inference.loading import load_speech_model

    speech = load_speech_model(ckpt, "synthesize")
    ids = [speech.encode_text(text) for _, text in sentences]
    failures = {"skip": 0, "repeat": 0, "no_end": 0}
    failed, passed_over, went_back = 0, [], []
    tokens = [speech.symbols.decode(src.tolist()) for src in ids]
    sounds = [torch.from_numpy(~optional_tokens(t))[None] for t in tokens]  # must be attended
    for seed in seeds:
        torch.manual_seed(seed)  # the prenet's dropout stays on, as `aligner synthesize` runs
        results = speech.generate(ids, batch_size=4, max_length_ratio=10.0, window=window)
        for item, (required, result) in enumerate(zip(sounds, results)):
            w = result.alignment.float()[None]
            lengths = torch.tensor([w.size(1)]), torch.tensor([w.size(2)])
            m = alignment_metrics(w, *lengths, required, speech.r)
            bad = {"skip": float(m["skipped"][0]) > 0, "repeat": float(m["repeated"][0]) > 0}
            if bad["skip"]:
                passed_over += skipped_detail(w[0], required[0], tokens[item], item, seed, speech.r)
            if bad["repeat"]:
                went_back += backward_moves(w[0], tokens[item], item, seed)
            bad["no_end"] = bool(result.hit_max)
            for k, v in bad.items():
                failures[k] += int(v)
            failed += int(any(bad.values()))
    return {
        "window": speech.decoding_window(window),
        "sentences": len(sentences) * len(seeds),
        "failed": failed,
        **failures,
        "skipped_tokens": passed_over,
        "backward_moves": went_back,
    }


def backward_moves(
    weights: torch.Tensor, tokens: Sequence[str], sentence: int, seed: int
) -> list[dict]:
    """The stretches of one decode's ``weights (S, N)`` where the argmax path is behind the
    furthest token it had reached (every repeat the core counts has one): for each, the
    step it began, the furthest token and the earliest one it went back to (with the
    tokens between), how many tokens back, how many steps it stayed behind, and the mean
    top weight of those steps (near 1: a focused jump back, as when a word is said again;
    0.2-0.4: an attention spread over several tokens whose argmax wavers)."""
    path = weights.argmax(1).tolist()
    out, furthest, t = [], path[0], 1
    while t < len(path):
        if path[t] >= furthest:
            furthest, t = path[t], t + 1
            continue
        start = t
        while t < len(path) and path[t] < furthest:
            t += 1
        lowest = min(path[start:t])
        out.append(
            {
                "sentence": sentence,
                "seed": seed,
                "step": start,
                "from": tokens[furthest],
                "to": tokens[lowest],
                "context": "".join(tokens[lowest : furthest + 1]),
                "tokens_back": furthest - lowest,
                "steps": t - start,
                "top_weight": round(float(weights[start:t].max(1).values.mean()), 3),
            }
        )
    return out


def skipped_detail(
    weights: torch.Tensor,
    required: torch.Tensor,
    tokens: Sequence[str],
    sentence: int,
    seed: int,
    r: int = 1,
) -> list[dict]:
    """The tokens the core counts as skipped (`aligner.attention.metrics.skipped_mask`) in
    one decode's ``weights (S, N)``: for each, its place, its neighbours and the attention
    weight it got in all (in decoder steps: times r for frames). A token passed over
    entirely has a weight near 0; a short one passed quickly has some."""
    from aligner.attention.metrics import skipped_mask

    lengths = torch.tensor([weights.size(0)]), torch.tensor([weights.size(1)])
    skipped = skipped_mask(weights[None], *lengths, required=required[None], r=r)[0]
    total = weights.sum(0)
    out = []
    for i in torch.nonzero(skipped).flatten().tolist():
        before, after = "".join(tokens[max(0, i - 4) : i]), "".join(tokens[i + 1 : i + 5])
        out.append(
            {
                "sentence": sentence,
                "seed": seed,
                "token": tokens[i],
                "context": f"{before}[{tokens[i]}]{after}",
                "weight": round(float(total[i]), 3),
            }
        )
    return out


def synthesis_quality(
    ckpt: Path,
    manifest: Path,
    limit: int,
    seed: int = 0,
    window: tuple[int, int] | str | None = RECIPE_WINDOW,
    audio_dir: Path | None = None,
) -> dict[str, float]:
    """Free-running synthesis of the manifest's first `limit` texts (the prenet's dropout
    on, as `aligner synthesize` runs, seeded) against their recordings: the mean mel
    distortion after DTW (`aligner.audio.distortion.log_mel_cepstra`, dB), the mean ratio
    of synthesized to recorded frames, the items that reached the length limit, and the
    timing it spoke with: each token's frames in its alignment (the attention's argmax
    path, a duration model's own), fitted to the recording's length
    (`aligner.models.fastpitch.layers.fit_durations`), scored as boundaries against the
    reference timings (``spoken_words_ms``, ``spoken_phones_ms``). `audio_dir`: also
    write each as ``ID.wav`` through Griffin-Lim, for `phone_error_rate.py --audio-dir`."""
    import numpy as np
    import soundfile as sf

    from aligner.alignment.tiers import optional_tokens, token_tiers
    from aligner.attention.metrics import durations as path_durations
    from aligner.audio.distortion import log_mel_cepstra, mcd_dtw
    from aligner.audio.features import log_mel
    from aligner.audio.io import load_audio
    from aligner.data.manifest import read_manifest
    from aligner.inference.loading import load_speech_model
    from aligner.models.fastpitch.layers import fit_durations
    from aligner.tasks.truth import References, TruthErrors

    speech = load_speech_model(ckpt, "synthesize")
    items = list(read_manifest(manifest))[:limit]
    torch.manual_seed(seed)
    ids = [speech.encode_text(it["text"]) for it in items]
    results = speech.generate(ids, batch_size=16, window=window)
    references, spoken = References(items, speech.mel_cfg), TruthErrors()
    frame = speech.mel_cfg.hop_length / speech.mel_cfg.sample_rate
    if audio_dir is not None:
        audio_dir.mkdir(parents=True, exist_ok=True)
    mcd, ratio = [], []
    for item, src, result in zip(items, ids, results):
        wav = load_audio(item["audio"], speech.mel_cfg.sample_rate)[0]
        ref = log_mel(wav, speech.mel_cfg).numpy()
        mcd.append(mcd_dtw(log_mel_cepstra(result.mel.numpy()), log_mel_cepstra(ref)))
        ratio.append(len(result.mel) / len(ref))
        tokens = speech.symbols.decode(src.tolist())
        reference = references.get(item["id"])
        if reference is not None:
            w = result.alignment.float()[None]
            steps, n = torch.tensor([w.size(1)]), torch.tensor([w.size(2)])
            n_frames = torch.tensor([len(result.mel)])
            frames = path_durations(w, steps, n, speech.r, n_frames)[0].double()
            required = torch.from_numpy(~optional_tokens(tokens))
            fitted = fit_durations(frames, len(ref), required).tolist()
            pauses = references.pauses(item["id"], len(ref))
            kind = speech.tokenizer.kind
            spoken.add(reference, token_tiers(tokens, fitted, frame, kind, pauses=pauses))
        if audio_dir is not None:
            audio = speech.vocode(result.mel).cpu().numpy()
            sf.write(audio_dir / f"{item['id']}.wav", audio, speech.mel_cfg.sample_rate)
    timing = spoken.means()
    return {
        "window": speech.decoding_window(window),
        "items": len(items),
        "mel_distortion_db": float(np.mean(mcd)),
        "length_ratio": float(np.mean(ratio)),
        "hit_max": sum(r.hit_max for r in results),
        "spoken_words_ms": timing.get("word_boundary_ms"),
        "spoken_phones_ms": timing.get("phone_boundary_ms"),
    }


def window_arg(value: str) -> tuple[int, int] | str | None:
    """`aligner.inference.common.parse_window` for argparse."""
    from aligner.inference.common import parse_window

    try:
        return parse_window(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiments", nargs="+", type=Path)
    parser.add_argument("--data", type=Path, required=True, help="folder of valid/test.jsonl")
    parser.add_argument("--last", type=int, default=5)
    parser.add_argument("--long", type=int, default=12, help="long-form sentences (0: none)")
    parser.add_argument("--quality", type=int, default=50, help="test texts synthesized (0: none)")
    parser.add_argument("--no-boundaries", action="store_true", help="skip the align rows")
    parser.add_argument(
        "--seed",
        type=int,
        nargs="+",
        default=[0],
        help="of the prenet's dropout; long-form decodes once per seed, quality uses the first",
    )
    parser.add_argument(
        "--window",
        type=window_arg,
        default=RECIPE_WINDOW,
        help="decode long-form and quality texts under the monotonic window BACK,FRONT, none, "
        "or recipe: the one the checkpoint's recipe names (model.decoder.window; the default)",
    )
    parser.add_argument(
        "--audio",
        type=Path,
        help="write the quality texts' synthesis as AUDIO/EXP_NAME/ID.wav (Griffin-Lim)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    table = {}
    long = long_sentences(args.data / "test.jsonl", args.long) if args.long else []
    for exp in args.experiments:
        rows = []
        for ckpt in [] if args.no_boundaries else checkpoints(exp, args.last):
            row = {"checkpoint": ckpt.name}
            for split in ("valid", "test"):
                errors = boundary_errors(ckpt, args.data / f"{split}.jsonl")
                row |= {f"{split}_{k}": v for k, v in errors.items()}
            rows.append(row)
            print(exp.name, json.dumps(row), flush=True)
        entry = {"checkpoints": rows}
        if long:
            entry["long_form"] = long_form(checkpoints(exp, 1)[0], long, args.seed, args.window)
            print(exp.name, "long-form", json.dumps(entry["long_form"]), flush=True)
        if args.quality:
            last = checkpoints(exp, 1)[0]
            entry["quality"] = synthesis_quality(
                last,
                args.data / "test.jsonl",
                args.quality,
                args.seed[0],
                args.window,
                args.audio / exp.name if args.audio else None,
            )
            print(exp.name, "synthesis", json.dumps(entry["quality"]), flush=True)
        table[str(exp)] = entry
    for exp, entry in table.items():
        words = [r["valid_words_ms"] for r in entry["checkpoints"]] or [float("nan")]
        tests = [r["test_words_ms"] for r in entry["checkpoints"]] or [float("nan")]
        print(
            f"{exp}: words valid {sum(words) / len(words):.1f} ms (max {max(words):.1f}), "
            f"test {sum(tests) / len(tests):.1f} ms (max {max(tests):.1f}) over the last "
            f"{len(entry['checkpoints'])} checkpoints; long-form {_counts(entry.get('long_form'))}; "
            f"synthesis {entry.get('quality')}"
        )
    if args.json:
        args.json.write_text(json.dumps(table, indent=1) + "\n")
    return 0


def _counts(long: dict | None) -> dict | None:
    """The long-form counts without the lists of skipped tokens and backward moves."""
    lists = ("skipped_tokens", "backward_moves")
    return None if long is None else {k: v for k, v in long.items() if k not in lists}


if __name__ == "__main__":
    sys.exit(main())
