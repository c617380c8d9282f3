"""Synthesis text normalization: abbreviations, times, digit strings, numbers,
and sentence splitting that does not break at abbreviations."""

import pytest

from aligner.text.cleaners import english_cleaners
from aligner.text.normalize import normalize_and_split, normalize_text
from aligner.text.sentences import split_sentences

NORMALIZED = [
    # abbreviations: titles, months, days, units, Latin, street names
    ("Jan. 5th", "January fifth"),
    ("on Jan. 5", "on January fifth"),
    ("January 5, 2020", "January fifth, twenty twenty"),
    ("Dr. Smith and Mrs. Jones", "Doctor Smith and Missus Jones"),
    ("Prof. Lee vs. Gen. Grant", "Professor Lee versus General Grant"),
    ("on St. Mark", "on Saint Mark"),
    ("Meet me on Main St. at noon", "Meet me on Main Street at noon"),
    ("It took 5 min. to walk 2 ft.", "It took five minutes to walk two feet."),
    ("1 min.", "one minute."),
    ("6 ft. tall", "six feet tall"),
    ("5 in. long", "five inches long"),
    ("approx. 3 km away", "approximately three kilometers away"),
    ("it weighs 2.5 kg", "it weighs two point five kilograms"),
    ("30 °C", "thirty degrees Celsius"),
    ("60 mph", "sixty miles per hour"),
    ("e.g. this", "for example this"),
    ("No. 5 and Fig. 3", "Number five and Figure three"),
    ("I said no. Then left.", "I said no. Then left."),
    ("Apples, pears, etc. We ate them.", "Apples, pears, et cetera. We ate them."),
    ("Mon. and Sat.", "Monday and Saturday."),
    ("He sat. The sun.", "He sat. The sun."),
    ("Smith & Sons", "Smith and Sons"),
    ("#1 fan", "number one fan"),
    # times
    ("10:30", "ten thirty"),
    ("7:05", "seven oh five"),
    ("10:00", "ten o'clock"),
    ("10:30 am", "ten thirty a m"),
    ("at 10:30 a.m. today", "at ten thirty a m today"),
    ("7:05 PM", "seven oh five p m"),
    ("7 pm", "seven p m"),
    ("at 5 p.m. Then", "at five p m. Then"),
    ("10:30:15", "ten thirty and fifteen seconds"),
    # digit strings: phone numbers, ZIP codes, leading zeros, long strings
    ("555-1234", "five five five, one two three four"),
    ("Call (555) 123-4567 now", "Call five five five, one two three, four five six seven now"),
    ("1-800-555-0199", "one, eight oh oh, five five five, oh one nine nine"),
    ("Cambridge, MA 02139", "Cambridge, MA zero two one three nine"),
    ("ZIP 90210-1234", "ZIP nine zero two one zero, one two three four"),
    ("Agent 007", "Agent zero zero seven"),
    ("Account 12345678901", "Account one two three four five six seven eight nine zero one"),
    ("12345 people", "twelve thousand three hundred forty-five people"),
    # years, decades, ranges
    ("in 1984", "in nineteen eighty-four"),
    ("in 1905", "in nineteen oh five"),
    ("in 2005", "in two thousand five"),
    ("the 1990s and the '80s", "the nineteen nineties and the eighties"),
    ("pages 5-10", "pages five to ten"),
    ("on 12/05/2024", "on December fifth, twenty twenty-four"),
    ("for many years.[1] Then the town[12] slept", "for many years. Then the town slept"),
    ("Chapter IV. BOOK XII", "Chapter four. BOOK twelve"),  # a division's Roman number
    ("Section Mix and Chapter IIII", "Section Mix and Chapter IIII"),  # none of them
    ("on 25/12/2024", "on December twenty-fifth, twenty twenty-four"),
    ("from 1990-1995", "from nineteen ninety to nineteen ninety-five"),
    ("it ended 3-2", "it ended three two"),
    # money, percentages, decimals, ordinals, signs
    ("$3.50", "three dollars and fifty cents"),
    ("$5 million", "five million dollars"),
    ("£2", "two pounds"),
    ("€1", "one euro"),
    ("50% off", "fifty percent off"),
    ("3.5% interest", "three point five percent interest"),
    (".5 seconds", "point five seconds"),
    ("the 21st of May", "the twenty-first of May"),
    ("It's -5 degrees", "It's minus five degrees"),
    ("1,000,000 fans", "one million fans"),
]


@pytest.mark.parametrize("text, expected", NORMALIZED)
def test_normalize_text(text, expected):
    assert normalize_text(text) == expected


@pytest.mark.parametrize("text, expected", NORMALIZED)
def test_english_cleaner_is_the_lowercased_normalization_and_idempotent(text, expected):
    cleaned = english_cleaners(text)
    assert cleaned == expected.lower()
    assert english_cleaners(cleaned) == cleaned


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Jan. 5th was cold. We met.", ["Jan. 5th was cold.", "We met."]),
        ("Dr. Smith came. Mr. J. Doe left.", ["Dr. Smith came.", "Mr. J. Doe left."]),
        ("Use e.g. this one. Or i.e. that.", ["Use e.g. this one.", "Or i.e. that."]),
        ("See No. 5 now. I said no. Then left.", ["See No. 5 now.", "I said no.", "Then left."]),
        ("We left at 5 p.m. Then we slept.", ["We left at 5 p.m.", "Then we slept."]),
        ("It was at 5 p.m. on Monday.", ["It was at 5 p.m. on Monday."]),
        ("Apples, pears, etc. We ate.", ["Apples, pears, etc.", "We ate."]),
        ("Apples, pears, etc. and more.", ["Apples, pears, etc. and more."]),
        ("He is 6 ft. Tall men run.", ["He is 6 ft.", "Tall men run."]),
        ("It took 5 min. to go.", ["It took 5 min. to go."]),
        ("the U.S. Army came. Then", ["the U.S. Army came.", "Then"]),
        ("Acme Inc. It sells.", ["Acme Inc.", "It sells."]),
        ("We met in Jan. The rest", ["We met in Jan.", "The rest"]),
        ('He said "Go." Then left.', ['He said "Go."', "Then left."]),
        ("One.\n\nTwo", ["One.", "Two"]),
        ("Dne 1. 5. 2024 v 10:30. Ahoj.", ["Dne 1. 5. 2024 v 10:30.", "Ahoj."]),  # ordinals
        ("Narodil se 28. října 1918. Pak", ["Narodil se 28. října 1918.", "Pak"]),
        ("I counted to 5. Then I stopped.", ["I counted to 5.", "Then I stopped."]),
    ],
)
def test_split_sentences_at_abbreviations(text, expected):
    assert split_sentences(text) == expected


def test_normalize_and_split():
    text = "Dr. Smith arrived on Jan. 5th at 10:30 am. Call 555-1234! We left at 5 p.m. Then"
    assert normalize_and_split(text) == [
        "Doctor Smith arrived on January fifth at ten thirty a m.",
        "Call five five five, one two three four!",
        "We left at five p m.",
        "Then",
    ]
    assert normalize_and_split("  \n ") == []


def test_normalize_and_split_limits_the_normalized_length():
    pieces = normalize_and_split("I counted 1234567 and 7654321, then 99, then 42.", max_chars=40)
    assert all(len(p) <= 40 for p in pieces)
    assert "one million" in " ".join(pieces)


def test_other_languages_are_split_but_not_normalized():
    text = "Le Dr. Dupont arrive à 10:30. Il part."
    assert normalize_and_split(text, cleaner="basic") == [
        "Le Dr. Dupont arrive à 10:30.",
        "Il part.",
    ]
