"""eSpeak NG's English phones as CMUdict's ARPAbet (`aligner.text.ipa_arpabet`) and the
ARPAbet tokenizer's ``oov: espeak``: against CMUdict's own pronunciations, and a word
CMUdict lacks said, listed, never refused."""

from __future__ import annotations

import random
import re

import pytest

from aligner.inference.speech import _reading_tokenizer
from aligner.text.ipa_arpabet import ipa_to_arpabet
from aligner.text.metrics import edit_distance
from aligner.text.tokenizers import (
    ArpabetTokenizer,
    OutOfVocabularyError,
    PhonemeTokenizer,
    arpabet_symbols,
    cmudict_lexicon,
)


def test_the_table_reads_stress_diphthongs_pieces_and_flaps():
    assert ipa_to_arpabet(["h", "ə", "l", "ˈoʊ"]) == ["HH", "AH0", "L", "OW1"]
    assert ipa_to_arpabet(["k", "ˈɑːɹ"]) == ["K", "AA1", "R"]  # a token read as its pieces
    assert ipa_to_arpabet(["ˌaɪɚ"]) == ["AY2", "ER0"]  # the mark is the first vowel's
    assert ipa_to_arpabet(["w", "ˈɔː", "ɾ", "ɚ"], "water")[2] == "T"
    assert ipa_to_arpabet(["l", "ˈæ", "ɾ", "ɚ"], "ladder")[2] == "D"
    assert ipa_to_arpabet(["w", "ˈiːː"]) == ["W", "IY1"]
    assert ipa_to_arpabet(["ʀ"]) is None  # a sound the table lacks


def test_cmudicts_own_words_said_by_rules_are_near_its_pronunciations():
    """200 CMUdict words drawn at random: the rules' phones (stress dropped) within 15% of
    the nearest of CMUdict's pronunciations (10.6% on 3,000 words), every phone one that
    an ARPAbet model knows."""
    lexicon = cmudict_lexicon()
    words = random.Random(3).sample(sorted(w for w in lexicon if w.isalpha()), 200)
    said = PhonemeTokenizer("en-us", cleaner="basic").tokenize_batch(words)
    known, errors, total = set(arpabet_symbols()), 0, 0
    plain = lambda phones: [re.sub(r"\d", "", p) for p in phones]  # noqa: E731
    for word, tokens in zip(words, said):
        phones = ipa_to_arpabet([t for t in tokens if t != " "], word)
        assert phones and set(phones) <= known, word
        errors += min(edit_distance(plain(phones), plain(r)) for r in lexicon[word])
        total += len(lexicon[word][0])
    assert errors / total < 0.15


def test_a_word_cmudict_lacks_is_said_by_the_rules_and_listed():
    tok = ArpabetTokenizer(oov="espeak")
    tokens = tok.tokenize("Hello Zorblaxia, hello.")
    assert tokens[:5] == cmudict_lexicon()["hello"][0] + [" "]
    guessed = tokens[5 : tokens.index(",")]
    assert [p.rstrip("012") for p in guessed[:3]] == ["Z", "AO", "R"]
    assert set(guessed) <= set(arpabet_symbols())
    assert tok.guessed == {"zorblaxia"}
    assert tok.tokenize("the cat") == ArpabetTokenizer().tokenize("the cat")
    with pytest.raises(OutOfVocabularyError, match="zorblaxia"):
        ArpabetTokenizer().tokenize("Zorblaxia")  # oov: error, the default: no guess learnt
    with pytest.raises(OutOfVocabularyError, match=r"said in ARPAbet .*λόγος"):
        tok.tokenize("the λόγος")  # English rules for Latin letters only
    with pytest.raises(ValueError, match="error, espeak, unk, letters"):
        ArpabetTokenizer(oov="guess")


def test_a_model_trained_to_refuse_unknown_words_reads_them_by_the_rules():
    stored = ArpabetTokenizer(oov="error").to_dict()
    assert _reading_tokenizer(stored).oov == "espeak"
    assert _reading_tokenizer({**stored, "oov": "unk"}).oov == "unk"
    assert _reading_tokenizer({"kind": "chars", "cleaner": "english"}).kind == "chars"


def test_the_guessed_words_of_a_model_are_named_in_one_line():
    from types import SimpleNamespace

    from aligner.inference.common import guessed_line, guessed_words

    tok = ArpabetTokenizer(oov="espeak")
    tok.tokenize("Quentavius met Zorblaxia")
    assert guessed_words(SimpleNamespace(tokenizer=tok)) == ["quentavius", "zorblaxia"]
    assert guessed_words(SimpleNamespace()) == []  # a VC model reads no text
    line = guessed_line([f"w{i}" for i in range(25)])
    assert line.startswith("25 word(s)") and "w19 ..." in line and "w20" not in line
