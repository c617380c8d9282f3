"""The model-free parts of long-form alignment: the coarse search on
log-probabilities built so that the right answer is known (every sentence found at its
frames; a sentence the audio lacks passed over; audio the text lacks given to the filler,
never to a neighbour), pauses chosen for the cuts, the recording tiled."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from aligner.alignment.longform import (
    SentenceGraph,
    attach_extra,
    coarse_search,
    cut_between,
    filler_runs,
    hold_edge_words,
    passed_words,
    sentence_spans,
    words_missed,
    words_reached,
)
from aligner.alignment.neighbours import keep_neighbours, longest_phones
from aligner.inference.longform import pieces, steady_sound, word_scores

LOW, HIGH = -12.0, -0.1


def _scene(lengths, plan):
    """Log-probs (T, N) of sentences of `lengths` tokens (the last of each a '.' that is
    optional) for a `plan` of ("say", k, frames per token) / ("pause", frames) /
    ("noise", frames) parts; returns (log_probs, silent, truth {k: (start, end)})."""
    n = sum(lengths)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    rows, silent, truth = [], [], {}
    for part in plan:
        if part[0] == "say":
            _, k, per = part
            start = len(rows)
            for j in range(lengths[k] - 1):  # the sounds
                for _ in range(per):
                    row = np.full(n, LOW)
                    row[first[k] + j] = HIGH
                    rows.append(row), silent.append(False)
            truth[k] = (start, len(rows))
        else:
            for _ in range(part[1]):
                row = np.full(n, LOW)
                if part[0] == "pause":  # a pause: the '.' tokens are likely
                    row[first + np.asarray(lengths) - 1] = -1.0
                else:  # speech of other words: each frame most like some token
                    row[np.random.default_rng(len(rows)).integers(n)] = HIGH
                rows.append(row), silent.append(part[0] == "pause")
    lp = np.asarray(rows)
    lp -= np.logaddexp.reduce(lp, axis=1, keepdims=True)
    return lp, np.asarray(silent), truth


def _graph(lengths):
    return SentenceGraph.build([np.array([False] * (n - 1) + [True]) for n in lengths])


def test_every_sentence_is_found_at_its_frames():
    lengths = [5, 4, 6]
    plan = [
        ("pause", 10),
        ("say", 0, 4),
        ("pause", 8),
        ("say", 1, 5),
        ("pause", 6),
        ("say", 2, 3),
        ("pause", 5),
    ]
    lp, silent, truth = _scene(lengths, plan)
    graph = _graph(lengths)
    spans = sentence_spans(coarse_search(lp, graph, silent=silent), graph, final=True)
    assert {s.index: (s.start, s.end) for s in spans} == truth


def test_a_sentence_missing_from_the_audio_is_passed_over():
    lengths = [5, 7, 5]
    plan = [("pause", 5), ("say", 0, 10), ("pause", 9), ("say", 2, 10), ("pause", 5)]
    lp, silent, truth = _scene(lengths, plan)
    graph = _graph(lengths)
    spans = sentence_spans(coarse_search(lp, graph, silent=silent), graph, final=True)
    found = {s.index: (s.start, s.end) for s in spans}
    assert found == {0: truth[0], 1: (None, None), 2: truth[2]}


def test_audio_missing_from_the_text_goes_to_the_filler_not_a_neighbour():
    lengths = [5, 5]
    plan = [
        ("pause", 5),
        ("say", 0, 4),
        ("pause", 6),
        ("noise", 60),
        ("pause", 6),
        ("say", 1, 4),
        ("pause", 4),
    ]
    lp, silent, truth = _scene(lengths, plan)
    graph = _graph(lengths)
    path = coarse_search(lp, graph, silent=silent)
    spans = sentence_spans(path, graph, final=True)
    assert {s.index: (s.start, s.end) for s in spans} == truth
    noise_start = truth[0][1] + 6
    assert filler_runs(path, graph, ~silent, 10) == [(noise_start, noise_start + 60)]


def test_a_window_that_ends_inside_a_sentence_leaves_it_out_unless_final():
    lengths = [4, 6]
    plan = [("pause", 3), ("say", 0, 4), ("pause", 5), ("say", 1, 4)]
    lp, silent, truth = _scene(lengths, plan)
    lp = lp[: truth[1][0] + 8]  # the audio stops inside sentence 1
    graph = _graph(lengths)
    path = coarse_search(lp, graph, silent=silent[: len(lp)])
    assert [s.index for s in sentence_spans(path, graph)] == [0]
    assert [s.index for s in sentence_spans(path, graph, final=True)] == [0, 1]


def test_cuts_fall_in_the_middle_of_the_longest_pause():
    pauses = np.zeros(40, bool)
    pauses[12:14] = True
    pauses[20:30] = True
    assert cut_between(10, 35, pauses) == 25
    assert cut_between(10, 35, None) == 22
    assert cut_between(10, 10, pauses) == 10


def test_pieces_tile_the_recording():
    spans = {0: (10, 50), 1: (70, 120), 3: (200, 260)}
    extra = [(130, 180)]
    parts = pieces(spans, extra, ["a.", "b.", "c.", "d."], 300, None, 15)
    assert parts[0].start == 0 and parts[-1].end == 300
    assert all(p.end == q.start for p, q in zip(parts, parts[1:]))
    said = [(p.index, p.start, p.end) for p in parts if p.text]
    assert said == [(0, 0, 60), (1, 60, 125), (3, 190, 275)]


def test_a_sentence_keeps_at_most_edge_pause_frames_at_each_end():
    spans = {0: (10, 50), 1: (90, 140)}
    pauses = np.ones(200, bool)
    pauses[20:45] = pauses[100:130] = False  # its speech lies within its coarse span
    parts = pieces(spans, [], ["a.", "b."], 200, pauses, 40, edge=5)
    said = [(p.index, p.start, p.end) for p in parts if p.text]
    assert said == [(0, 15, 50), (1, 95, 135)]
    assert parts[0].start == 0 and parts[-1].end == 200  # the pause goes to the gaps
    assert all(p.end == q.start for p, q in zip(parts, parts[1:]))
    untrimmed = pieces(spans, [], ["a.", "b."], 200, pauses, 40)
    assert [(p.start, p.end) for p in untrimmed if p.text] == [(0, 70), (70, 180)]


@pytest.mark.parametrize("gap", [0.0, 2.5])
def test_word_scores_sum_the_gap_to_the_best_token(gap):
    tokens = ["a", "b", " ", "c", "."]
    frames = [2, 2, 1, 3, 1]
    lp = np.full((9, 5), -5.0)
    owner = np.repeat(np.arange(5), frames)
    lp[np.arange(9), owner] = -1.0
    lp[5:8, 0] = -1.0 + gap  # c's frames: token a is likelier by `gap`
    assert word_scores(lp, tokens, frames) == pytest.approx([0.0, -3 * gap])  # c: 3 frames


@pytest.mark.parametrize("samples", [8000 * 7, 8000 * 7 + 77, 300])
def test_a_long_recordings_mel_chunk_by_chunk_is_the_whole_ones(samples):
    from types import SimpleNamespace

    import torch

    from aligner.audio.features import MelConfig, log_mel
    from aligner.inference.longform import chunked_mel

    cfg = MelConfig.from_dict(
        {"sample_rate": 8000, "n_fft": 256, "hop_length": 64, "win_length": 256,
         "n_mels": 20, "f_max": 4000.0}
    )  # fmt: skip
    speech = SimpleNamespace(mel_cfg=cfg, target_mel=lambda wav: log_mel(wav, cfg))
    wav = torch.from_numpy(np.random.default_rng(0).normal(0, 0.1, samples).astype(np.float32))
    whole = log_mel(wav, cfg)
    assert torch.equal(chunked_mel(speech, wav, seconds=1.3), whole)


class _Scene:
    """A stand-in for the model (`FrameScorer`) over a planned recording: each token of
    the text has its own frames, pauses favour the sentences' stops."""

    def __init__(self, lengths, plan):
        self.lp, self.silent, self.truth = _scene(lengths, plan)
        self.first = np.concatenate([[0], np.cumsum(lengths)[:-1]])

    def __len__(self):
        return len(self.lp)

    def log_probs(self, ids, start, end):
        lp = self.lp[start:end][:, ids.numpy()]
        return lp - np.logaddexp.reduce(lp, axis=1, keepdims=True)


