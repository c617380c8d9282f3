"""A word scored as a filler (`_as_filler`) takes the frames that its sentence's own tokens
do not explain when told so (`gain`), and no more than it must without: checked against
the monotonic search on a hand-made alignment."""

from __future__ import annotations

import numpy as np

from aligner.alignment.record import UtteranceAlignment, resolve
from aligner.inference.long_recording import _as_filler


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
    plain = resolve(_as_filler(_utt(w, tokens), [1], margin=2.0)).record["frames"]
    assert plain[3] == 1  # the filler takes a frame; IY1 keeps what it explains
    gain = np.zeros(t)
    gain[5:9] = 6.0  # frames 5..8: audio the sentence's tokens do not explain
    told = resolve(_as_filler(_utt(w, tokens), [1], margin=2.0, gain=gain)).record["frames"]
    assert told[3] == 4 and told[1] == 2 and told[0] == 3
    assert sum(told) == t
