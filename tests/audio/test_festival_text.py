"""Each Festival voice is given the text in its own encoding: Czech in ISO-8859-2 with every
letter as written, a letter the voice cannot read an error naming it, an English voice's
accents read as their ASCII base; the names Festival prints read back in that encoding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aligner.audio.festival import FestivalJob, scheme_script
from aligner.audio.festival_text import (
    UnspeakableText,
    VoiceSetting,
    parse_descriptions,
    recoded,
    scheme_string,
    speakable,
)

CZECH = VoiceSetting("czech", "ISO-8859-2")
ENGLISH = VoiceSetting("english", "ISO-8859-1")
ITALIAN = VoiceSetting("italian", "ISO-8859-1")


def test_czech_letters_reach_the_voice_as_written_in_iso_8859_2():
    text = "Poměr počtem je nejužitečnějším — „Žluťoučký kůň“."
    assert speakable(text, CZECH) == 'Poměr počtem je nejužitečnějším - "Žluťoučký kůň".'
    script = scheme_script([FestivalJob(text, "czech_dita", "/x.wav", "czech", "ISO-8859-2")])
    assert "Poměr počtem je nejužitečnějším".encode("iso-8859-2") in script
    assert b"nejuzitecnejsim" not in script


def test_a_letter_the_encoding_cannot_hold_is_named_never_folded():
    with pytest.raises(UnspeakableText, match=r"ISO-8859-1.*'ő' \(U\+0151\)"):
        speakable("Città è più fő.", ITALIAN)
    assert speakable("Città è più.", ITALIAN) == "Città è più."  # Latin-1 holds these
    with pytest.raises(UnspeakableText, match=r"'П' \(U\+041F\)"):
        speakable("Привет, Praha.", CZECH)
    with pytest.raises(UnspeakableText, match=r"ASCII letters.*'Æ'.*'ø'"):
        speakable("Ærø is an island.", ENGLISH)


@pytest.mark.parametrize("sign", ["±", "→", "😀", "€", "¥"])
@pytest.mark.parametrize("setting", [CZECH, ENGLISH])
def test_a_sign_the_encoding_cannot_hold_is_named_never_dropped(sign, setting):
    """A reader (and a tokenizer learning from the text) says ``±``; the voice given a space
    in its place would not: the sentence is an error naming the sign."""
    with pytest.raises(
        UnspeakableText, match=rf"characters .*'{sign}' \(U\+{ord(sign):04X}\).*signs as words"
    ):
        speakable(f"Tohle {sign} tamto.", setting)


def test_punctuation_the_encoding_lacks_is_replaced_as_no_one_says_it():
    assert speakable("Pes – kočka „ahoj“ ‹x›.", CZECH) == 'Pes - kočka "ahoj" x .'


def test_an_english_voice_reads_accented_letters_as_their_base():
    assert speakable("Naïve café — “quoted”…", ENGLISH) == 'Naïve café - "quoted"...'.replace(
        "ï", "i"
    ).replace("é", "e")


def test_a_decomposed_letter_counts_as_the_letter():
    """``e`` + combining caron is ``ě`` (NFC), which ISO-8859-2 holds."""
    assert speakable("pome\u030cr", CZECH) == "poměr"


@given(st.text(alphabet="aábcčdďeéěfghiíjklmnňoópqrřsštťuúůvwxyýzž ,.!?'-", max_size=40))
def test_czech_text_round_trips_through_the_voices_bytes(text):
    """What the Czech voice is given, read back from its bytes as Festival prints them
    (`recoded`), is the text itself, whitespace collapsed."""
    said = speakable(text, CZECH)
    literal = scheme_string(said, CZECH.coding)[1:-1]
    assert recoded(literal.decode("latin-1"), CZECH.coding) == " ".join(text.split())


def test_descriptions_give_language_and_encoding():
    printed = (
        "(czech_dita ((language czech) (dialect nil) (gender female) (coding ISO-8859-2) "
        '(description "")))\n(kal_diphone ((language english) (gender male) (dialect '
        'american) (description "An American (coding none here) voice")))\n'
    )
    found = parse_descriptions(["czech_dita", "kal_diphone", "other"], printed)
    assert found == {
        "czech_dita": CZECH,
        "kal_diphone": VoiceSetting("english", "ISO-8859-1"),
        "other": VoiceSetting("english", "ISO-8859-1"),
    }
    # the fields in any order: Debian's Hindi voice names its coding after its description
    printed = (
        '(hindi_NSK_diphone ((language hindi) (description "COMMENT (coding x)") '
        "(builtwith festvox-1.2) (coding UTF-8)))\n(msu_ru_nsh_clunits ((language russian) "
        '(coding utf-8) (description "Russian clunits festival voice.")))'
    )
    assert parse_descriptions(["hindi_NSK_diphone", "msu_ru_nsh_clunits"], printed) == {
        "hindi_NSK_diphone": VoiceSetting("hindi", "UTF-8"),
        "msu_ru_nsh_clunits": VoiceSetting("russian", "utf-8"),
    }
    with pytest.raises(ValueError, match="'KOI-9'"):
        parse_descriptions(["x"], '(x ((language y) (coding KOI-9) (description "")))')
