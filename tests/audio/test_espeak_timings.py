"""Reference timings from eSpeak NG's own events: phones tile the speech, words hold their
phones, the phones are the phonemes tokenizer's, and TextGrids round-trip."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from aligner.alignment.intervals import Interval, Timings
from aligner.alignment.textgrid import read_textgrid, write_textgrid
from aligner.audio.espeak_timings import (
    CLOSURE_PHONES,
    Event,
    closures_into_stops,
    timings_from_events,
)
from aligner.audio.synth import SAMPLE_RATE, synthesize_timed

TEXT = "Seven quiet violins drifted, above the harbour at dawn."


@pytest.fixture(scope="module")
def spoken():
    return synthesize_timed(TEXT, "en-us+m3,rate=150,pitch=35")


def test_phones_tile_the_speech_and_words_hold_their_phones(spoken):
    wav, t = spoken
    assert t.duration == pytest.approx(len(wav) / SAMPLE_RATE)
    for tier in (t.words, t.phones):
        assert all(0 <= a.start <= a.end <= t.duration for a in tier)
        assert all(a.end <= b.start for a, b in zip(tier, tier[1:]))  # in order, no overlap
    gaps = [b.start - a.end for a, b in zip(t.phones, t.phones[1:])]
    assert sum(g > 0 for g in gaps) == 1  # one pause (the comma); phones touch elsewhere
    assert [w.label for w in t.words] == TEXT.replace(",", "").rstrip(".").split()
    for word in t.words:  # a word is exactly the span of the phones inside it
        inside = [p for p in t.phones if word.start <= p.start and p.end <= word.end]
        assert inside and inside[0].start == word.start and inside[-1].end == word.end
    assert sum(len([p for p in t.phones if w.start <= p.start < w.end]) for w in t.words) == len(
        t.phones
    )


def test_phones_are_those_of_the_phonemes_tokenizer(spoken):
    from aligner.text.tokenizers import build_tokenizer

    tokens = build_tokenizer("phonemes").tokenize(TEXT)
    phones = [tok for tok in tokens if tok not in " ,."]
    assert [p.label for p in spoken[1].phones] == phones


def test_a_phone_espeak_gives_no_samples_is_kept_with_zero_length():
    """The phones stay those of the phonemes tokenizer one for one."""
    from aligner.text.tokenizers import build_tokenizer

    _, t = synthesize_timed("jewelmasters", "en-us")
    labels = [p.label for p in t.phones]
    assert labels == [tok for tok in build_tokenizer("phonemes").tokenize("jewelmasters")]
    empty = [p for p in t.phones if p.start == p.end]
    assert [p.label for p in empty] == ["l"] and t.words[0].end == t.phones[-1].end


def test_events_do_not_change_the_audio():
    """The corpus audio is the same bytes with phoneme events on as without (fresh
    processes: eSpeak NG carries state from one utterance to the next)."""
    script = (
        "import sys, hashlib, aligner.audio.synth as s\n"
        "if sys.argv[1] == 'off': s._INITIALIZE_PHONEME_EVENTS = s._INITIALIZE_PHONEME_IPA = 0\n"
        f"w = s.synthesize({TEXT!r}, 'en-us+f2,rate=210')\n"
        "print(len(w), hashlib.md5(w.tobytes()).hexdigest())\n"
    )
    out = [
        subprocess.run(
            [sys.executable, "-c", script, flag], capture_output=True, text=True, check=True
        ).stdout
        for flag in ("on", "off")
    ]
    assert out[0] == out[1] and int(out[0].split()[0]) > 0


def test_timings_from_events_by_hand():
    events = [
        Event("word", 1, 2, 0),
        Event("phoneme", 1, 0, 10, "h"),
        Event("phoneme", 1, 0, 30, "i"),
        Event("phoneme", 3, 0, 50, ""),
        Event("word", 5, 3, 70),
        Event("phoneme", 5, 0, 70, "j"),
        Event("phoneme", 5, 0, 80, "o"),
        Event("phoneme", 9, 0, 95, ""),
    ]
    t = timings_from_events(events, "hi, you.", 100, 10)
    assert t.phones == [
        Interval(1.0, 3.0, "h"),
        Interval(3.0, 5.0, "i"),
        Interval(7.0, 8.0, "j"),
        Interval(8.0, 9.5, "o"),
    ]
    assert t.words == [Interval(1.0, 5.0, "hi"), Interval(7.0, 9.5, "you")]
    assert t.duration == 10.0
    assert Timings.from_dict(t.to_dict()) == t


def test_a_stop_starts_at_its_closure_by_hand():
    """1 kHz, 1 sample a ms: vowel "a" at 0, silence from 60, "t" burst at 100, "a" at
    120, a pause at 160 whose silence runs into a "k" at 200."""
    import numpy as np

    wav = np.full(300, 1000, dtype=np.int16)
    wav[60:100] = 0
    wav[160:200] = 3  # below the silence level
    events = [
        Event("word", 1, 4, 0),
        Event("phoneme", 1, 0, 0, "a"),
        Event("phoneme", 2, 0, 100, "t"),
        Event("phoneme", 3, 0, 120, "a"),
        Event("phoneme", 4, 0, 160, ""),
        Event("word", 6, 1, 200),
        Event("phoneme", 6, 0, 200, "k"),
        Event("phoneme", 6, 0, 230, "a"),
    ]
    moved = closures_into_stops(events, wav, 1000)
    assert [e.sample for e in moved] == [0, 0, 60, 120, 160, 200, 200, 230]  # no closure in a pause
    capped = closures_into_stops(events, wav, 1000, max_closure=0.025)
    assert capped[2].sample == 75
    t = timings_from_events(moved, "atak k", 300, 1000)
    assert t.phones[:2] == [Interval(0.0, 0.06, "a"), Interval(0.06, 0.12, "t")]
    later = [e._replace(name="s") if e.name == "t" else e for e in events]  # not a stop
    assert closures_into_stops(later, wav, 1000) == later


def test_stops_at_closure_or_burst_in_real_speech():
    """Only stops and affricates after a phone move, back over silence, by at most 80 ms;
    the phone before them ends where they start."""
    import numpy as np

    text = "Blessed cobblers took a pot, and kept it."
    script = (
        "import sys, json, aligner.audio.synth as s\n"
        f"w, t = s.synthesize_timed({text!r}, 'en-us', sys.argv[1])\n"
        "print(json.dumps([t.to_dict(7), w.tolist()]))\n"
    )
    runs = {}
    for stops in ("burst", "closure"):
        out = subprocess.run(
            [sys.executable, "-c", script, stops], capture_output=True, text=True, check=True
        ).stdout
        timings, wav = json.loads(out)
        runs[stops] = Timings.from_dict(timings), np.abs(np.array(wav))
    (burst, wav), (closure, wav2) = runs["burst"], runs["closure"]
    assert np.array_equal(wav, wav2)
    moved = 0
    for a, b in zip(burst.phones, closure.phones):
        assert a.label == b.label and a.end >= b.end
        shift = a.start - b.start
        if shift > 0:
            moved += 1
            assert b.label in CLOSURE_PHONES and 0.01 < shift <= 0.08
            assert wav[round(b.start * SAMPLE_RATE) : round(a.start * SAMPLE_RATE)].max() < 64
        else:
            assert shift == 0
    assert moved >= 6
    assert [w.label for w in burst.words] == [w.label for w in closure.words]
    starts = [(a.start - b.start, b.label) for a, b in zip(burst.words, closure.words)]
    assert {label for shift, label in starts if shift > 0} == {"cobblers", "took", "pot", "kept"}


def test_textgrid_round_trip(spoken, tmp_path):
    t = spoken[1]
    write_textgrid(t.tiers, t.duration, tmp_path / "u.TextGrid")
    tiers = read_textgrid(tmp_path / "u.TextGrid")
    for name in ("words", "phones"):
        assert [a.label for a in tiers[name]] == [a.label for a in t.tier(name)]
        got = [x for a in tiers[name] for x in (a.start, a.end)]
        assert got == pytest.approx([x for a in t.tier(name) for x in (a.start, a.end)], abs=1e-9)
