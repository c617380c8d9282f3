"""A run of words the audio lacks (`aligner.alignment.dropped`): the search with one jump
against every run left out by brute force on tiny sentences, and on log-probabilities
built so that the answer is known (the words left out found, whole, wherever they are;
a sentence said in full reports none, also with a word swallowed); and how
`aligner.inference.left_out` reports them (the gap's span, the end mark kept, the margin);
and when `aligner.inference.passed_over` puts a sentence the coarse search passed over back
in its place (most of it said, not other speech)."""

from __future__ import annotations

import itertools

import numpy as np
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aligner.alignment.dropped import _shifts, _step, best_jump, dropped_words
from aligner.alignment.tiers import word_runs
from aligner.inference.left_out import (
    DROP_MARGIN,
    DROP_SPREAD,
    _end_mark_kept,
    drop_margin,
    left_out_words,
)
from aligner.inference.passed_over import EDGE_SOUND, _sound_within, found_in_extra

NEG = -1e30


def _brute_best(lp: np.ndarray, optional: np.ndarray, end_from: int | None = None) -> float:
    """The best monotonic path's score over `lp` (T, N) by enumerating every sequence of
    token indices: non-decreasing, moving over optional tokens only, starting at or before
    the first required token and ending at or after the last (or at or after `end_from`)."""
    t_max, n = lp.shape
    required = np.flatnonzero(~optional)
    first_req = int(required[0])
    end_from = int(required[-1]) if end_from is None else end_from
    best = NEG
    for path in itertools.combinations_with_replacement(range(n), t_max):
        if path[0] > first_req or path[-1] < end_from:
            continue
        if any(b > a and not optional[a + 1 : b].all() for a, b in zip(path, path[1:])):
            continue
        best = max(best, float(lp[np.arange(t_max), list(path)].sum()))
    return best


def _brute_gain(lp: np.ndarray, optional: np.ndarray, min_words: int) -> float:
    """The best path with some run of `min_words` words or more left out (at least one
    word kept) minus the best path of the whole sentence, each run's tokens (and the
    optional tokens after it, before the next word) taken out of the columns."""
    runs = word_runs(optional)
    whole = _brute_best(lp, optional)
    n = lp.shape[1]
    best = NEG
    for i in range(len(runs)):
        for j in range(i + min_words, len(runs) + 1):
            if j - i >= len(runs):
                continue
            cut_from = runs[i][0]
            if j < len(runs):
                cut_to = runs[j][0]
            elif runs[-1][1] + 1 < n:
                cut_to = runs[-1][1] + 1  # the tail's optional tokens stay
            else:
                continue
            keep = list(range(cut_from)) + list(range(cut_to, n))
            sub_opt = optional[keep]
            end_from = keep.index(cut_to) if j == len(runs) else None  # on into the tail
            best = max(best, _brute_best(lp[:, keep], sub_opt, end_from))
    return best - whole


def _check_against_brute_force(optional: np.ndarray, lp: np.ndarray) -> None:
    runs = word_runs(optional)
    found = best_jump(lp, optional, 2)
    expected = _brute_gain(lp, optional, 2)
    if expected <= NEG / 2:  # no run can be left out in so few frames
        assert found is None
        return
    assert found is not None
    gain, first, end, path = found
    assert np.isclose(gain, expected, atol=1e-6)
    assert 2 <= end - first < len(runs)
    # the path it gives back scores the gain it claims, and passes over the run
    whole = _brute_best(lp, optional)
    assert np.isclose(lp[np.arange(len(lp)), path].sum() - whole, gain, atol=1e-6)
    left = {k for a, b in runs[first:end] for k in range(a, b + 1)}
    assert not left & set(path.tolist())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    optional=st.lists(st.booleans(), min_size=5, max_size=7),
    frames=st.integers(min_value=3, max_value=6),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_best_jump_matches_brute_force(optional, frames, seed):
    optional = np.array(optional)
    assume(len(word_runs(optional)) >= 3)
    frames = max(frames, int((~optional).sum()))  # every required token a frame
    lp = np.random.default_rng(seed).normal(-3.0, 2.0, size=(frames, len(optional)))
    _check_against_brute_force(optional, lp)