def _coarse(scene, lengths: list[int]):
    """`coarse_pass` over `scene` (100 frames a second, windows of 2.5 s, steps of one
    frame) with its sentences of `lengths` tokens: (spans, skipped, extra)."""
    from types import SimpleNamespace

    import torch

    from aligner.inference.longform import LongFormSettings, coarse_pass

    tokens = []
    for k, n in enumerate(lengths):
        ids = torch.arange(scene.first[k], scene.first[k] + n)
        tokens.append((ids, ["a"] * (n - 1) + ["."]))
    speech = SimpleNamespace(mel_cfg=SimpleNamespace(sample_rate=100, hop_length=1))
    settings = LongFormSettings(window_seconds=2.5, coarse_step=1, min_extra_seconds=0.5)
    return coarse_pass(speech, scene, tokens, ~scene.silent, settings)[:3]


def test_the_coarse_pass_finds_every_sentence_across_windows_and_the_extra_tail():
    """Twelve sentences over several windows (anchored at each kept sentence's end), one
    missing from the audio, speech after the text's last sentence: every other sentence
    at its frames, the missing one passed over, the tail reported."""

    lengths = [6, 5, 7, 6, 5, 6, 7, 5, 6, 6, 5, 7]
    plan = [("pause", 20)]
    for k in range(12):
        if k != 7:
            plan += [("say", k, 8), ("pause", 25)]
    plan += [("noise", 120), ("pause", 10)]
    scene = _Scene(lengths, plan)
    spans, skipped, extra = _coarse(scene, lengths)
    assert spans == scene.truth and skipped == [7]
    tail = scene.truth[11][1] + 25
    assert extra == [(tail, tail + 120)]


