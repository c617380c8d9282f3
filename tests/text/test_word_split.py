"""Word boundaries put back where eSpeak NG merged words: hand-made cases, the phones kept
in order whatever the input (hypothesis), and the phonemes tokenizer on real sentences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.text.tokenizers import WORD_SEP, PhonemeTokenizer
from aligner.text.word_split import edit_distance, split_merged

ALONE = {
    "of": ["ʌ", "v"],
    "the": ["ð", "ə"],
    "cat": ["k", "ˈæ", "t"],
    "a": ["ˈeɪ"],
    "to": ["t", "uː"],
    "be": ["b", "ˈiː"],
}


def test_edit_distance_ignores_stress():
    assert edit_distance(["k", "ˈæ", "t"], ["k", "æ", "t"]) == 0
    assert edit_distance(["t", "ə"], ["t", "uː"]) == 1 and edit_distance([], ["a", "b"]) == 2


def test_a_merged_pair_is_cut_where_each_word_said_alone_fits():
    words = [["ʌ", "v", "ð", "ə"], ["k", "ˈæ", "t", "."]]
    out = split_merged(words, ["of", "the", "cat"], ALONE)
    assert out == [["ʌ", "v"], ["ð", "ə"], ["k", "ˈæ", "t", "."]]


def test_reduced_forms_stay_and_the_run_is_found_anywhere():
    words = [["k", "ˈæ", "t"], ["t", "ə", "b", "i"], ["ɐ"], ["k", "ˈæ", "t"]]
    out = split_merged(words, ["cat", "to", "be", "a", "cat"], ALONE)
    assert out == [["k", "ˈæ", "t"], ["t", "ə"], ["b", "i"], ["ɐ"], ["k", "ˈæ", "t"]]


def test_nothing_changes_when_counts_agree_or_a_word_is_unknown():
    words = [["ʌ", "v"], ["ð", "ə"]]
    assert split_merged(words, ["of", "the"], ALONE) == words
    assert split_merged([["x", "y"]], ["of", "zebra"], ALONE) == [["x", "y"]]


PHONES = st.sampled_from(["a", "b", "ð", "ə", "ʌ", "v", "k", "t", "ˈæ"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(PHONES, min_size=1, max_size=5), min_size=1, max_size=4),
    st.lists(st.sampled_from(sorted(ALONE)), min_size=1, max_size=8),
)
def test_the_phones_are_kept_in_order_and_words_never_empty(words, text):
    out = split_merged(words, text, ALONE)
    assert [p for w in out for p in w] == [p for w in words for p in w]
    assert all(out) and len(words) <= len(out) <= max(len(words), len(text))


def test_the_phonemes_tokenizer_gives_one_word_per_text_word():
    tok = PhonemeTokenizer()
    for text in [
        "Just a few of the perfect excuses.",
        "To generalize is to be an idiot.",
        'Hello, "world" of the cats!',
    ]:
        tokens = tok.tokenize(text)
        words = [w for w in text.replace(",", " ").replace('"', " ").split() if w.strip(".!")]
        assert tokens.count(WORD_SEP) == len(words) - 1, tokens
    assert tok.tokenize("a cat.") == tok.tokenize_batch(["a cat."])[0]


def test_a_separator_is_a_pause_or_nothing():
    import numpy as np

    from aligner.alignment.tiers import separator_log_probs
    from aligner.attention.search import frame_durations

    tokens = ["a", " ", "b"]
    # the alignment gives the separator frame 2 and nothing else
    weights = np.array([[1, 0, 0], [1, 0, 0], [0.1, 0.8, 0.1], [0, 0, 1], [0, 0, 1]], float)
    optional = np.array([False, True, False])
    assert frame_durations(weights, 1, 5, optional).tolist() == [2, 1, 2]
    sound = np.zeros(5, bool)
    cells = separator_log_probs(tokens, sound)
    assert cells.shape == (5, 3) and np.isnan(cells[:, [0, 2]]).all() and (cells[:, 1] < -1e8).all()
    assert frame_durations(weights, 1, 5, optional, cells).tolist() in ([3, 0, 2], [2, 0, 3])
    # a pause the alignment gave to the words: frames 1-3 are silent
    weights = np.array([[1, 0, 0], [0.9, 0.05, 0.05], [0.5, 0.1, 0.4], [0.1, 0.1, 0.8], [0, 0, 1]])
    pause = np.array([False, True, True, True, False])
    cells = separator_log_probs(tokens, pause)
    assert frame_durations(weights, 1, 5, optional, cells).tolist() == [1, 3, 1]
    assert separator_log_probs(tokens, None) is None


def test_a_word_espeak_says_as_two_is_joined_again():
    """The reverse of a merge: the runs of phonemized words closest to each text word said
    alone become one word; punctuation among a run's phones keeps the words as they are."""
    from aligner.text.word_split import join_split

    words = [["v"], ["nʲ", "i", "j", "ˈɵ"], ["v", "ɭʲ", "u"], ["b", "ɭʲ", "ˈɵ", "n", "."]]
    alone = {
        "в": ["v"],
        "неё": ["nʲ", "i", "j", "ˈɵ"],
        "влюблён": ["v", "ɭʲ", "u", "b", "ɭʲ", "ˈɵ", "n"],
    }
    assert join_split(words, ["в", "неё", "влюблён"], alone) == [
        ["v"], ["nʲ", "i", "j", "ˈɵ"], ["v", "ɭʲ", "u", "b", "ɭʲ", "ˈɵ", "n", "."]
    ]  # fmt: skip
    assert join_split(words, ["в", "неё", "влюблён", "x"], alone) == words  # none split
    comma = [["v"], ["nʲ", "i", "j", "ˈɵ"], ["v", "ɭʲ", "u", ","], ["b", "ɭʲ", "ˈɵ", "n"]]
    assert join_split(comma, ["в", "неё", "влюблён"], alone) == comma
