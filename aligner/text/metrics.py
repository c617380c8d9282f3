"""Scores of text outputs: edit distance, G2P phone and word error rates, corpus BLEU/chrF."""

from __future__ import annotations

from collections.abc import Sequence


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between token sequences (substitution, insertion, deletion)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def g2p_error_rates(
    hypotheses: dict[str, list[str]], references: dict[str, list[list[str]]]
) -> tuple[float, float]:
    """PER and WER (fractions) of `hypotheses` (word -> phones) against `references`
    (word -> list of pronunciations).

    A word is correct when its hypothesis equals any reference. PER sums, over words,
    the edit distance to the closest reference, divided by the summed length of those
    closest references (ties: the shorter reference).
    """
    if not hypotheses:
        raise ValueError("no hypotheses to score")
    errors = length = wrong = 0
    for word, hyp in hypotheses.items():
        refs = references[word]
        dist, ref_len = min((edit_distance(hyp, r), len(r)) for r in refs)
        errors += dist
        length += ref_len
        wrong += dist > 0
    return errors / max(length, 1), wrong / len(hypotheses)


def strip_stress(phones: Sequence[str]) -> list[str]:
    """ARPAbet phones without their stress digits (``AH0`` -> ``AH``)."""
    return [p.rstrip("012") for p in phones]


def g2p_scores(
    hypotheses: dict[str, list[str]], references: dict[str, list[list[str]]]
) -> dict[str, float]:
    """PER and WER in % with the stress digits (``per``, ``wer``) and without them
    (``per_no_stress``, ``wer_no_stress``: the 39-phoneme setting of most published
    CMUdict results), as `g2p_error_rates` counts them."""
    per, wer = g2p_error_rates(hypotheses, references)
    per_ns, wer_ns = g2p_error_rates(
        {w: strip_stress(h) for w, h in hypotheses.items()},
        {w: [strip_stress(r) for r in rs] for w, rs in references.items()},
    )
    return {
        "per": 100 * per,
        "wer": 100 * wer,
        "per_no_stress": 100 * per_ns,
        "wer_no_stress": 100 * wer_ns,
    }


def corpus_bleu(hypotheses: list[str], references: list[str], lowercase: bool = False) -> float:
    """Corpus BLEU (sacrebleu, 13a tokenization) of detokenized strings; `lowercase`
    makes it case-insensitive."""
    import sacrebleu

    return float(sacrebleu.corpus_bleu(hypotheses, [references], lowercase=lowercase).score)


def corpus_chrf(hypotheses: list[str], references: list[str], lowercase: bool = False) -> float:
    """Corpus chrF (sacrebleu); `lowercase` folds both sides first (chrF has no option)."""
    import sacrebleu

    if lowercase:
        hypotheses, references = [h.lower() for h in hypotheses], [r.lower() for r in references]
    return float(sacrebleu.corpus_chrf(hypotheses, [references]).score)