def test_a_coarse_step_keeps_a_one_frame_phone_at_half_its_probability(monkeypatch):
    """Frames taken two at a time score each token by the log of its mean probability: a
    token certain on one frame of the two scores log(1/2) there, not the mean of its
    logs (-6 here), so a sentence of short phones costs no more than one of long ones."""
    import aligner.inference.longform as longform

    seen = {}

    def capture(lp, graph, margin, skip, silent, word_penalty, free_start=False):
        seen["lp"] = lp
        return np.zeros(len(lp), int)

    monkeypatch.setattr(longform, "coarse_search", capture)
    frames = np.array([[HIGH, LOW], [LOW, HIGH], [HIGH, LOW], [HIGH, LOW], [LOW, HIGH]])
    graph = SentenceGraph.build([np.array([False, False])])
    settings = longform.LongFormSettings(coarse_step=2)
    path = longform._window_path(frames, graph, np.zeros(5, bool), settings)
    assert len(path) == 5  # the frame left over follows the last step
    probs = np.exp(frames[:4]).reshape(2, 2, 2).mean(1)
    assert seen["lp"] == pytest.approx(np.log(probs))
    assert seen["lp"][0, 1] == pytest.approx(np.log((np.exp(LOW) + np.exp(HIGH)) / 2))
    assert seen["lp"][0, 1] > (LOW + HIGH) / 2 + 5


def _tiers(spec):
    """Words and phones tiers of `spec`: ``[(word, [(phone, seconds), ...]) | ("", pause)]``
    laid end to end from 0 s."""
    words, phones, t = [], [], 0.0
    for word, parts in spec:
        if not word:
            t += parts
            continue
        start = t
        for label, seconds in parts:
            phones.append([round(t, 6), round(t + seconds, 6), label])
            t += seconds
        words.append([round(start, 6), round(t, 6), word])
    return words, phones


