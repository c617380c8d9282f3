"""The G2P/NMT task: metrics, loss, validation and TensorBoard figures."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import torchaudio.functional as AF
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.config import ExperimentConfig
from aligner.data.collate import length_batches, pad
from aligner.tasks.text import build, token_losses
from aligner.text.metrics import corpus_bleu, edit_distance, g2p_error_rates
from aligner.text.splitting import display_label, join_tokens, splitter

TINY = {
    "emb_dim": 16,
    "enc_hidden": 24,
    "dec_hidden": 32,
    "attn_dim": 16,
    "out_dim": 24,
    "dropout": 0.0,
    "label_smoothing": 0.1,
    "plot_items": 2,
}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=7), st.lists(st.sampled_from("abc"), max_size=7))
def test_edit_distance_matches_torchaudio(a, b):
    assert edit_distance(a, b) == AF.edit_distance(a, b)


def test_g2p_error_rates_use_any_reference_and_the_closest_for_per():
    refs = {
        "read": [["R", "IY1", "D"], ["R", "EH1", "D"]],
        "cat": [["K", "AE1", "T"]],
        "tomato": [["T", "AH0", "M", "EY1", "T", "OW2"], ["T", "AH0", "M", "AA1", "T", "OW2"]],
    }
    hyps = {
        "read": ["R", "EH1", "D"],  # equals the second reference: correct
        "cat": ["K", "AH0", "T"],  # one substitution
        "tomato": ["T", "AH0", "M", "AA1", "T"],  # one deletion from the closest reference
    }
    per, wer = g2p_error_rates(hyps, refs)
    assert per == pytest.approx(2 / (3 + 3 + 6))
    assert wer == pytest.approx(2 / 3)


def test_label_smoothed_loss_equals_torch_cross_entropy():
    logits = torch.randn(3, 5, 7)
    target = torch.randint(1, 7, (3, 5))
    target[0, 3:] = 0
    target[2, 1:] = 0
    log_probs = logits.log_softmax(-1)
    smoothed, nll = token_losses(log_probs, target, 0.2)
    flat = logits.reshape(-1, 7), target.reshape(-1)
    expected = F.cross_entropy(*flat, ignore_index=0, label_smoothing=0.2)
    torch.testing.assert_close(smoothed, expected)
    torch.testing.assert_close(nll, F.cross_entropy(*flat, ignore_index=0))


def test_bleu_and_splitters():
    assert corpus_bleu(["the cat sat on the mat ."], ["the cat sat on the mat."]) == pytest.approx(
        100
    )
    assert splitter("tokens", lowercase=True)("Hello, World!") == ["▁hello", ",", "▁world", "!"]
    assert splitter("chars")("ab") == ["a", "b"]
    tokens = splitter("tokens")("I don't know, Tom.")
    assert tokens == ["▁I", "▁don", "'", "t", "▁know", ",", "▁Tom", "."]
    assert join_tokens(tokens, "tokens") == "I don't know, Tom."
    assert join_tokens(["▁le", "<unk>", "▁voit", "."], "tokens") == "le <unk> voit."
    # a perfect translation scores 100 against the untouched reference
    assert corpus_bleu([join_tokens(tokens, "tokens")], ["I don't know, Tom."]) == pytest.approx(
        100
    )


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab é,.'!-?\t\n")), max_size=40))
def test_token_split_gives_the_text_back(text):
    """`tokens` loses nothing but runs of whitespace: join(split(t)) == normalized t."""
    for kind in ("tokens", "words"):
        assert join_tokens(splitter(kind)(text), kind) == " ".join(text.split())
    assert join_tokens(splitter("chars")(text), "chars") == text


def test_alignment_plot_labels_drop_the_space_mark():
    import matplotlib.pyplot as plt

    from aligner.attention.plot import text_alignment_figure

    src = [display_label(t) for t in splitter("tokens")("I don't know.")]
    out = [display_label(t) for t in ["▁Je", "▁sais", "▁"]]
    fig = text_alignment_figure(torch.full((3, len(src)), 0.2), src, out)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["I", "don", "'", "t", "know", "."]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Je", "sais", "▁"]
    plt.close(fig)


class Recorder:
    enabled = True

    def __init__(self):
        self.images = []

    def image(self, tag, image, step):
        assert image.ndim == 3 and image.shape[2] == 3 and image.dtype.name == "uint8"
        self.images.append((tag, step))


def g2p_task(folder, **model):
    cfg = ExperimentConfig(task="g2p", model={**TINY, **model}, data={"lowercase": True})
    return build(cfg, folder)


def test_task_builds_tables_validates_and_plots_fixed_items(g2p_dir):
    task = g2p_task(g2p_dir)
    assert task.src_table.symbols[4:] and set(task.src_table.symbols[4:]) <= set("abcdeot")
    assert "AH0" in task.tgt_table.symbols  # lowercase folds the source only
    assert task.symbols["task"] == "g2p" and task.symbols["tgt"]["symbols"]
    batch = task.collate([task.train_set[i] for i in range(4)])
    loss, parts = task.loss(task.model, batch, 0)
    assert loss.requires_grad and parts["nll"] > 0
    logger = Recorder()
    valid = [task.collate([task.valid_set[i] for i in range(len(task.valid_set))])]
    task.model.eval()
    metrics = task.validate(task.model, valid, 10, logger)
    assert set(metrics) == {"loss", "per", "wer"}
    assert 0 <= metrics["per"] and 0 <= metrics["wer"] <= 100
    task.validate(task.model, valid, 20, logger)
    tags = [t for t, _ in logger.images]
    assert len(tags) == 4 and tags[:2] == tags[2:]  # the same items every time


@pytest.mark.slow
def test_g2p_model_learns_the_synthetic_mapping(g2p_dir):
    torch.manual_seed(0)
    task = g2p_task(g2p_dir, label_smoothing=0.0)
    optim = torch.optim.Adam(task.model.parameters(), lr=1e-2)
    loader = torch.utils.data.DataLoader(task.train_set, 50, shuffle=True, collate_fn=task.collate)
    for _ in range(25):
        for batch in loader:
            loss, _ = task.loss(task.model, batch, 0)
            optim.zero_grad()
            loss.backward()
            optim.step()
    task.model.eval()
    valid = [task.collate([task.valid_set[i] for i in range(len(task.valid_set))])]
    metrics = task.validate(task.model, valid, 0, None)
    # 12 valid words, one with two pronunciations: it counts once, right if it matches either.
    assert metrics["wer"] <= 100 * 2 / 12
    assert metrics["per"] < 10


def test_missing_manifest_and_bad_config_are_named(tmp_path, g2p_dir):
    with pytest.raises(FileNotFoundError, match="train manifest"):
        build(ExperimentConfig(task="g2p"), tmp_path)
    from aligner.config import ConfigError

    with pytest.raises(ConfigError, match="model.hidden"):
        build(ExperimentConfig(task="g2p", model={"hidden": 3}), g2p_dir)


def test_nmt_validation_bleu_scores_against_the_manifest_text_not_unk_ids(tmp_path):
    """A model that writes back exactly the token ids of the references scores 100 on
    the sentences whose words it knows, and less where a rare word became <unk>."""
    from types import SimpleNamespace

    from .conftest import write_jsonl

    known = [("A dog eats.", "Un chien mange."), ("The cat sees a dog.", "Le chat voit un chien.")]
    train = [{"id": f"t{i}", "source": s, "target": t} for i, (s, t) in enumerate(known * 2)]
    folder = tmp_path / "nmt"
    folder.mkdir()
    write_jsonl(folder / "train.jsonl", train)
    data = {"src_split": "tokens", "tgt_split": "tokens", "min_freq": 2}
    cfg = ExperimentConfig(task="nmt", model={**TINY, "decoder": "luong"}, data=data)

    def bleu_of(valid_pairs):
        items = [{"id": f"v{i}", "source": s, "target": t} for i, (s, t) in enumerate(valid_pairs)]
        write_jsonl(folder / "valid.jsonl", items)
        task = build(cfg, folder)
        batch = task.collate([task.valid_set[i] for i in range(len(task.valid_set))])
        echo = [
            [SimpleNamespace(tokens=batch["tgt_out"][i, : int(n) - 1].tolist())]
            for i, n in enumerate(batch["tgt_lengths"])
        ]
        task._decode = lambda model, src, lengths: echo
        return task.validate(task.model.eval(), [batch], 0, None)["bleu"]

    assert bleu_of(known) == pytest.approx(100)
    assert bleu_of([("The horse eats.", "Le cheval mange.")]) < 60  # cheval -> <unk>


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.integers(1, 9), min_size=1, max_size=7), max_size=20),
    st.integers(1, 6),
)
def test_length_batches_cover_every_input_once_shortest_first(encoded, size):
    batches = [
        (chunk, *pad([torch.tensor(encoded[i]) for i in chunk], 0)[:2])
        for chunk in length_batches([len(x) for x in encoded], size)
    ]
    seen = [i for chunk, _, _ in batches for i in chunk]
    assert sorted(seen) == list(range(len(encoded)))
    assert [len(encoded[i]) for i in seen] == sorted(len(x) for x in encoded)
    for chunk, src, lengths in batches:
        assert 1 <= len(chunk) <= size and src.shape == (len(chunk), max(lengths).item())
        for row, i, n in zip(src.tolist(), chunk, lengths.tolist()):
            assert n == len(encoded[i]) and row == encoded[i] + [0] * (src.shape[1] - n)


def test_length_batches_refuse_a_batch_size_below_one():
    with pytest.raises(ValueError, match="batch size"):
        length_batches([1], 0)
