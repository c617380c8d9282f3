"""Festival's word and segment times: the Scheme script, its output parsed, the timings
(pauses as gaps, clitics joined, segments past the audio refused) and, where Festival is
installed, a real utterance whose phones tile its words."""

from __future__ import annotations

import shutil

import pytest

from aligner.alignment.intervals import Interval
from aligner.audio.festival import (
    FestivalJob,
    FestivalResult,
    festival_timings,
    parse_output,
    scheme_script,
    synthesize_jobs,
)
from aligner.audio.festival_text import recoded

HAS_FESTIVAL = shutil.which("festival") is not None


def test_the_script_quotes_text_and_switches_voices_once_per_run():
    jobs = [
        FestivalJob('He said "hi" \\ bye', "kal_diphone", "/tmp/a b.wav"),
        FestivalJob("Two.", "kal_diphone", "/tmp/b.wav"),
        FestivalJob("Three.", "ked_diphone", "/tmp/c.wav"),
    ]
    script = scheme_script(jobs).decode("ascii")
    assert script.count("(voice_kal_diphone)") == 1 and script.count("(voice_ked_diphone)") == 1
    assert '(Utterance Text "He said \\"hi\\" \\\\ bye")' in script
    assert '"/tmp/a b.wav"' in script
    assert script.index("voice_ked") > script.index('"Two."')


def test_output_is_parsed_per_utterance_and_noise_between_is_ignored():
    out = "\n".join(
        [
            "festival noise",
            "@@UTT",
            "S\tpau\t0.2",
            "S\thh\t0.3",
            "W\thi\t0.2\t0.3",
            "@@END",
            "SIOD: junk",
            "@@UTT",
            "S\tax\t0.1",
            "W\ta\t0.0\t0.1",
            "@@END",
        ]
    )
    res = parse_output(out)
    assert [r.segments for r in res] == [[("pau", 0.2), ("hh", 0.3)], [("ax", 0.1)]]
    assert res[0].words == [("hi", 0.2, 0.3)]


def test_pauses_are_gaps_and_clitics_join_the_word_before():
    result = FestivalResult(
        segments=[
            ("pau", 0.2),
            ("s", 0.3),
            ("m", 0.35),
            ("ih", 0.4),
            ("th", 0.45),
            ("s", 0.5),
            ("pau", 0.7),
            ("ax", 0.8),
            ("pau", 1.0),
        ],
        words=[("Smith", 0.2, 0.5), ("'s", 0.0, 0.0), ("a", 0.7, 0.8)],
    )
    t = festival_timings(result, duration=1.02)
    assert t.words == [Interval(0.2, 0.5, "Smith's"), Interval(0.7, 0.8, "a")]
    assert [p.label for p in t.phones] == ["s", "m", "ih", "th", "s", "ax"]
    assert t.phones[0] == Interval(0.2, 0.3, "s") and t.phones[-1] == Interval(0.7, 0.8, "ax")
    assert t.duration == 1.02


def test_a_word_without_sound_or_a_segment_past_the_audio_is_an_error():
    with pytest.raises(ValueError, match="no sound"):
        festival_timings(FestivalResult([("ax", 0.1)], [("a", 0.0, 0.1), ("b", 0.1, 0.1)]), 1.0)
    with pytest.raises(ValueError, match="after the audio"):
        festival_timings(FestivalResult([("ax", 1.5)], [("a", 0.0, 1.5)]), 1.0)


def test_utf8_names_read_as_latin1_keep_their_lines():
    """A UTF-8 voice's names come back as Latin-1 characters; ``х`` (D1 85) then holds
    U+0085, which str.splitlines() would take for a line end."""
    words = ["этих", "мягких", "французских"]
    printed = ["@@UTT", "S\tpau\t0.2"]
    printed += [
        f"W\t{w.encode('utf-8').decode('latin-1')}\t0.{i}\t0.{i + 1}" for i, w in enumerate(words)
    ]
    (res,) = parse_output("\r\n".join([*printed, "@@END", ""]))
    assert [recoded(name, "utf-8") for name, _, _ in res.words] == words
    assert res.words[2][1:] == (0.2, 0.3)


def test_a_pause_past_the_audio_is_cut_and_a_silent_sign_is_no_word():
    """A unit voice's last pause may run past its audio (cut to it; a phone may not), and
    a sign Festival made a word of without sound (Hindi's danda: ``""``) is no word."""
    result = FestivalResult(
        [("pau", 0.2), ("ax", 0.5), ("pau", 0.9)], [("a", 0.2, 0.5), ("", 0.0, 0.0)]
    )
    t = festival_timings(result, duration=0.8)
    assert t.words == [Interval(0.2, 0.5, "a")] and t.phones == [Interval(0.2, 0.5, "ax")]
    with pytest.raises(ValueError, match="after the audio"):
        festival_timings(FestivalResult([("ax", 0.9)], [("a", 0.0, 0.9)]), 0.8)
    with pytest.raises(ValueError, match="no sound"):  # a word of letters still must sound
        festival_timings(FestivalResult([("ax", 0.5)], [("a", 0.0, 0.5), ("b", 0, 0)]), 0.8)


@pytest.mark.skipif(not HAS_FESTIVAL, reason="Festival is not installed")
def test_a_real_utterance_has_phones_that_tile_its_words(tmp_path):
    import soundfile

    path = tmp_path / "a.wav"
    (res,) = synthesize_jobs([FestivalJob("I think, therefore I am.", "kal_diphone", str(path))])
    info = soundfile.info(str(path))
    t = festival_timings(res, info.duration)
    assert info.samplerate == 16000
    assert [w.label for w in t.words] == ["I", "think", "therefore", "I", "am"]
    assert t.words[0].start > 0.1  # Festival's leading pause is kept
    assert t.duration - t.words[-1].end > 0.1  # and the trailing one
    for word in t.words:  # every word is the span of its phones
        inside = [p for p in t.phones if word.start <= p.start and p.end <= word.end]
        assert inside and inside[0].start == word.start and inside[-1].end == word.end
    gaps = [b.start - a.end for a, b in zip(t.words, t.words[1:])]
    assert max(gaps) > 0.1  # the comma's pause