def test_longest_phones_are_a_quantile_of_the_lengths_between_phones():
    lengths = [0.05, 0.06, 0.07, 0.08, 0.09, 0.10]
    spec = [("w", [("a", 0.04)] + [x for s in lengths for x in (("m", s), ("a", 0.04))])]
    spec += [("", 0.3), ("z", [("m", 0.5)])]  # alone between pauses: not counted
    _, phones = _tiers(spec)
    longest = longest_phones(phones, quantile=0.5, min_count=5)
    assert longest["m"] == pytest.approx(np.quantile(lengths, 0.5))
    assert "a" in longest and "z" not in longest
    assert "m" not in longest_phones(phones, min_count=7)


def test_a_wrong_words_neighbours_keep_their_phones_usual_length():
    # "some" ends on an m that took the m of the audio the wrong word stands for
    spec = [("some", [("s", 0.1), ("ah", 0.08), ("m", 0.16)]), ("wrong", [("b", 0.3)])]
    spec += [("next", [("n", 0.2), ("eh", 0.1)])]
    words, phones = _tiers(spec)
    wrong = tuple(words[1][:2])
    new = keep_neighbours(words, phones, wrong, {"m": 0.07, "n": 0.05, "b": 0.01})
    assert new == pytest.approx((0.1 + 0.08 + 0.07, wrong[1] + 0.15))
    assert words[0][1] == pytest.approx(new[0]) and words[1][:2] == pytest.approx(list(new))
    assert words[2][0] == pytest.approx(new[1]) and words[2][1] == pytest.approx(0.94)
    assert phones[2][:2] == pytest.approx([0.18, new[0]]) and phones[3][0] == pytest.approx(new[0])
    assert phones[4][0] == pytest.approx(new[1]) and phones[5][0] == pytest.approx(0.84)


def test_a_neighbour_within_its_length_or_across_a_pause_is_left_alone():
    spec = [("some", [("s", 0.1), ("m", 0.06)]), ("wrong", [("b", 0.3)]), ("", 0.2)]
    spec += [("next", [("n", 0.4)])]
    words, phones = _tiers(spec)
    before = [list(w) for w in words], [list(p) for p in phones]
    span = tuple(words[1][:2])
    assert keep_neighbours(words, phones, span, {"m": 0.07, "n": 0.05}) == pytest.approx(span)
    assert (words, phones) == before
    unknown = keep_neighbours(words, phones, span, {})  # no length known: nothing moves
    assert unknown == pytest.approx(span) and (words, phones) == before


@pytest.mark.parametrize("wrong", [0, 2, 3, 5])
def test_a_wrong_word_keeps_its_sentences_span_and_is_no_extra_audio(wrong):
    """Sentence 0 (six one-token words between optional separators, and '.') is said with
    word `wrong` replaced by speech of other sounds (those of a third sentence, not in the
    audio): its span still runs from its first word's audio to its last's, the other
    words on their own frames, and the replaced word's audio is the sentence's, not audio
    the text lacks. At the sentence's edge the filler between sentences and the word
    filler score alike: the replaced word may be either."""
    sentence0 = [False, True] * 5 + [False, True]  # w0 ' ' w1 ... ' ' w5 '.'
    graph = SentenceGraph.build(
        [np.array(sentence0), np.array([False] * 4 + [True])] * 1 + [np.array([False] * 3 + [True])]
    )
    n, other = 21, (17, 18, 19)
    rows, silent, frames = [], [], {}

    def add(token, count, quiet=False):
        for _ in range(count):
            row = np.full(n, LOW)
            row[token] = -1.0 if quiet else HIGH
            rows.append(row), silent.append(quiet)

    add(11, 8, quiet=True)
    for j in range(6):
        frames[j] = len(rows)
        if j == wrong:
            for t in other:
                add(t, 4)
        else:
            add(2 * j, 5)
    add(11, 8, quiet=True)
    start1 = len(rows)
    for t in range(12, 16):
        add(t, 5)
    add(16, 6, quiet=True)
    lp = np.asarray(rows)
    lp -= np.logaddexp.reduce(lp, axis=1, keepdims=True)
    path = coarse_search(lp, graph, silent=np.asarray(silent))
    spans = {s.index: (s.start, s.end) for s in sentence_spans(path, graph, final=True)}
    for j in set(range(6)) - {wrong}:  # every right word on its own frames
        assert (path[frames[j] : frames[j] + 5] == graph.first[0] + 2 * j).all()
    assert spans[1] == (start1, start1 + 20) and spans[2] == (None, None)
    if 0 < wrong < 5:  # inside: the sentence's audio; at an edge the sentence's or extra
        assert spans[0] == (8, frames[5] + 5)
        assert filler_runs(path, graph, ~np.asarray(silent), 5) == []
        covered = set()  # the wrong word's audio stands for it (or for the next word)
        for k, j, a, b in passed_words(path, graph):
            assert k == 0 and j in (wrong, wrong + 1)
            covered |= set(range(a, b))
        assert set(range(frames[wrong], frames[wrong] + 6)) <= covered


