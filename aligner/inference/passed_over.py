"""A sentence that the coarse search of a long recording passed over, put back on the audio
the text does not hold in its place where it was said with a run of its words left out
(`found_in_extra`): a reader who left out most of a short sentence's words, or a
recording cut inside one. The coarse search passes over no two words of a sentence in a
row, so it takes the rest of such a sentence for audio the text does not hold; put back,
the fine pass finds the run (`aligner.inference.left_out`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from aligner.alignment.dropped import best_jump
from aligner.alignment.longform import filler_log_probs
from aligner.alignment.tiers import SEPARATOR_FORCED, WORD_SEPARATOR, optional_tokens, word_runs
from aligner.inference.left_out import MIN_DROP, search_log_probs
from aligner.inference.longform import word_scores

EDGE_SOUND = 3  # frames: a run of sound this short before a pause at a span's edge is a tail


def _sound_within(silent: np.ndarray, start: int, end: int) -> tuple[int, int]:
    """Frames ``[start, end)`` without the ``silent (T,)`` frames at their edges, nor a run
    of sound shorter than `EDGE_SOUND` frames and the pause behind it (the tail of the
    sentence before, or the onset of the one after)."""
    while start < end:
        sound = np.flatnonzero(~silent[start:end])
        if sound.size == 0:
            return start, start
        start += int(sound[0])
        quiet = np.flatnonzero(silent[start:end])
        if quiet.size == 0 or quiet[0] >= EDGE_SOUND:
            break
        start += int(quiet[0])
    while end > start:
        sound = np.flatnonzero(~silent[start:end])
        end = start + int(sound[-1]) + 1
        quiet = np.flatnonzero(silent[start:end])
        if quiet.size == 0 or end - start - 1 - quiet[-1] >= EDGE_SOUND:
            break
        end = start + int(quiet[-1])
    return start, end


def found_in_extra(
    scorer: Any,
    tokens: list[tuple[torch.Tensor, list[str]]],
    found: tuple[dict[int, tuple[int, int]], list[int], list[tuple[int, int]]],
    silent: np.ndarray,
    filler_margin: float,
    word_margin: float,
) -> tuple[dict[int, tuple[int, int]], list[int], list[tuple[int, int]]]:
    """The coarse search's ``found`` ``(spans, skipped, extra)`` (frames; `coarse_pass`'s)
    with each sentence it passed over put on the audio the text does not hold in its place
    where the sentence with a run of its words left out explains that audio
    (`_explains`): a sentence of whose words the audio lacks so many that the coarse
    search, which passes over no two words in a row, took the rest for audio the text does
    not hold (3 of the 7 words of `Did this disorder replay every cohesive benevolence?`
    cut from a recording). Its place: the sound of the audio `extra` holds between the
    sentences found before and after it (`_sound_within`; ``silent (T,)`` frames), where
    it is the only sentence passed over there. The fine pass then finds the run
    (`sentence_drop`). `filler_margin`, `word_margin`: the search's (`LongFormSettings`)."""
    spans, skipped, extra = dict(found[0]), list(found[1]), list(found[2])
    silent = np.asarray(silent, bool)
    for k in found[1]:
        before = max((j for j in spans if j < k), default=-1)
        after = min((j for j in spans if j > k), default=len(tokens))
        if any(before < j < after for j in skipped if j != k):
            continue
        lo = spans[before][1] if before >= 0 else 0
        hi = spans[after][0] if after < len(tokens) else len(scorer)
        runs = [(s, e) for s, e in extra if s >= lo and e <= hi]
        if not runs:
            continue
        start, end = _sound_within(silent, runs[0][0], runs[-1][1])
        ids, toks = tokens[k]
        lp = scorer.log_probs(ids, start, end) if end > start else None
        if lp is not None and _explains(lp, toks, silent[start:end], filler_margin, word_margin):
            spans[k] = (start, end)
            skipped.remove(k)
            extra = [run for run in extra if run not in runs]
    return spans, skipped, extra


def _explains(
    log_probs: np.ndarray,
    tokens: list[str],
    silent: np.ndarray,
    filler_margin: float,
    word_margin: float,
) -> bool:
    """Whether a sentence (its `tokens`) with a run of `MIN_DROP` words or more left out,
    and as many left, explains the audio of the model's ``log_probs (T, N)`` better than
    the coarse search's filler (`filler_log_probs` at `filler_margin`) does, as a
    sentence passed over and a run of words left out cost alike: the best such path
    (`best_jump`) scores more over those frames, and none of the words it keeps is unlike
    its audio (`word_scores` past `word_margin` nats; 0: not looked at). A pause
    (``silent (T,)``) is free to a word separator, to the tokens before the first word and
    after the last, and to the filler alike. On 24 recordings whose text says another
    sentence of the corpus where the audio holds one (`scripts/longform_testset.py
    --replaced`: eSpeak NG, slt, kal, ked) the 17 sentences passed over scored 160 to
    5,388 nats below the filler, their worst words 127 to 1,270 nats against their audio;
    a sentence with 3 of its 7 words cut, 186 above, its worst word 26."""
    lp = np.asarray(log_probs, np.float64)
    optional = optional_tokens(tokens)
    runs = word_runs(optional)
    if len(runs) < 2 * MIN_DROP:
        return False
    pausing = np.array([t == WORD_SEPARATOR for t in tokens])
    pausing[: runs[0][0]] = pausing[runs[-1][1] + 1 :] = True
    search = np.array(search_log_probs(tokens, lp, silent))
    search[np.ix_(silent, pausing)] = SEPARATOR_FORCED
    jump = best_jump(search, optional, MIN_DROP)
    if jump is None or len(runs) - (jump[2] - jump[1]) < MIN_DROP:
        return False
    path = jump[3]
    own = lp[np.arange(len(path)), path]
    free = pausing[path] & silent
    own[free] = lp.max(1)[free]
    if own.sum() <= filler_log_probs(lp, filler_margin, silent).sum():
        return False
    frames = np.bincount(path, minlength=len(tokens)).tolist()
    evidence = word_scores(np.where(free[:, None], lp.max(1, keepdims=True), lp), tokens, frames)
    kept = [e for j, e in enumerate(evidence) if not jump[1] <= j < jump[2]]
    return word_margin <= 0 or min(kept) > -word_margin
