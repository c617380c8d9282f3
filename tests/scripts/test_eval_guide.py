"""scripts/eval_guide.py: the long sentences and the long-form failure count, on a tiny
randomly initialised TTS checkpoint whose stop logit never fires (every decode runs to the
length limit, so every one is a "no end" failure, and the counts are known)."""

from __future__ import annotations

import eval_guide
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention.metrics import alignment_metrics
from tests.cli.test_speech_cli import make_checkpoint


@pytest.fixture(scope="module")
def tts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guide")
    ckpt = make_checkpoint(tmp, "tts", window=[0, 1])
    return ckpt, tmp / "data_tts" / "test.jsonl"


def test_long_sentences_join_two_to_four_and_repeat_with_the_seed(tts, tmp_path):
    _, manifest = tts
    texts = eval_guide.long_sentences(manifest, 6, seed=3)
    assert [k for k, _ in texts] == [2, 3, 3, 2, 3, 3]  # the tiny corpus has three texts
    for k, text in texts:
        assert text.count(", ") >= k - 1 and text.endswith(".")
    assert texts == eval_guide.long_sentences(manifest, 6, seed=3)
    one = tmp_path / "one.jsonl"
    one.write_text('{"id": "a", "audio": "a.wav", "text": "just one."}\n')
    with pytest.raises(SystemExit, match="2 or more texts"):
        eval_guide.long_sentences(one, 2)


@pytest.mark.parametrize(
    "window, used", [(None, None), ((0, 2), (0, 2)), ("recipe", (0, 1))]
)  # the checkpoint's recipe names [0, 1]
def test_long_form_counts_every_decode_of_every_seed(tts, window, used):
    ckpt, manifest = tts
    texts = eval_guide.long_sentences(manifest, 3)
    out = eval_guide.long_form(ckpt, texts, seeds=(0, 1), window=window)
    assert out["window"] == used
    if used is not None:
        assert not out["backward_moves"] and not out["repeat"]  # the window allows none
    assert out["sentences"] == 6
    assert out["no_end"] == 6 and out["failed"] == 6  # never stops: each decode fails
    assert 0 <= out["skip"] <= 6 and 0 <= out["repeat"] <= 6
    assert len({(t["sentence"], t["seed"]) for t in out["skipped_tokens"]}) == out["skip"]


@given(st.integers(0, 2**31 - 1), st.integers(1, 12), st.integers(2, 9), st.sampled_from([1, 4]))
@settings(max_examples=40, deadline=None)
def test_skipped_detail_lists_what_the_core_counts_as_skipped(seed, steps, n, r):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(steps, n, generator=g) * 4
    weights = torch.softmax(logits, 1)
    required = torch.rand(n, generator=g) < 0.8
    tokens = [f"t{i}" for i in range(n)]
    lengths = torch.tensor([steps]), torch.tensor([n])
    core = alignment_metrics(weights[None], *lengths, required[None], r)["skipped"][0]
    detail = eval_guide.skipped_detail(weights, required, tokens, 3, 7, r)
    assert len(detail) == int(core)
    for d in detail:
        i = tokens.index(d["token"])
        assert bool(required[i]) and d["weight"] == pytest.approx(
            float(weights[:, i].sum()), abs=1e-3
        )
        assert (d["sentence"], d["seed"]) == (3, 7) and f"[t{i}]" in d["context"]


def test_window_option_is_parsed_and_reaches_the_decodes(tts, monkeypatch, capsys):
    ckpt, manifest = tts
    seen = {}

    def fake_long_form(path, sentences, seeds, window):
        seen.update(seeds=list(seeds), window=window, n=len(sentences))
        return {"sentences": 0, "failed": 0, "skip": 0, "repeat": 0, "no_end": 0}

    monkeypatch.setattr(eval_guide, "long_form", fake_long_form)
    monkeypatch.setattr(eval_guide, "checkpoints", lambda exp, last: [ckpt])
    data = manifest.parent
    args = [str(data), "--data", str(data), "--no-boundaries", "--quality", "0"]
    assert eval_guide.main(args + ["--long", "4", "--seed", "1", "2", "--window", "0,2"]) == 0
    assert seen == {"seeds": [1, 2], "window": (0, 2), "n": 4}
    assert eval_guide.main(args + ["--long", "2", "--window", "none"]) == 0
    assert seen["window"] is None
    assert eval_guide.main(args + ["--long", "2"]) == 0  # as aligner synthesize: the recipe's
    assert seen["window"] == "recipe"


@pytest.mark.parametrize("bad", ["2", "a,b", "1,2,3", "-1,2"])
def test_a_bad_window_is_one_line(bad, capsys):
    with pytest.raises(SystemExit) as err:
        eval_guide.main(["x", "--data", "x", "--window", bad])
    assert err.value.code == 2
    assert "--window" in capsys.readouterr().err


def test_backward_moves_of_a_hand_made_path():
    steps = [0, 1, 2, 1, 0, 2, 3, 3, 2, 4]  # back two tokens for two steps, then one for one
    weights = torch.full((len(steps), 5), 0.1)
    weights[torch.arange(len(steps)), torch.tensor(steps)] = 0.6
    moves = eval_guide.backward_moves(weights, list("abcde"), 2, 5)
    assert [(m["step"], m["from"], m["to"], m["tokens_back"], m["steps"]) for m in moves] == [
        (3, "c", "a", 2, 2),
        (8, "d", "c", 1, 1),
    ]
    assert moves[0]["context"] == "abc" and moves[0]["top_weight"] == pytest.approx(0.6)
    assert (moves[0]["sentence"], moves[0]["seed"]) == (2, 5)


@given(st.integers(0, 2**31 - 1), st.integers(1, 12), st.integers(2, 9))
@settings(max_examples=60, deadline=None)
def test_every_repeat_the_core_counts_has_a_backward_move(seed, steps, n):
    g = torch.Generator().manual_seed(seed)
    weights = torch.softmax(torch.randn(steps, n, generator=g) * 3, 1)
    lengths = torch.tensor([steps]), torch.tensor([n])
    repeated = int(alignment_metrics(weights[None], *lengths)["repeated"][0])
    moves = eval_guide.backward_moves(weights, [f"t{i}" for i in range(n)], 0, 0)
    assert repeated == 0 or moves
    assert all(m["tokens_back"] >= 1 and m["steps"] >= 1 for m in moves)
    assert sum(m["steps"] for m in moves) <= steps - 1


def test_synthesis_quality_writes_each_text_and_scores_its_spoken_timing(tts, tmp_path):
    import soundfile as sf

    from aligner.data.manifest import read_manifest

    ckpt, manifest = tts
    out = eval_guide.synthesis_quality(ckpt, manifest, 2, window=None, audio_dir=tmp_path / "a")
    items = read_manifest(manifest)[:2]
    assert out["items"] == 2 and out["mel_distortion_db"] > 0
    for item in items:
        audio, rate = sf.read(tmp_path / "a" / f"{item['id']}.wav")
        assert len(audio) > 0
    timed = any(item.get("timings") for item in items)
    assert (out["spoken_words_ms"] is not None) == timed
    if timed:
        assert out["spoken_words_ms"] >= 0