def test_speech_running_on_from_a_sentence_is_its_own_up_to_the_first_pause():
    pauses = np.zeros(100, bool)
    pauses[[*range(0, 5), *range(40, 50), *range(70, 80)]] = True
    spans = {0: (5, 30), 1: (50, 60)}
    # after sentence 0 with no pause: its own up to the pause at 40, the rest (none) dropped
    # before sentence 1 with no pause: its own from the pause's end; across a pause: extra
    got, extra = attach_extra(spans, [(30, 40), (80, 95)], pauses, min_frames=5)
    assert got == {0: (5, 40), 1: (50, 60)} and extra == [(80, 95)]
    got, extra = attach_extra(spans, [(45, 50)], pauses, min_frames=3)
    assert got == spans and extra == []  # all of it pause: nothing left to report
    got, extra = attach_extra({0: (5, 30)}, [(30, 60)], pauses, min_frames=5)
    assert got == {0: (5, 40)} and extra == [(50, 60)]  # the rest, past the pause, stays
    assert attach_extra(spans, [(30, 40)], None, 5) == (spans, [(30, 40)])


def test_a_passed_over_word_is_confined_to_its_audio_and_its_audio_to_it():
    """A sentence aligned as an utterance: `a` is likelier than `b` over the first half of
    `b`'s audio (frames 10-19) and takes it; with `b` passed over there by the coarse
    search, `b` gets its frames (within the coarse search's step) and `a` keeps its own."""
    from aligner.alignment.record import UtteranceAlignment, frame_durations
    from aligner.inference.mismatches import CONFINE_FRAMES, confined

    tokens = ["<s>", "a", " ", "b", " ", "c", "</s>"]
    weights = np.full((30, 7), 1e-3)
    weights[:15, 1] = 1.0  # a: its own 10 frames and the first half of b's
    weights[15:20, 3] = 1.0
    weights[20:, 5] = 1.0
    weights /= weights.sum(1, keepdims=True)
    utt = UtteranceAlignment("u", tokens, weights, 30, 1, 256, 22050, kind="phonemes",
                             method="search")  # fmt: skip
    assert frame_durations(utt)[1] == 15  # a stretched over b's first half
    held = frame_durations(confined(utt, [(2, 2, 110, 120)], 100))  # b at 10-20
    assert abs(held[1] - 10) <= CONFINE_FRAMES and abs(held[3] - 10) <= CONFINE_FRAMES
    assert held.sum() == 30 and confined(utt, [], 100) is utt


def test_a_sentence_after_a_long_silence_that_straddles_the_commit_point_is_found_whole():
    """A recording that begins with most of a window of silence: the window commits the
    silence only up to where the first sentence starts, not through its first words."""

    lengths = [6, 5, 7]
    plan = [("pause", 160)]  # the window: 250 frames, committed up to 175
    for k in range(3):
        plan += [("say", k, 8), ("pause", 25)]
    scene = _Scene(lengths, plan)
    spans, skipped, extra = _coarse(scene, lengths)
    assert spans == scene.truth and skipped == [] and extra == []