def test_the_last_words_left_out_may_end_past_several_marks():
    """A sentence ending in two optional tokens (`!"`): the path that leaves its last words
    out may go on to either of them, as the path that keeps them may."""
    optional = np.array([0, 1, 0, 1, 0, 1, 1], bool)
    lp = np.full((3, 7), -10.0)
    lp[:, [0, 6]] = -1.0
    _check_against_brute_force(optional, lp)
    assert np.isclose(best_jump(lp, optional)[0], 18.0)


def _scene(words: list[int], said: list[bool], per: int = 6, pause: int = 8):
    """Log-probs (T, N) of a sentence of words of `words` tokens each, separated by an
    optional ' ' token, with '<s>' and '</s>' at its ends (optional): the words `said`
    get `per` frames a token (likely on their own token, unlikely on every other), the
    edges `pause` frames of silence (likely on '<s>' / '</s>' and ' ')."""
    tokens, owner = ["<s>"], []
    for k, n in enumerate(words):
        if k:
            tokens.append(" ")
        owner.append(list(range(len(tokens), len(tokens) + n)))
        tokens += ["x"] * n
    tokens.append("</s>")
    optional = np.array([t in ("<s>", "</s>", " ") for t in tokens])
    rows = [np.where(np.arange(len(tokens)) == 0, -0.1, -9.0)] * pause
    for k, ids in enumerate(owner):
        if said[k]:
            for i in ids:
                rows += [np.where(np.arange(len(tokens)) == i, -0.1, -9.0)] * per
    rows += [np.where(np.arange(len(tokens)) == len(tokens) - 1, -0.1, -9.0)] * pause
    return np.array(rows), optional


def test_a_run_left_out_is_found_wherever_it_is():
    words = [3, 2, 4, 3, 2, 3, 4]
    for first, end in [(0, 2), (2, 5), (4, 7), (1, 3)]:
        said = [not first <= k < end for k in range(len(words))]
        lp, optional = _scene(words, said)
        assert dropped_words(lp, optional, 20.0) == (first, end), (first, end)


def test_a_sentence_said_in_full_has_none():
    words = [3, 2, 4, 3, 2, 3, 4]
    lp, optional = _scene(words, [True] * len(words))
    assert dropped_words(lp, optional, 20.0) is None
    found = best_jump(lp, optional)
    assert found is not None and found[0] < 0  # every run costs


def test_one_word_left_out_is_not_a_run():
    """One word the audio lacks is not looked for here (a word unlike its audio, or said
    too quickly to hear, is the wrong-word check's): two at least."""
    words = [3, 2, 4, 3]
    said = [True, False, True, True]
    lp, optional = _scene(words, said)
    assert dropped_words(lp, optional, 10.0) is None


def test_a_word_squeezed_beside_the_run_goes_with_it():
    """The first word of a left-out run that a breath holds (its one token likely on two
    frames before the audio resumes) is squeezed to a frame a token: it is reported with
    the run, not left in the alignment."""
    words = [1, 3, 2, 4, 3]
    lp, optional = _scene(words, [False, False, False, True, True])
    lp = np.insert(lp, 8, np.where(np.arange(lp.shape[1]) == 1, -0.1, -9.0), axis=0)
    assert dropped_words(lp, optional, 20.0) == (0, 3)


def test_a_move_over_two_optional_tokens_comes_from_where_it_says():
    """The best way into each state, and the state it came from, by hand: a state after
    two optional tokens is reached from the word before them in one move."""
    optional = np.array([False, True, True, False])
    best, arg = _step(np.array([5.0, 1.0, 3.0, -100.0]), _shifts(optional))
    assert best.tolist() == [5.0, 5.0, 5.0, 5.0]
    assert arg.tolist() == [0, 0, 0, 0]


def test_the_end_mark_of_the_words_left_out_stays():
    assert _end_mark_kept("paid,", ["for", "two", "coffees."]) == (
        "paid.",
        ["for", "two", "coffees"],
    )
    assert _end_mark_kept("elbows", ["on", "the", 'table!"']) == (
        'elbows!"',
        ["on", "the", "table"],
    )
    assert _end_mark_kept("so", ["it", "goes", "…"]) == ("so…", ["it", "goes"])
    assert _end_mark_kept("and", ["then", "more"]) == ("and", ["then", "more"])


