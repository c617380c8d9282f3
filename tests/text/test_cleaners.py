"""English cleaners: numbers, currency, ordinals, years, abbreviations, whitespace."""

import pytest

from aligner.text.cleaners import basic_cleaners, english_cleaners, get_cleaner


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I have 101 dogs.", "i have one hundred one dogs."),
        # a number in comma groups is a count, never a year
        ("1,234 votes", "one thousand two hundred thirty-four votes"),
        ("2,500 men", "two thousand five hundred men"),
        ("the 1,234th day", "the one thousand two hundred thirty-fourth day"),
        ("up 2,500%", "up two thousand five hundred percent"),
        ("¥1,500", "one thousand five hundred yen"),
        ("It costs $3.50", "it costs three dollars and fifty cents"),
        ("It costs $1", "it costs one dollar"),
        ("only $0.05", "only five cents"),
        ("£2", "two pounds"),
        ("the 21st of May", "the twenty-first of may"),
        ("the 3rd time", "the third time"),
        ("in 1984", "in nineteen eighty-four"),
        ("in 1905", "in nineteen oh five"),
        ("in 1900", "in nineteen hundred"),
        ("in 2005", "in two thousand five"),
        ("pi is 3.14", "pi is three point one four"),
        ("1,000,000 fans", "one million fans"),
        ("50% off", "fifty percent off"),
        (
            "Mr. and Mrs. Smith met Dr. Jones on St. Mark",
            "mister and missus smith met doctor jones on saint mark",
        ),
        ("  Hello\t\tWORLD \n", "hello world"),
    ],
)
def test_english_cleaners(text, expected):
    assert english_cleaners(text) == expected


def test_abbreviation_needs_word_boundary():
    assert english_cleaners("Amr. first") == "amr. first"


def test_basic_and_registry():
    assert basic_cleaners("  Ça  VA ") == "ça va"
    assert get_cleaner("none")("A  B") == "A  B"
    with pytest.raises(ValueError, match="unknown cleaner"):
        get_cleaner("klingon")