def test_the_normalization_counts_no_long_silence_inside():
    """A long recording's mel statistics leave out the inside of silences over a second
    (an utterance keeps a quarter second at its edges): 20 s of digital silence before
    the speech would otherwise set every bin's mean."""
    import torch

    from aligner.inference.long_recording import ordinary_frames
    from aligner.models.alignment import utterance_normalize

    pauses = np.array([True] * 12 + [False] * 5 + [True] * 3 + [False] * 4 + [True] * 9)
    kept = ordinary_frames(pauses, long=4)
    expected = np.ones(len(pauses), bool)
    expected[1:11] = False  # the first 12-frame pause but one frame at each end
    expected[25:32] = False
    assert (kept == expected).all() and ordinary_frames(None, 4) is None
    mel = torch.randn(1, len(pauses), 3)
    mask = torch.ones(1, len(pauses), dtype=torch.bool)
    counted = torch.from_numpy(kept)[None]
    out = utterance_normalize(mel, mask, counted=counted)
    assert torch.allclose(out[0, kept].mean(0), torch.zeros(3), atol=1e-5)
    assert out[0, ~kept].abs().sum() > 0  # every frame normalized, not zeroed
    assert torch.equal(utterance_normalize(mel, mask, counted=mask), utterance_normalize(mel, mask))


def test_the_word_margin_grows_with_the_recordings_own_evidence():
    """Noise raises every word's evidence against it alike: the margin is the floor, or
    seven times the recording's median where that is more, so a clean recording keeps the
    floor and a noisy one flags only the words far beyond its others."""
    from aligner.inference.mismatches import word_margin

    assert word_margin([-10.0] * 20 + [-150.0], 100.0) == 100.0  # clean: the floor
    assert word_margin([-40.0] * 20 + [-600.0], 100.0) == pytest.approx(280.0)
    assert word_margin([-40.0] * 3, 0.0) == 0.0 and word_margin([], 100.0) == 100.0  # off; none


def test_a_wrong_edge_word_takes_the_extra_audio_beyond_a_short_pause():
    """Sentence 0's last word unlike its audio, speech the text lacks 5 frames after it:
    the speech is the word's, the span takes it in; not past a longer pause, a longer run,
    another sentence, or for a word that is fine. A wrong first word takes the run before."""
    spans, extra = {0: (10, 50), 1: (80, 120)}, [(55, 70)]
    got, left, held = hold_edge_words(spans, extra, {0: [(7, 9, True)]}, 10, 30)
    assert got == {0: (10, 70), 1: (80, 120)} and left == [] and held == {0: [(7, 9, 55, 70)]}
    assert spans == {0: (10, 50), 1: (80, 120)} and extra == [(55, 70)]  # not changed
    for pause, run in ((4, 30), (10, 14)):
        assert hold_edge_words(spans, extra, {0: [(7, 9, True)]}, pause, run) == (spans, extra, {})
    assert hold_edge_words(spans, extra, {}, 10, 30) == (spans, extra, {})
    between = {0: (10, 50), 2: (51, 54)}
    assert hold_edge_words(between, extra, {0: [(7, 9, True)]}, 10, 30)[2] == {}
    got, left, held = hold_edge_words(spans, [(72, 78)], {1: [(0, 2, False)]}, 10, 30)
    assert got[1] == (72, 120) and left == [] and held == {1: [(0, 2, 72, 78)]}
    one = {1: [(0, 2, False), (0, 2, True)]}  # one word, both edges: held once
    got, left, held = hold_edge_words(spans, [(72, 78), (125, 130)], one, 10, 30)
    assert held == {1: [(0, 2, 72, 78)]} and left == [(125, 130)]


def test_the_edge_words_unlike_their_audio_are_a_sentences_first_and_last():
    from aligner.inference.mismatches import edge_words

    tokens = ["<s>", "a", "b", " ", "c", " ", "d", ".", "</s>"]
    assert edge_words(tokens, [-200.0, -300.0, -1.0], 100.0) == [(0, 1, False)]
    assert edge_words(tokens, [-1.0, -300.0, -200.0], 100.0) == [(5, 5, True)]
    assert edge_words(["<s>", "a", "</s>"], [-200.0], 100.0) == [(0, 0, False), (0, 0, True)]
    assert edge_words(tokens, [-1.0, -1.0, -1.0], 100.0) == []


