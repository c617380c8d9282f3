"""``aligner score``: outputs of `aligner g2p` / `aligner translate` against a manifest's
references (PER/WER for G2P, BLEU/chrF for translation), and the audio of `aligner
convert` against its targets (VC: mel-cepstral distortion, F0 and duration errors)."""

from __future__ import annotations

from pathlib import Path

from aligner.data.manifest import manifest_items
from aligner.evaluation import EvaluationError
from aligner.evaluation.vc import score_systems
from aligner.files import NotUtf8Error, read_utf8
from aligner.text.metrics import corpus_bleu, corpus_chrf, g2p_scores


def _references(ref: Path) -> list[dict]:
    return manifest_items(ref, "--ref", ("target",), "give a manifest such as data/test.jsonl")


def _hypothesis_lines(hyp: Path) -> list[str]:
    if not hyp.is_file():
        raise EvaluationError(f"--hyp {hyp} does not exist")
    try:  # a byte-order mark (Windows) is no character of the first line
        return read_utf8(hyp).splitlines()
    except NotUtf8Error as err:
        raise EvaluationError(
            f"--hyp {hyp}:{err.line} is not UTF-8 text (byte {err.byte:#x}); save it as UTF-8"
        ) from None


def score_g2p(hyp: Path, ref: Path) -> dict[str, float]:
    """PER/WER (%), with and without stress digits, of the ``word<TAB>phonemes`` lines of
    `hyp` (what `aligner g2p --in MANIFEST` prints; with ``--nbest``, its
    ``word<TAB>rank<TAB>score<TAB>phonemes`` lines of rank 1) against the pronunciations of
    `ref` (a word is right when it equals any of them). Words are matched
    case-insensitively; a word of `ref` with no line in `hyp` is an error naming it."""
    refs: dict[str, list[list[str]]] = {}
    for item in _references(ref):
        refs.setdefault(str(item["source"]).strip().lower(), []).append(str(item["target"]).split())
    hyps: dict[str, list[str]] = {}
    for n, line in enumerate(_hypothesis_lines(hyp), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) == 4 and fields[1].strip().isdigit():  # --nbest: rank 1 scored
            if int(fields[1]) != 1:
                continue
            fields = [fields[0], fields[3]]
        if len(fields) != 2:
            raise EvaluationError(
                f"{hyp}:{n}: expected 'word<TAB>phonemes' (or --nbest's "
                f"'word<TAB>rank<TAB>score<TAB>phonemes'), got {line[:40]!r}"
            )
        hyps.setdefault(fields[0].strip().lower(), fields[1].split())
    missing = [w for w in refs if w not in hyps]
    if missing:
        raise EvaluationError(
            f"{hyp} has no output for {len(missing)} word(s) of {ref}, e.g. {missing[0]!r}; "
            "decode the whole manifest (aligner g2p --in MANIFEST)"
        )
    return {"words": len(refs), **g2p_scores({w: hyps[w] for w in refs}, refs)}


def score_nmt(hyp: Path, ref: Path, lowercase: bool = False) -> dict[str, float]:
    """Corpus BLEU and chrF (sacrebleu, 13a tokenization) of `hyp` (one translation a line,
    in the manifest's order) against the targets of `ref`; `lowercase` ignores case."""
    refs = [str(item["target"]) for item in _references(ref)]
    hyps = _hypothesis_lines(hyp)
    if len(hyps) != len(refs):
        nbest = any(len(h.split("\t")) == 4 for h in hyps)  # input, rank, score, output
        hint = "; it looks like --nbest output: translate with --nbest 1" if nbest else ""
        raise EvaluationError(f"{hyp} has {len(hyps)} lines but {ref} {len(refs)} items{hint}")
    if refs and not any(h.strip() for h in hyps):
        raise EvaluationError(f"{hyp}: every line is empty (no translation to score)")
    return {
        "sentences": len(refs),
        "bleu": round(corpus_bleu(hyps, refs, lowercase), 2),
        "chrf": round(corpus_chrf(hyps, refs, lowercase), 2),
    }


def score_vc(hyp: Path) -> dict[str, float]:
    """Scores of converted audio against the target voice, and of the source itself (no
    conversion) for comparison, as VC papers report them (`aligner.evaluation.vc`):
    MCD in dB (SPTK mel-cepstra of WORLD envelopes, c0 excluded, DTW-aligned), F0 RMSE
    (Hz) and correlation on frames voiced in both, V/UV error, the mean absolute duration
    difference (s) and the mean duration ratio (converted / target).

    `hyp` is the ``manifest.jsonl`` that `aligner convert --in MANIFEST --out DIR` writes:
    its items hold the converted ``audio``, the ``source_audio`` and the ``target_audio``.
    Keys: ``items``, ``closer_than_source`` (share of items whose MCD is below the
    source's) and ``KEY_converted`` / ``KEY_source`` for KEY in mcd, mcd_std, f0_rmse_hz,
    f0_corr, vuv_error, duration_abs_diff, duration_ratio."""
    import numpy as np

    table = score_systems({"converted": hyp})
    conv, src = table.items["converted"], table.items["source"]
    out: dict[str, float] = {"items": len(conv)}
    keys = (
        "mcd",
        "mcd_std",
        "f0_rmse_hz",
        "f0_corr",
        "vuv_error",
        "duration_abs_diff",
        "duration_ratio",
    )
    for name in ("converted", "source"):
        out.update({f"{k}_{name}": table.totals[name][k] for k in keys})
    closer = np.array([c["mcd"] < s["mcd"] for c, s in zip(conv, src)])
    out["closer_than_source"] = float(closer.mean())
    return out


def _g2p_line(s: dict[str, float]) -> str:
    return (
        f"{s['words']} words: PER {s['per']:.2f}% WER {s['wer']:.2f}% "
        f"(without stress: PER {s['per_no_stress']:.2f}% WER {s['wer_no_stress']:.2f}%)"
    )


def _nmt_line(s: dict[str, float]) -> str:
    return f"{s['sentences']} sentences: BLEU {s['bleu']:.2f} chrF {s['chrf']:.2f}"


def _vc_line(s: dict[str, float]) -> str:
    return (
        f"{s['items']} items: MCD converted vs target {s['mcd_converted']:.2f} dB, "
        f"source vs target {s['mcd_source']:.2f} dB; converted closer on "
        f"{100 * s['closer_than_source']:.0f}% of items"
    )


# what `aligner score --task` scores: (needs references, scorer, its one-line summary)
SCORERS = {
    "g2p": (True, lambda hyp, ref, lowercase: score_g2p(hyp, ref), _g2p_line),
    "nmt": (True, score_nmt, _nmt_line),
    "vc": (False, lambda hyp, ref, lowercase: score_vc(hyp), _vc_line),
}


def score_outputs(
    kind: str, hyp: Path, ref: Path | None = None, lowercase: bool = False
) -> tuple[dict[str, float], str]:
    """The scores of decoded outputs of `kind` (``g2p``, ``nmt``: against the references
    of `ref`; ``vc``: a converted manifest against its targets) and their one-line
    summary; EvaluationError (one line) for what cannot be scored."""
    if kind not in SCORERS:
        raise EvaluationError(f"--task {kind}: score one of {', '.join(SCORERS)}")
    needs_ref, scorer, line = SCORERS[kind]
    if needs_ref and ref is None:
        raise EvaluationError(f"--task {kind} needs --ref MANIFEST (the references)")
    scores = scorer(hyp, ref, lowercase)
    return scores, line(scores)
