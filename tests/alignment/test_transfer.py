"""Another tool's phone times as frames per token (`aligner.alignment.transfer`): a
hand-computed example, lexicon variants, edges and gaps, and the properties every result
has (the frames add up, a paired token keeps its phone's rounded span)."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aligner.alignment.intervals import Interval
from aligner.alignment.tiers import frame_bounds, optional_tokens
from aligner.alignment.transfer import frame_edge, label_key, pair_labels, transferred_frames

HOP = 0.01  # seconds a frame


def frames(phones, tokens, n_frames):
    found = transferred_frames(phones, tokens, optional_tokens(tokens), n_frames, HOP)
    return None if found is None else (found[0].tolist(), found[1])


def edge(a: int) -> float:
    """The time of the boundary before frame ``a`` (`frame_bounds`: half a frame earlier)."""
    return max(a - 0.5, 0.0) * HOP


def test_a_hand_computed_sentence_with_a_pause_and_edge_silence():
    # "a cat, sat" in ARPAbet; Festival's labels: lower case, no stress, a reduced vowel
    tokens = ["<s>", "AH0", " ", "K", "AE1", "T", ",", " ", "S", "AE1", "T", "</s>"]
    phones = [
        Interval(edge(10), edge(15), "ax"),
        Interval(edge(15), edge(20) + 0.002, "k"),  # 2 ms past frame edge 20: still 20
        Interval(edge(20) + 0.002, edge(30), "ae"),
        Interval(edge(30), edge(35), "t"),  # then a pause to frame 50
        Interval(edge(50), edge(60), "s"),
        Interval(edge(60), edge(70), "ae"),
        Interval(edge(70), edge(78), "t"),  # then silence to frame 90
    ]
    got, edits = frames(phones, tokens, 90)
    assert edits == 0  # Festival's reduced ax is CMUdict's AH0
    #        <s> AH0 ' ' K  AE1 T  ,   ' ' S   AE1 T  </s>
    assert got == [10, 5, 0, 5, 10, 5, 15, 0, 10, 10, 8, 12]


def test_times_become_frame_edges_as_frame_bounds_made_them():
    assert [frame_edge(edge(a), HOP) for a in range(6)] == [0, 1, 2, 3, 4, 5]
    assert frame_edge(0.0021, HOP) == 0 and frame_edge(0.0029, HOP) == 1  # nearer 0 or 0.005
    assert frame_edge(0.010, HOP) == 2  # halfway between edges 1 and 2: the later


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=10), st.integers(1, 3))
def test_a_records_times_give_its_frames_back(lengths, tail):
    """`aligner align`'s frames written out as TextGrid times (`frame_bounds`) and read
    back: the same frames, whatever the token lengths (zero frames included)."""
    assume(4 * lengths.count(0) <= len(lengths))  # few enough tokens without a phone to pair
    tokens = [f"P{'abcdefghij'[k]}" for k in range(len(lengths))] + ["</s>"]
    record = [*lengths, tail]
    bounds = frame_bounds(record, HOP)
    phones = [
        Interval(bounds[k], bounds[k + 1], tokens[k]) for k in range(len(lengths)) if lengths[k]
    ]
    got = transferred_frames(phones, tokens, optional_tokens(tokens), sum(record), HOP)
    # a token of no frames has no phone: it pairs with nothing and holds none, as before
    assert got is not None and got[0].tolist() == np.array(record).tolist()


def test_phones_outside_the_audio_do_not_pair():
    tokens = ["K", "AE1", "T"]
    phones = [Interval(0.0, 0.1, "k"), Interval(0.1, 0.2, "ae"), Interval(0.2, 0.3, "t")]
    assert frames(phones, tokens, 30) is not None
    assert frames(phones, tokens, 27) is None  # ends 3 frames past the audio
    in_ms = [Interval(1000 * p.start, 1000 * p.end, p.label) for p in phones]
    assert frames(in_ms, tokens, 30) is None
    early = [Interval(p.start - 0.05, p.end - 0.05, p.label) for p in phones]
    assert frames(early, tokens, 30) is None


def test_a_phone_without_a_token_and_a_token_without_a_phone():
    tokens = ["DH", "AH0", " ", "K", "AE1", "T", " ", "S", "AE1", "T"]
    # the tool says "dh iy k ae ae t s ae t": a variant vowel and an extra phone
    labels = ["dh", "iy", "k", "ae", "ae", "t", "s", "ae", "t"]
    phones = [Interval(edge(10 * k), edge(10 * k + 10), x) for k, x in enumerate(labels)]
    got, edits = frames(phones, tokens, 90)
    assert edits == 2 and sum(got) == 90
    assert got[:3] == [10, 10, 0]  # iy timed as AH0; no pause for the separator
    assert got[6:] == [0, 10, 10, 10]
    # one "ae" pairs with AE1, the other lies between paired tokens of one word and goes
    # half to each side of it
    assert got[3:6] in ([15, 15, 10], [10, 15, 15])
    tokens = ["K", "AE1", "T", " ", "S", "AE1", "T", "S"]  # a token the tool lacks holds none
    labels = "k ae t s ae t".split()
    phones = [Interval(edge(10 * k), edge(10 * k + 10), x) for k, x in enumerate(labels)]
    got, edits = frames(phones, tokens, 60)
    assert edits == 1 and got == [10, 10, 10, 0, 10, 10, 10, 0]


def test_phones_of_another_alphabet_do_not_pair():
    tokens = ["K", "AE1", "T", " ", "S", "AE1", "T"]
    ipa = [
        Interval(0.1 * i, 0.1 * i + 0.1, x) for i, x in enumerate(["kʰ", "æ", "ʔ", "z", "ɛ", "ɾ"])
    ]
    assert frames(ipa, tokens, 60) is None
    assert frames([], tokens, 60) is None


def test_labels_compare_without_case_and_stress():
    assert label_key("AH0") == label_key("ah") == label_key("ax") == "ah"
    assert label_key("ˈaː") == "a"
    paired, edits = pair_labels(["k", "ae", "t"], ["K", "AE1", "T"])
    assert paired == [0, 1, 2] and edits == 0


def brute_edits(a, b):
    """Edit distance by plain recursion (tiny inputs)."""
    if not a or not b:
        return len(a) + len(b)
    return min(
        brute_edits(a[1:], b[1:]) + (a[0] != b[0]),
        brute_edits(a[1:], b) + 1,
        brute_edits(a, b[1:]) + 1,
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=5), st.lists(st.sampled_from("abc"), max_size=5))
def test_pairing_is_a_minimal_edit_alignment(a, b):
    paired, edits = pair_labels(a, b)
    assert edits == brute_edits(a, b)
    used = [j for j in paired if j is not None]
    assert used == sorted(set(used))  # in order, each token at most once
    mismatched = sum(1 for i, j in enumerate(paired) if j is not None and a[i] != b[j])
    assert edits == mismatched + (len(a) - len(used)) + (len(b) - len(used))


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=8),  # frames of each phone
    st.lists(st.integers(0, 8), min_size=9, max_size=9),  # silence before each and after all
    st.booleans(),
)
def test_frames_add_up_and_paired_tokens_keep_their_phones(lengths, gaps, markers):
    labels = [f"P{k % 3}" for k in range(len(lengths))]
    phones, t = [], 0
    for k, n in enumerate(lengths):
        t += gaps[k]
        phones.append(Interval(edge(t), edge(t + n), labels[k].lower()))
        t += n
    n_frames = t + gaps[-1]
    tokens = [x for k, lab in enumerate(labels) for x in ([" "] if k else []) + [lab]]
    tokens = ["<s>", *tokens, "</s>"] if markers else tokens
    got, edits = frames(phones, tokens, n_frames)
    assert edits == 0 and sum(got) == n_frames and min(got) >= 0
    expected = list(lengths)
    if not markers:  # the edge silence goes to the edge sounds
        expected[0] += gaps[0]
        expected[-1] += gaps[-1]
    assert [got[k] for k, x in enumerate(tokens) if x.startswith("P")] == expected
    separators = [got[k] for k, x in enumerate(tokens) if x == " "]
    assert separators == gaps[1 : len(lengths)]  # each pause on its separator