def test_the_frame_scorer_window_by_window_is_the_encoder_over_the_whole_recording():
    """The mel encoder run over a window's frames and the frames its kernels see beside
    them gives those frames what it gives over the whole recording, at the edges too."""
    from types import SimpleNamespace

    import torch

    from aligner.inference.longform import FrameScorer
    from aligner.models.alignment import AlignerConfig, AlignmentModel, utterance_normalize

    torch.manual_seed(0)
    kernels = [5, 3, 1]
    cfg = AlignerConfig(
        n_symbols=12, n_mels=8, channels=16, attn_dim=8, mel_kernels=kernels, mel_norm="utterance"
    )
    model = AlignmentModel(cfg).eval()
    mel = torch.randn(90, 8)
    scorer = FrameScorer(SimpleNamespace(model=model, device=torch.device("cpu")), mel)
    mask = torch.ones(1, 90, dtype=torch.bool)
    with torch.no_grad():
        whole = model.mel_encoder(utterance_normalize(mel[None], mask), mask)
    for start, end in ((0, 90), (0, 7), (40, 41), (33, 62), (85, 90)):
        torch.testing.assert_close(scorer.queries(start, end), whole[:, start:end])


def test_a_word_unlike_its_audio_as_a_filler_leaves_its_neighbour_its_own_frames():
    """The wrong word `b` is said as a sound like `d`'s, two words on: over its frames `a`
    is a little likelier than `b`, both far less likely than `d`. Aligned on its tokens,
    `a` stretches over `b`'s audio; with `b` weighted as a filler (the best token's weight,
    2 nats down), `b` takes the frames `a` explains no better than that, `a` keeps its own,
    and a neighbour that explains `b`'s audio best (`c` there) keeps it."""
    from aligner.alignment.record import UtteranceAlignment, frame_durations
    from aligner.inference.mismatches import as_filler

    tokens = ["<s>", "a", " ", "b", " ", "c", " ", "d", ".", "</s>"]
    weights = np.full((40, 10), 1e-3)
    for token, frames in ((1, slice(0, 10)), (5, slice(20, 30)), (7, slice(30, 40))):
        weights[frames, token] = 1.0  # a, c, d: their own 10 frames
    weights[10:20, [1, 3, 7]] = [0.03, 0.02, 0.5]  # b's audio: a sound like d's
    weights /= weights.sum(1, keepdims=True)
    utt = UtteranceAlignment("u", tokens, weights, 40, 1, 256, 22050, kind="phonemes",
                             method="search")  # fmt: skip
    assert frame_durations(utt)[1] > 15  # a stretched over b's audio
    assert frame_durations(as_filler(utt, [1], 2.0))[[1, 3, 5, 7]].tolist() == [10, 10, 10, 10]
    weights[10:20, 5] = 0.6  # b's audio likeliest on its neighbour c: c's, filler or not
    utt = dataclasses.replace(utt, weights=weights / weights.sum(1, keepdims=True))
    assert frame_durations(as_filler(utt, [1], 2.0))[5] > 15


def _speech_then_tone(rng: np.random.Generator, frames: int = 600, tone: tuple = (150, 350)):
    """A log-mel (T, 20) whose spectrum changes every 5-10 frames (phones), with a
    sustained tone over frames `tone` and silence (pause frames) over 450-470."""
    mel, t = np.zeros((frames, 20)), 0
    while t < frames:
        n = int(rng.integers(5, 11))
        mel[t : t + n] = rng.standard_normal(20)
        t += n
    mel += 0.05 * rng.standard_normal(mel.shape)
    held = tone[1] - tone[0]
    mel[tone[0] : tone[1]] = rng.standard_normal(20) + 0.05 * rng.standard_normal((held, 20))
    sound = np.ones(frames, bool)
    sound[450:470] = False
    return mel, sound


