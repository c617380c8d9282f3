"""The CTC phone recognizer's network (`aligner.models.recognizer`): shapes, a batch decodes
as its items one by one, greedy decoding against the collapse written out by hand."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.config import ConfigError
from aligner.models.recognizer import BLANK, CTCRecognizer, RecognizerConfig, greedy_decode


def model(**kw) -> CTCRecognizer:
    cfg = dict(n_mels=12, n_symbols=9, channels=16, rnn_dim=8, conv_layers=1, rnn_layers=1)
    cfg.update(kw)
    return CTCRecognizer(RecognizerConfig.from_dict(cfg)).eval()


@pytest.mark.parametrize("subsample", [1, 2, 3])
def test_shapes_and_probabilities(subsample: int) -> None:
    net = model(subsample=subsample)
    mel, lengths = torch.randn(3, 25, 12), torch.tensor([25, 17, 4])
    log_probs, out = net(mel, lengths)
    assert log_probs.shape == (3, math.ceil(25 / subsample), 9)
    assert out.tolist() == [math.ceil(n / subsample) for n in (25, 17, 4)]
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(3, log_probs.size(1)))


@pytest.mark.parametrize(
    "kw",
    [
        {"subsample": 2},
        {"subsample": 3, "rnn_layers": 0, "conv_layers": 2},
        {"mel_norm": "global", "rnn_layers": 2},
    ],
    ids=["gru", "conv-only", "global-norm"],
)
def test_a_batch_decodes_as_its_items_one_by_one(kw) -> None:
    """Padding changes nothing: each item's log-probabilities over its own frames are the
    same in a padded batch as alone (eval mode)."""
    net = model(**kw)
    lengths = [31, 8, 20, 13]
    mels = [torch.randn(n, 12) * 2 + 1 for n in lengths]
    batch = torch.nn.utils.rnn.pad_sequence(mels, batch_first=True, padding_value=7.0)
    with torch.no_grad():
        log_probs, out = net(batch, torch.tensor(lengths))
        for i, mel in enumerate(mels):
            alone, n = net(mel[None], torch.tensor([len(mel)]))
            assert int(out[i]) == int(n[0])
            torch.testing.assert_close(log_probs[i, : int(n[0])], alone[0], atol=1e-5, rtol=1e-4)


def collapse(path: list[int]) -> list[int]:
    """CTC's many-to-one map by the book: merge runs, then drop blanks."""
    return [k for k, _ in itertools.groupby(path) if k != BLANK]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 4), min_size=0, max_size=12), min_size=1, max_size=4),
    st.data(),
)
def test_greedy_decoding_is_the_collapse_of_the_best_path(paths, data) -> None:
    width = max(len(p) for p in paths) or 1
    scores = torch.randn(len(paths), width, 5)
    for b, path in enumerate(paths):
        for t, k in enumerate(path):
            scores[b, t, k] = 10.0  # the best symbol of frame t
    lengths = torch.tensor([len(p) for p in paths])
    assert greedy_decode(scores.log_softmax(-1), lengths) == [collapse(p) for p in paths]
    # frames past an item's length do not count, whatever they hold
    cut = [data.draw(st.integers(0, len(p))) for p in paths]
    assert greedy_decode(scores, torch.tensor(cut)) == [collapse(p[:c]) for p, c in zip(paths, cut)]


def test_a_bad_config_is_one_line() -> None:
    with pytest.raises(ConfigError, match="unknown key model.chanels"):
        RecognizerConfig.from_dict({"n_symbols": 5, "chanels": 3})
    with pytest.raises(ConfigError, match="model.mel_norm"):
        RecognizerConfig.from_dict({"n_symbols": 5, "mel_norm": "batch"})
    with pytest.raises(ConfigError, match="subsample >= 1"):
        RecognizerConfig.from_dict({"n_symbols": 5, "subsample": 0})


def test_from_symbols_rebuilds_the_same_network() -> None:
    net = model(subsample=2)
    again = CTCRecognizer.from_symbols({"model": net.config.to_dict()}, net.state_dict()).eval()
    mel = torch.randn(1, 9, 12)
    torch.testing.assert_close(net(mel, torch.tensor([9]))[0], again(mel, torch.tensor([9]))[0])
