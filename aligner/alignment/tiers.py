"""Tokens with frame durations -> ``words`` and ``phones`` intervals (seconds).

How tokens become intervals (what `aligner align` writes in its TextGrids and durations
JSON):

- a word separator (``" "``), a punctuation mark and a special token (``</s>``) belong to
  no word and no phone: the frames of punctuation and specials are pauses (gaps between
  intervals), but a bare separator between two words is no pause: the word before it ends
  where the next one starts;
- with a phoneme tokenizer (``phonemes``: IPA from eSpeak NG, ``arpabet``) every other
  token is a phone, and a word is a run of phones between separators or punctuation,
  from the start of its first phone to the end of its last;
- with the character tokenizer (``chars``) a word is a run of characters the same way,
  and there is no ``phones`` tier (characters are not phones);
- a token with no frames (possible only for the tokens above that belong to nothing, or
  with argmax durations for a skipped token) gives no interval; a word whose tokens all
  have no frames gives none either;
- when the caller knows where the audio is silent (``pauses``: per frame, True inside a
  silence long enough to be a pause; `aligner.audio.trim.PauseRule`), the frames of
  the tokens that belong to no word are a pause only where the audio is silent: within
  each run of such tokens between two phones, the silent frames (from the first to the
  last) are the pause, the frames before them end the phone before and the frames after
  them start the phone after; a run without silence is no pause (its frames end the
  phone before; before the first phone they stay with the tokens that hold them: a
  leading breath or noise that never falls silent is the model's ``<s>``, not a word).
  A final ``.``/``</s>`` on a fading vowel then no longer cuts the vowel short, and a
  pause at a bare separator (eSpeak NG and real speakers pause before "because" or
  "and") is a gap in both tiers. The silence at the recording's edges is a pause too
  where the first or last phone holds it (a Tacotron has no ``<s>`` for the leading
  silence): the first word starts where the sound does when no token before it holds a
  frame, and the last word ends where the sound stops.

Words are labelled with the words of the utterance's text when their numbers agree,
else with their tokens joined.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from aligner.alignment.intervals import Interval

WORD_SEPARATOR = " "
PUNCTUATION = frozenset(';:,.!?¡¿—…"«»“”()-')
SPECIALS = frozenset({"<pad>", "<unk>", "<s>", "</s>"})
PHONE_KINDS = frozenset({"phonemes", "arpabet"})
FRAME_CENTRE = 0.5  # frames before a frame's centre that its boundary lies (see frame_bounds)


def optional_tokens(tokens: Sequence[str]) -> np.ndarray:
    """``(N,)`` bool: the tokens that belong to no word (separators, punctuation, specials),
    which a monotonic search may give no frames."""
    return np.array([t == WORD_SEPARATOR or t in PUNCTUATION or t in SPECIALS for t in tokens])


def word_runs(optional: Sequence[bool]) -> list[tuple[int, int]]:
    """Each word's first and last token index (a word: a run of tokens that are not
    `optional`, as `optional_tokens` flags them)."""
    required = np.concatenate([[0], ~np.asarray(optional, bool), [0]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(required))  # each word's [a, b)
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2])]


SEPARATOR_FORCED, SEPARATOR_BLOCKED = 0.0, -1e9


def separator_log_probs(tokens: Sequence[str], pauses: np.ndarray | None) -> np.ndarray | None:
    """``(T, N)`` log-probabilities to put in place of the alignment's for the monotonic
    search (`aligner.attention.search.frame_durations`' ``overrides``; NaN: keep the
    alignment's), from ``pauses (T,)``: a word separator is the pause between two words or
    nothing. Its column is ``SEPARATOR_FORCED`` (the best a cell can be) on pause frames
    and ``SEPARATOR_BLOCKED`` elsewhere, so that the search gives a separator the silence
    between the words and no sound. The alignment model does not learn separators (they are
    not required by its forward-sum loss), so this is where their frames come from. None
    without pauses: the separators keep the alignment's scores."""
    if pauses is None:
        return None
    separators = np.array([t == WORD_SEPARATOR for t in tokens])
    silent = np.asarray(pauses, bool)[:, None]
    out = np.full((silent.shape[0], len(tokens)), np.nan)
    out[:, separators] = np.where(silent, SEPARATOR_FORCED, SEPARATOR_BLOCKED)
    return out


def frame_bounds(frames: Sequence[int], seconds_per_frame: float) -> np.ndarray:
    """``(N + 1,)`` times in the audio (s) of the boundaries between tokens that hold
    `frames` frames each. Log-mel frames are centred (``center=True``): frame ``t`` stands
    for the audio around ``t * hop``, so the boundary before frame ``a`` lies half a frame
    earlier, at ``(a - 1/2) * hop / sample_rate`` (0 for the first)."""
    edges = np.concatenate([[0], np.cumsum(frames)]).astype(np.float64)
    return np.clip(edges - FRAME_CENTRE, 0.0, None) * seconds_per_frame


def token_tiers(
    tokens: Sequence[str],
    frames: Sequence[int],
    seconds_per_frame: float,
    kind: str,
    text: str | None = None,
    pauses: Sequence[bool] | np.ndarray | None = None,
    edges: Sequence[float] | np.ndarray | None = None,
    usual: Sequence[float] | np.ndarray | None = None,
) -> dict[str, list[Interval]]:
    """``{"words": [...], "phones": [...]}`` (no ``phones`` for characters; nothing for
    the source positions of a VC model); times from `frame_bounds`. ``pauses (T,)``: per
    frame (``T = sum(frames)``), True where the audio is in a pause (see the module
    docstring); None: the frames of punctuation and specials are pauses, those of bare
    separators are not. ``edges (N + 1,)``: frame edges below one frame
    (`aligner.attention.search.expected_edges`); where two tokens of words meet with no
    frame between them, the boundary lies at ``edges`` rather than on the frame grid
    (half a frame before, as `frame_bounds`); elsewhere (pauses) the frames decide.
    ``usual (N,)``: each token's usual length in frames (`aligner.alignment.lengths`; 0:
    unknown), with `pauses`: a phone after a pause (or the recording's start) that is
    shorter starts earlier by what it lacks, within the silence before it."""
    if kind not in PHONE_KINDS and kind != "chars":
        return {}
    bounds = frame_bounds(frames, seconds_per_frame)
    skip = optional_tokens(tokens)
    if pauses is None:
        starts, ends = bounds[:-1].copy(), _token_ends(tokens, frames, bounds, skip)
    else:
        starts, ends = _times_by_pauses(
            frames, seconds_per_frame, skip, np.asarray(pauses, bool), usual
        )
    if edges is not None:
        _refine(frames, skip, np.asarray(edges, np.float64), seconds_per_frame, starts, ends)
    words: list[list[int]] = [[]]
    for i in range(len(tokens)):
        if skip[i]:
            if words[-1]:
                words.append([])
        else:
            words[-1].append(i)
    words = [w for w in words if w]
    labels = _word_labels(text, [[tokens[i] for i in w] for w in words], kind)
    tiers = {"words": [_span(w, frames, starts, ends, lab) for w, lab in zip(words, labels)]}
    if kind in PHONE_KINDS:
        phones = [i for i, t in enumerate(tokens) if not skip[i]]
        tiers["phones"] = [_span([i], frames, starts, ends, tokens[i]) for i in phones]
    return {name: [a for a in tier if a is not None] for name, tier in tiers.items()}


def _token_ends(
    tokens: Sequence[str], frames: Sequence[int], bounds: np.ndarray, skip: np.ndarray
) -> np.ndarray:
    """Where each token ends in time: where its frames end, except that a token followed by
    word separators alone and then a token of the next word ends where that one starts (a
    bare separator is no pause; the frames the attention spends on it are the word's
    ending: measured on the eSpeak corpus, word starts are unbiased while ends came ~50 ms
    early without this)."""
    ends = bounds[1:].copy()
    n = len(tokens)
    for i in range(n):
        k = i + 1
        while k < n and tokens[k] == WORD_SEPARATOR:
            k += 1
        if not skip[i] and k > i + 1 and k < n and not skip[k] and frames[k] > 0:
            ends[i] = bounds[k]
    return ends


def _refine(
    frames: Sequence[int],
    skip: np.ndarray,
    edges: np.ndarray,
    seconds_per_frame: float,
    starts: np.ndarray,
    ends: np.ndarray,
) -> None:
    """Move in place the boundary between every two consecutive timed tokens of words
    (tokens between them hold no frame) to ``edges`` (see `token_tiers`)."""
    if edges.shape != (len(frames) + 1,):
        raise ValueError(f"edges must have one value per token and one more, got {edges.shape}")
    timed = [k for k in range(len(frames)) if frames[k] > 0]
    for i, j in zip(timed, timed[1:]):
        if not (skip[i] or skip[j]):
            ends[i] = starts[j] = max(edges[j] - FRAME_CENTRE, 0.0) * seconds_per_frame


def _times_by_pauses(
    frames: Sequence[int],
    seconds_per_frame: float,
    skip: np.ndarray,
    pauses: np.ndarray,
    usual: Sequence[float] | np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(N,)`` start and ``(N,)`` end times of the tokens when ``pauses (T,)`` says which
    frames are in a pause: the frames of the tokens between two consecutive phones (all of
    them belonging to no word) are split at the pause among them (module docstring), and
    a phone after the pause shorter than its ``usual (N,)`` frames starts up to that many
    before its end, never before the pause does (`aligner.alignment.lengths`)."""
    edges = np.concatenate([[0], np.cumsum(frames)]).astype(int)
    if pauses.shape != (edges[-1],):
        raise ValueError(f"pauses must have one value per frame ({edges[-1]}), got {pauses.shape}")
    times = frame_bounds(np.ones(edges[-1], int), seconds_per_frame)  # before each frame
    starts, ends = times[edges[:-1]], times[edges[1:]]
    timed = [i for i in range(len(frames)) if not skip[i] and frames[i] > 0]
    for before, after in zip([None, *timed], [*timed, None]):
        a = edges[before + 1] if before is not None else 0
        b = edges[after] if after is not None else edges[-1]
        a, b = _edge_pause(pauses, edges, before, after, a, b)
        silent = np.flatnonzero(pauses[a:b])
        if silent.size:
            cut_end, cut_start = a + silent[0], a + silent[-1] + 1
        else:  # no pause: the phone before takes the frames; before the first phone,
            cut_end = cut_start = b  # the tokens that hold them keep them (<s>)
        if after is not None and usual is not None and silent.size:
            cut_start = _usual_start(cut_end, cut_start, edges[after + 1], usual[after])
        if before is not None:
            ends[before] = times[cut_end]
        if after is not None:
            starts[after] = times[cut_start]
    return starts, ends


def _usual_start(pause_start: int, start: int, end: int, usual: float) -> int:
    """The first frame of a phone that follows a pause ``[pause_start, start)`` and ends
    before frame `end`: `start`, or earlier by what it lacks of `usual` frames, within
    the pause."""
    if usual <= 0 or end - start >= usual:
        return start
    return max(pause_start, min(start, end - int(round(usual))))


def _edge_pause(
    pauses: np.ndarray, edges: np.ndarray, before: int | None, after: int | None, a: int, b: int
) -> tuple[int, int]:
    """The frames ``[a, b)`` before the first phone or after the last, widened over the
    pause frames that the phone itself holds at the recording's edge (up to its first or
    last frame of sound; a phone with none keeps its frames), so that the first word
    starts and the last one ends where the audio does. At the start only when no token
    before the first phone holds a frame (a Tacotron has no ``<s>`` and gives the leading
    silence to the first phone): where ``<s>`` took the silence, the quiet onset of the
    first phone is sound (the Festival test split's word starts came out later otherwise).
    Between words the model's frames stay as they are (Festival's figures:
    egs/festival/align1/RESULTS.md)."""
    if after is None and before is not None:
        sound = np.flatnonzero(~pauses[edges[before] : a])
        a = edges[before] + sound[-1] + 1 if sound.size else a
    if before is None and after is not None and a == b:
        sound = np.flatnonzero(~pauses[b : edges[after + 1]])
        b = b + sound[0] if sound.size else b
    return a, b


def _span(
    indices: list[int], frames: Sequence[int], starts: np.ndarray, ends: np.ndarray, label: str
):
    """The interval from the start of the first token of `indices` with frames to the end
    of the last one."""
    timed = [i for i in indices if frames[i] > 0]
    if not timed:
        return None
    return Interval(round(float(starts[timed[0]]), 6), round(float(ends[timed[-1]]), 6), label)


def _word_labels(text: str | None, words: list[list[str]], kind: str) -> list[str]:
    glue = "" if kind == "chars" else " "
    joined = [glue.join(w) for w in words]
    if not text:
        return joined
    written = [w.strip("".join(PUNCTUATION) + "'") for w in text.split()]
    written = [w for w in written if w]
    return written if len(written) == len(words) else joined