def _words_scene(said: list[int], per: int = 4, pause_first: bool = True):
    """Two sentences of words of two tokens each between optional separators (3 words, then
    4), and log-probs (T, N) of audio that says the tokens `said` in order, `per` frames
    each, after a pause (or none: `pause_first`)."""
    opts = [np.array(([False, False, True] * n)[:-1] + [True]) for n in (3, 4)]
    graph = SentenceGraph.build(opts)
    n = sum(len(o) for o in opts)
    rows = []
    for token in [None] * (6 if pause_first else 0) + said:
        row = np.full(n, LOW)
        if token is None:  # a pause: the sentence ends are likely
            row[[8, 20]] = -1.0
        else:
            row[token] = HIGH
        rows.extend([row] * per)
    lp = np.asarray(rows)
    return lp - np.logaddexp.reduce(lp, axis=1, keepdims=True), graph


@pytest.mark.parametrize(
    "said, expected",
    [
        ([9, 10, 12, 13, 15], (1, 3)),  # the second sentence's first two words and a bit
        ([9, 10, 12], (1, 2)),  # its first word and the first sound of the second
        ([9, 10, 12, 13, 15, 16, 18, 19], None),  # all of it: no cut
        ([9, 10, 12, 13, 15, 16, 18], None),  # cut in its last word: not known
    ],
)
def test_a_recording_that_stops_inside_a_sentence_says_how_many_of_its_words(said, expected):
    said = [0, 1, 3, 4, 6, 7] + said  # the first sentence whole
    lp, graph = _words_scene(said)
    path = coarse_search(lp, graph)
    assert words_reached(path, graph) == expected


def test_a_path_that_ends_between_sentences_reached_every_word():
    lp, graph = _words_scene([0, 1, 3, 4, 6, 7])
    path = coarse_search(lp, graph)
    assert words_reached(path, graph) is None
    assert words_reached(np.zeros(0, np.int64), graph) is None


@pytest.mark.parametrize(
    "said, expected",
    [
        ([3, 4, 6, 7], 1),  # the first sentence's last two words
        ([4, 6, 7], 1),  # the second word cut: its last sound, then the third
        ([6, 7], 2),  # its last word alone
        ([0, 1, 3, 4, 6, 7], None),  # all of it
        ([1, 3, 4, 6, 7], None),  # cut in its first word: not known
    ],
)
def test_a_recording_that_begins_inside_a_sentence_says_how_many_of_its_words_it_lacks(
    said, expected
):
    """With a free start the search begins where the audio does; without one it squeezes
    the words the audio lacks into its first frames (or passes over one at a penalty)."""
    lp, graph = _words_scene(said + [9, 10, 12, 13, 15, 16, 18, 19], pause_first=False)
    path = coarse_search(lp, graph, free_start=True)
    assert words_missed(path, graph) == expected
    assert words_missed(coarse_search(lp, graph), graph) is None
    if expected is not None:  # the rest of the recording aligns as with the whole text
        second = path[len(said) * 4 :]
        assert graph.sentence[second[-1]] == 1


def test_a_sustained_tone_is_steady_sound_and_changing_phones_are_not():
    mel, sound = _speech_then_tone(np.random.default_rng(0))
    steady = steady_sound(mel, sound, 0.0116)
    assert steady[200:300].all()  # the tone, but for the half second beside its edges
    assert not steady[:110].any() and not steady[390:].any()
    assert not steady[~sound].any()  # a pause is a pause, not steady sound
    # the same spectra, louder or shifted, change as fast: the measure is relative
    assert (steady_sound(3 * mel + 2, sound, 0.0116) == steady).all()


def test_no_sound_or_speech_alone_is_never_steady():
    rng = np.random.default_rng(1)
    mel, sound = _speech_then_tone(rng, tone=(0, 0))
    assert not steady_sound(mel, sound, 0.0116).any()
    assert not steady_sound(mel, np.zeros(len(mel), bool), 0.0116).any()
    assert len(steady_sound(mel[:0], sound[:0], 0.0116)) == 0
    # a recording shorter than the half second either side: one value a frame
    assert steady_sound(mel[:9], np.ones(9, bool), 0.0116).shape == (9,)
