"""``aligner score``: outputs of `aligner g2p` / `aligner translate` against a manifest's
references (PER/WER for G2P, BLEU/chrF for translation)."""

from __future__ import annotations

from pathlib import Path

from aligner.inference.common import InferenceError


def _references(ref: Path) -> list[dict]:
    from aligner.data.manifest import ManifestError, read_manifest

    if not ref.is_file():
        raise InferenceError(f"--ref {ref} does not exist; give a manifest such as data/test.jsonl")
    try:
        items = read_manifest(ref)
    except (ManifestError, ValueError) as err:
        raise InferenceError(str(err).splitlines()[0]) from None
    bad = [str(it.get("id", n)) for n, it in enumerate(items, 1) if "target" not in it]
    if bad:
        raise InferenceError(f"{ref}: items without 'target': {', '.join(bad[:5])}")
    return items


def _hypothesis_lines(hyp: Path) -> list[str]:
    if not hyp.is_file():
        raise InferenceError(f"--hyp {hyp} does not exist")
    try:
        return hyp.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise InferenceError(f"--hyp {hyp} is not UTF-8 text (byte {err.start})") from None


def score_g2p(hyp: Path, ref: Path) -> dict[str, float]:
    """PER/WER (%), with and without stress digits, of the ``word<TAB>phonemes`` lines of
    `hyp` (what `aligner g2p --in MANIFEST` prints) against the pronunciations of `ref`
    (a word is right when it equals any of them). Words are matched case-insensitively;
    a word of `ref` with no line in `hyp` is an error naming it."""
    from aligner.text.metrics import g2p_scores

    refs: dict[str, list[list[str]]] = {}
    for item in _references(ref):
        refs.setdefault(str(item["source"]).strip().lower(), []).append(str(item["target"]).split())
    hyps: dict[str, list[str]] = {}
    for n, line in enumerate(_hypothesis_lines(hyp), 1):
        if not line.strip():
            continue
        word, sep, phones = line.partition("\t")
        if not sep:
            raise InferenceError(f"{hyp}:{n}: expected 'word<TAB>phonemes', got {line[:40]!r}")
        hyps.setdefault(word.strip().lower(), phones.split())
    missing = [w for w in refs if w not in hyps]
    if missing:
        raise InferenceError(
            f"{hyp} has no output for {len(missing)} word(s) of {ref}, e.g. {missing[0]!r}; "
            "decode the whole manifest (aligner g2p --in MANIFEST)"
        )
    return {"words": len(refs), **g2p_scores({w: hyps[w] for w in refs}, refs)}


def score_nmt(hyp: Path, ref: Path, lowercase: bool = False) -> dict[str, float]:
    """Corpus BLEU and chrF (sacrebleu, 13a tokenization) of `hyp` (one translation a line,
    in the manifest's order) against the targets of `ref`; `lowercase` ignores case."""
    from aligner.text.metrics import corpus_bleu, corpus_chrf

    refs = [str(item["target"]) for item in _references(ref)]
    hyps = _hypothesis_lines(hyp)
    if len(hyps) != len(refs):
        raise InferenceError(f"{hyp} has {len(hyps)} lines but {ref} {len(refs)} items")
    return {
        "sentences": len(refs),
        "bleu": round(corpus_bleu(hyps, refs, lowercase), 2),
        "chrf": round(corpus_chrf(hyps, refs, lowercase), 2),
    }
