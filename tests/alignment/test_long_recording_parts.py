"""Parts of a long recording's alignment on hand-made inputs: a word scored as a filler
(`as_filler`) takes the frames that its sentence's own tokens do not explain when told so
(`gain`), and no more than it must without, checked against the monotonic search; a
recording that ends or begins in speech is noted (`cut_notes`)."""

from __future__ import annotations

import numpy as np

from aligner.alignment.record import UtteranceAlignment, resolve
from aligner.inference.mismatches import as_filler


def _utt(weights: np.ndarray, tokens: list[str]) -> UtteranceAlignment:
    return UtteranceAlignment(
        "u", tokens, weights, len(weights), 1, 256, 22050, kind="arpabet", method="search"
    )


def test_a_filler_takes_the_frames_its_sentence_does_not_explain():
    tokens = ["B", "IY1", " ", "AH0", " ", "S", "IY1"]
    t = 12
    w = np.full((t, len(tokens)), 0.01)
    w[:3, 0], w[3:9, 1], w[9:11, 5], w[11:, 6] = 1.0, 1.0, 1.0, 1.0  # IY1 spreads over 3..8
    w /= w.sum(1, keepdims=True)
    plain = resolve(as_filler(_utt(w, tokens), [1], margin=2.0)).record["frames"]
    assert plain[3] == 1  # the filler takes a frame; IY1 keeps what it explains
    gain = np.zeros(t)
    gain[5:9] = 6.0  # frames 5..8: audio the sentence's tokens do not explain
    told = resolve(as_filler(_utt(w, tokens), [1], margin=2.0, gain=gain)).record["frames"]
    assert told[3] == 4 and told[1] == 2 and told[0] == 3
    assert sum(told) == t


def test_a_recording_cut_in_speech_is_noted_at_that_end():
    from aligner.inference.long_recording import cut_notes

    pauses = np.zeros(100, bool)
    pauses[:10] = True  # silence first, speech to the last frame
    (note,) = cut_notes(pauses, 4)
    assert note.startswith("it ends in speech")
    pauses[-2:] = True  # a pause shorter than the edge: still sound before it
    assert cut_notes(pauses, 4) == [] and cut_notes(None, 4) == []
    assert [n.split()[1] for n in cut_notes(np.zeros(100, bool), 4)] == ["begins", "ends"]


def test_a_word_aligned_to_silence_alone_is_text_not_in_the_audio():
    from aligner.inference.mismatches import silent_words

    sec = 0.01
    pauses = np.zeros(300, bool)
    pauses[:50] = True  # half a second of silence, then speech
    words = [[0.05, 0.45, "Chapter"], [0.49, 0.8, "It"], [0.8, 1.2, "was"]]
    (heading,) = silent_words(words, pauses, sec, [])
    assert heading == {
        "kind": "text not in the audio",
        "start": 0.05,
        "end": 0.45,
        "text": "Chapter",
    }
    taken = [{"kind": "word unlike its audio", "start": 0.0, "end": 0.5, "text": "Chapter"}]
    assert (
        silent_words(words, pauses, sec, taken) == [] and silent_words(words, None, sec, []) == []
    )