def test_the_margin_grows_with_the_recordings_word_evidence():
    assert drop_margin([]) == DROP_MARGIN
    assert drop_margin([-1.0, -2.0, -3.0]) == DROP_MARGIN  # clean: the floor
    assert drop_margin([-30.0, -40.0, -50.0]) == DROP_SPREAD * 40.0  # noise raises them all


def test_words_left_out_are_reported_at_the_gap_between_their_neighbours():
    rec = {
        "words": [[0.0, 0.5, "A"], [0.9, 1.2, "to"], [1.2, 1.6, "you"], [2.0, 2.4, "Next"]],
        "sentence_words": [(0, 0, 3), (1, 3, 4)],
    }
    assert left_out_words({0: (1, "good day")}, rec, 3.0) == [
        {"kind": "text not in the audio", "start": 0.5, "end": 0.9, "text": "good day"}
    ]
    # the sentence's last words: from its last word to the next sentence's first
    last = left_out_words({0: (3, "tomorrow then")}, rec, 3.0)[0]
    assert (last["start"], last["end"]) == (1.6, 2.0)
    first = left_out_words({1: (0, "And so")}, rec, 3.0)[0]
    assert (first["start"], first["end"]) == (1.6, 2.0)
    end = left_out_words({1: (1, "it ends")}, rec, 3.0)[0]
    assert (end["start"], end["end"]) == (2.4, 3.0)


class _Scorer:
    """The model's log-probabilities of a whole recording by sentence (`FrameScorer`'s
    ``log_probs`` and length): ``{sentence's first id: (T, N)}``."""

    def __init__(self, by_sentence: dict[int, np.ndarray], total: int) -> None:
        self.by_sentence, self.total = by_sentence, total

    def __len__(self) -> int:
        return self.total

    def log_probs(self, ids: torch.Tensor, start: int, end: int) -> np.ndarray:
        return self.by_sentence[int(ids[0])][start:end]


