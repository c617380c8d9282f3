"""Tokenizers: characters, IPA phonemes (eSpeak NG from espeakng-loader), ARPAbet."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.text.cleaners import english_cleaners
from aligner.text.espeak import ensure_espeak
from aligner.text.symbols import SymbolTable, UnknownSymbolError
from aligner.text.tokenizers import (
    OutOfVocabularyError,
    arpabet_symbols,
    build_tokenizer,
    cmudict_lexicon,
    tokenizer_from_dict,
)


@given(st.text(alphabet="abcdefgh XYZ,.!?0123456789$", max_size=40))
@settings(max_examples=50, deadline=None)
def test_chars_round_trip(text):
    tok = build_tokenizer("chars")
    tokens = tok.tokenize(text)
    assert tok.detokenize(tokens) == english_cleaners(text)
    table = SymbolTable.from_corpus([tokens])
    assert table.decode(table.encode(tokens)) == tokens


def test_unknown_chars_error_names_character_and_position():
    tok = build_tokenizer("chars")
    table = SymbolTable(list("abcdefghijklmnopqrstuvwxyz '.,"))
    with pytest.raises(UnknownSymbolError, match="'#' at token 5"):
        table.encode(tok.tokenize("hello# world"), context="LJ001")


def test_ensure_espeak_uses_wheel():
    library, data = ensure_espeak()
    assert "espeakng_loader" in library and "espeak-ng-data" in data


def test_phonemes_match_espeak_and_round_trip():
    from phonemizer.backend import EspeakBackend

    tok = build_tokenizer("phonemes")
    text = "Hello, world! How are you?"
    tokens = tok.tokenize(text)
    assert tokens[:5] == ["h", "ə", "l", "ˈoʊ", ","]
    assert tokens.count(" ") == 4 and "?" == tokens[-1]
    plain = EspeakBackend("en-us", preserve_punctuation=True, with_stress=True)
    expected = plain.phonemize([english_cleaners(text)], strip=True)[0]
    assert tok.detokenize(tokens) == expected.strip()


def test_phoneme_batch_equals_single_and_keeps_empty():
    tok = build_tokenizer("phonemes")
    texts = ["The 3rd cat.", "", "Dr. Smith sat down."]
    batch = tok.tokenize_batch(texts)
    assert batch[1] == []
    assert batch[0] == tok.tokenize(texts[0]) and batch[2] == tok.tokenize(texts[2])


def test_arpabet_uses_cmudict_first_pronunciation():
    tok = build_tokenizer("arpabet")
    tokens = tok.tokenize("Hello, world!")
    lex = cmudict_lexicon()
    assert tokens == lex["hello"][0] + [","] + [" "] + lex["world"][0] + ["!"]
    assert set(t for t in tokens if t.isalnum()) <= set(arpabet_symbols())


def test_arpabet_reads_typographic_apostrophes_and_single_quotes():
    """``won’t`` (U+2019, as e-books write it) is CMUdict's ``won't``, not ``won`` + an
    unknown symbol + ``t``; single quote marks become the ``"`` every inventory holds."""
    tok = build_tokenizer("arpabet")
    lex = cmudict_lexicon()
    assert tok.tokenize("won\u2019t") == tok.tokenize("won't") == lex["won't"][0]
    quoted = tok.tokenize("\u2018hello\u2019 'hi'")
    assert quoted == tok.tokenize('"hello" "hi"')
    assert set(quoted) <= set(tok.inventory())


def test_arpabet_oov_policies():
    with pytest.raises(OutOfVocabularyError, match="qzxv"):
        build_tokenizer("arpabet").tokenize("hello qzxv")
    assert build_tokenizer("arpabet", oov="unk").tokenize("qzxv") == ["<unk>"]
    lex = cmudict_lexicon()
    letters = build_tokenizer("arpabet", oov="letters").tokenize("qzxv")
    assert letters == [p for c in "qzxv" for p in lex[c][0]]


def test_to_dict_rebuilds_same_tokenizer():
    for kind, kw in [("chars", {}), ("phonemes", {"stress": False}), ("arpabet", {"oov": "unk"})]:
        tok = build_tokenizer(kind, **kw)
        again = tokenizer_from_dict(tok.to_dict())
        assert again.to_dict() == tok.to_dict()
        assert again.tokenize("Two dogs.") == tok.tokenize("Two dogs.")
    with pytest.raises(ValueError, match="unknown tokenizer"):
        build_tokenizer("bpe")


@pytest.mark.parametrize("kind", ["chars", "phonemes", "arpabet"])
def test_inventory_covers_text_outside_any_corpus(kind):
    """The symbol table of a model is seeded with the tokenizer's inventory, so a sentence
    with sounds/letters its small training corpus lacked still encodes."""
    tokenizer = build_tokenizer(kind)
    inventory = set(tokenizer.inventory())
    text = "Quickly, Joseph vexed the huge azure sphinx; who'd thought it? Yes, 42 oxen!"
    assert set(tokenizer.tokenize(text)) <= inventory
    assert " " in inventory and "," in inventory