def _recording(region: np.ndarray, n_tokens: int, pause: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Sentence 1's log-probabilities over a recording of sentence 0 (40 frames), a pause,
    `region` (sentence 1's place, its rows ``(t, n_tokens)``), a pause and sentence 2 (40
    frames), and the recording's silent frames."""
    quiet = np.where(np.arange(n_tokens) == 0, -0.1, -9.0)
    other = np.full(n_tokens, -9.0)
    rows = [other] * 40 + [quiet] * pause + list(region) + [quiet] * pause + [other] * 40
    silent = np.zeros(len(rows), bool)
    silent[40 : 40 + pause] = True
    silent[40 + pause + len(region) : 40 + 2 * pause + len(region)] = True
    return np.array(rows), silent


def _found_in_place_of(
    region: np.ndarray, tokens: list[str], skipped=(1,), after: int = 2, word_margin=100.0
):
    """`found_in_extra` on `_recording`: sentences 0 and `after` found, `skipped` passed
    over, the audio between sentences 0 and `after` the text's filler's."""
    lp, silent = _recording(region, len(tokens))
    total = len(lp)
    spans = {0: (0, 40), after: (total - 40, total)}
    extra = [(40, total - 40)]
    toks = [(torch.tensor([k, 1]), tokens) for k in range(after + 2)]
    scorer = _Scorer({1: lp}, total)
    found = (spans, list(skipped), extra)
    return found_in_extra(scorer, toks, found, silent, 2.0, word_margin), total


def _tokens(optional: np.ndarray) -> list[str]:
    """`_scene`'s tokens: ``<s>``, the words' ``x``, ``" "`` between them, ``</s>``."""
    inner = [" " if o else "x" for o in optional[1:-1]]
    return ["<s>", *inner, "</s>"]


def test_a_sentence_passed_over_whose_place_holds_most_of_it_is_put_there():
    """A sentence of 5 words whose audio lacks 3 in a row (more than the coarse search,
    which passes over no two words in a row, can pass over), taken for audio the text
    does not hold: it is put on that audio, its sound alone (the pauses round it)."""
    lp, optional = _scene([3, 2, 4, 3, 2], [True, False, False, False, True], pause=0)
    (spans, skipped, extra), _ = _found_in_place_of(lp, _tokens(optional))
    assert spans[1] == (48, 48 + len(lp)) and skipped == [] and extra == []


def test_a_word_kept_that_is_unlike_its_audio_leaves_it_passed_over():
    """The same, its first word's sound likelier a word separator's, which takes no sound
    (0.9 nats a frame, 16 over the word; the filler's margin is 2 a frame): put there at
    a word margin of 100 nats, not at 10."""
    lp, optional = _scene([3, 2, 4, 3, 2], [True, False, False, False, True], pause=0)
    lp[:18, 4], lp[:18, 1:4] = -0.1, -1.0  # the `" "` after it likelier than its 3 tokens
    (spans, skipped, _), _ = _found_in_place_of(lp, _tokens(optional))
    assert 1 in spans and skipped == []
    (spans, skipped, _), _ = _found_in_place_of(lp, _tokens(optional), word_margin=10.0)
    assert 1 not in spans and skipped == [1]


def test_other_speech_in_a_sentences_place_leaves_it_passed_over():
    """Speech of another sentence in its place (its sounds in another order), too little
    of it, or two sentences passed over there: nothing changes."""
    words = [3, 2, 4, 3, 2]
    lp, optional = _scene(words, [True] * len(words), pause=0)
    tokens = _tokens(optional)
    scrambled = lp[np.random.default_rng(0).permutation(len(lp))]
    (spans, skipped, extra), _ = _found_in_place_of(scrambled, tokens)
    assert 1 not in spans and skipped == [1] and len(extra) == 1
    said, _ = _scene(words, [True, False, False, False, True], pause=0)
    (spans, skipped, _), _ = _found_in_place_of(said, tokens, skipped=(1, 3))
    assert 1 in spans and skipped == [3]  # sentence 3 lies after sentence 2: 1 is alone
    (spans, skipped, _), _ = _found_in_place_of(said, tokens, skipped=(1, 2), after=3)
    assert 1 not in spans and skipped == [1, 2]  # two in one place: which is it?
    (spans, skipped, _), _ = _found_in_place_of(said[:1], tokens)
    assert 1 not in spans and skipped == [1]


def _sound_runs(silent: np.ndarray, start: int, end: int) -> list[tuple[int, int]]:
    runs, t = [], start
    while t < end:
        if silent[t]:
            t += 1
            continue
        u = t
        while u < end and not silent[u]:
            u += 1
        runs.append((t, u))
        t = u
    return runs


@settings(max_examples=80, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=30), st.data())
def test_the_sound_within_a_span_keeps_every_run_of_sound_longer_than_a_tail(silent, data):
    """`_sound_within` begins and ends on sound, keeps every run of sound of `EDGE_SOUND`
    frames or more, and leaves out only silence and shorter runs at the edges."""
    silent = np.array(silent)
    start = data.draw(st.integers(0, len(silent)))
    end = data.draw(st.integers(start, len(silent)))
    a, b = _sound_within(silent, start, end)
    assert start <= a <= b <= end
    if a < b:
        assert not silent[a] and not silent[b - 1]
    for r0, r1 in _sound_runs(silent, start, end):
        if r1 - r0 >= EDGE_SOUND:
            assert a <= r0 and r1 <= b
        elif not (a <= r0 and r1 <= b):
            assert r1 <= a or r0 >= b  # a short run left out lies wholly outside


def test_a_sentence_not_said_has_three_words_and_half_past_six_times_the_median():
    """`not_said` against its rule: 3 words or more, and half of them, past 6 times the
    recording's median word evidence, and past 50 nats."""
    from aligner.inference.mismatches import not_said

    every = [-10.0] * 40  # the recording's median word evidence: 10 nats
    assert not_said([-61.0, -70.0, -80.0, -5.0, -5.0, -5.0], every)  # 3 of 6
    assert not not_said([-61.0, -70.0, -5.0, -5.0], every)  # 2: a wrong word or two
    assert not not_said([-61.0, -70.0, -80.0, -5.0, -5.0, -5.0, -5.0], every)  # 3 of 7
    assert not not_said([-59.0, -59.0, -59.0], every)  # none past 60
    assert not not_said([-170.0] * 3, [-30.0] * 40)  # noise raises the median
    assert not not_said([], every) and not not_said([-100.0] * 3, [])
    assert not not_said([-40.0] * 3, [-2.0] * 40)  # a confident model: 50 nats at least
    assert not_said([-51.0] * 3, [-2.0] * 40)