def test_a_vowel_lengthened_by_repetition_is_its_phones():
    """``Aaaah`` comes from eSpeak NG as one phone ``ˈææ`` that no inventory holds: it is
    the vowel's phones, the stress on the first, all in the inventory; a consonant phone
    that repeats a letter (Italian's ``ss``) stays whole."""
    from aligner.text.tokenizers import _unrepeated

    tokenizer = build_tokenizer("phonemes")
    tokens = tokenizer.tokenize("Aaaaah! Ooooh.")
    assert set(tokens) <= set(tokenizer.inventory()), tokens
    assert _unrepeated("ˈææ") == ["ˈæ", "æ"] and _unrepeated("ɐɐɐ") == ["ɐ", "ɐ", "ɐ"]
    assert _unrepeated("ss") == ["ss"] and _unrepeated("ˈoʊ") == ["ˈoʊ"]


def test_letters_an_english_model_would_say_by_name_are_found():
    from aligner.text.tokenizers import foreign_letters

    english = build_tokenizer("phonemes")
    assert foreign_letters("你好, Ελλάδα café naïve 😀", english) == [
        "你",
        "好",
        "Ε",
        "λ",
        "ά",
        "δ",
        "α",
    ]
    assert foreign_letters("Café naïve façade Ærø.", english) == []
    assert foreign_letters("你好", build_tokenizer("chars")) == []


def test_brackets_are_read_as_parentheses_not_glued_to_a_phone():
    tokenizer = build_tokenizer("phonemes")
    tokens = tokenizer.tokenize("See [one] and {two}.")
    assert tokens.count("(") == 2 and tokens.count(")") == 2
    assert set(tokens) <= set(tokenizer.inventory()), tokens


def test_pictographs_a_phonemes_model_would_say_by_name_are_found_in_any_language():
    """eSpeak NG says an emoji's name ("grinning face") and an arrow's ("right arrow"):
    not what a text with them means; signs a reader says are left alone."""
    from aligner.text.tokenizers import named_symbols

    english = build_tokenizer("phonemes")
    text = "Go \u2192 now \u2605 \U0001f600 \U0001f44d\U0001f3fd 20\u00b0 \u00a9 \u2122 50% \u2264 \u2026"
    assert named_symbols(text, english) == [
        "\u2192",
        "\u2605",
        "\U0001f600",
        "\U0001f44d",
        "\U0001f3fd",
    ]
    assert named_symbols("\U0001f600", build_tokenizer("chars")) == []
    czech = build_tokenizer("phonemes", language="cs")  # eSpeak NG says 🎉 as a Czech word
    assert named_symbols("Dobrý den \U0001f389 přátelé.", czech) == ["\U0001f389"]


def test_a_syllable_break_inside_a_word_is_no_punctuation():
    """eSpeak NG's Hindi writes ``पढ़ना`` as ``pʌr.hənaː``: the ``.`` between phones is
    dropped, the one after a word's phones stays a pause."""
    from aligner.text.tokenizers import _split_words

    assert _split_words("p ʌ r . h ə n aː | h ɛː .") == [
        ["p", "ʌ", "r", "h", "ə", "n", "aː"],
        ["h", "ɛː", "."],
    ]
    assert _split_words(". a |") == [[".", "a"]]
    assert _split_words('v ɭʲ u" b ɭʲ ˈɵ n . |') == [["v", "ɭʲ", "u", "b", "ɭʲ", "ˈɵ", "n", "."]]


def test_a_phone_unseen_under_one_stress_is_said_under_another():
    """A Czech test sentence had ``ˌoː``, which the training text never had: a phoneme
    model says it with the ``ˈoː`` or ``oː`` its table has; a phone it has never met at
    all is still an error."""
    from aligner.inference.common import InferenceError
    from aligner.inference.speech import TextInput
    from aligner.text.symbols import SymbolTable
    from aligner.text.tokenizers import stress_variants

    assert stress_variants("ˌoː") == ["ˈoː", "oː"]
    assert stress_variants("oː") == ["ˈoː", "ˌoː"]
    assert stress_variants(" ") == [] and stress_variants(".") == []

    class Said:
        cleaner = "basic"

        def __init__(self, tokens):
            self.tokens = tokens

        def tokenize(self, text):
            return self.tokens

    model = TextInput()
    model.symbols = SymbolTable(["ˈoː", "p", "a", " "])
    model.add_bos = model.add_eos = False
    model.tokenizer = Said(["p", "ˌoː", " ", "a"])
    ids = model.encode_text("x")
    assert model.symbols.decode(ids.tolist()) == ["p", "ˈoː", " ", "a"]
    model.tokenizer = Said(["p", "ɦ"])
    with pytest.raises(InferenceError, match="'ɦ'"):
        model.encode_text("x")


def test_arpabet_reads_accented_letters_as_english_does_and_names_unknown_words_whole():
    from aligner.text.tokenizers import ArpabetTokenizer, OutOfVocabularyError

    t = ArpabetTokenizer()
    assert t.tokenize("café") == t.tokenize("cafe") and t.tokenize("naïve") == t.tokenize("naive")
    with pytest.raises(OutOfVocabularyError, match=r"große, xyzzqtv .*tokenizer_opts\.oov=espeak"):
        t.tokenize("Größe xyzzqtv")
