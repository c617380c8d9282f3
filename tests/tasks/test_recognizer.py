"""The recognizer task (``task: recognize``, family ``ctc_recognizer``): targets are the
sounds of the text, the CTC loss, validation PER and figures, the checkpoint's symbols
rebuild the runtime model."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aligner.config import ConfigError, ExperimentConfig
from aligner.families import role
from aligner.inference.recognizer import PhoneRecognizer
from aligner.models.recognizer import greedy_decode
from aligner.tasks import build_task
from aligner.tasks.recognizer import SpecAugment
from aligner.train.evolution import image_tags
from aligner.train.tensorboard import Logger

from .speech_corpus import MEL, TEXTS, make_corpus


def _cfg(**model) -> ExperimentConfig:
    section = {"channels": 16, "conv_layers": 1, "rnn_layers": 1, "rnn_dim": 8, **model}
    data = {"mel": MEL, "tokenizer": "chars", "log": {"plot_items": 2}}
    return ExperimentConfig.from_dict({"task": "recognize", "data": data, "model": section})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("recognize"))


def test_the_targets_are_the_sounds_and_the_loss_trains(corpus: Path) -> None:
    cfg = _cfg(spec_augment={"freq_masks": 1, "time_masks": 1})
    assert cfg.family == "ctc_recognizer"
    task = build_task(cfg, corpus)
    batch = task.collate([task.train_set[i] for i in range(4)])
    table = task.corpus.table
    for i, text in enumerate(TEXTS[:4]):  # no spaces, no </s>: the letters alone
        n = int(batch["target_lengths"][i])
        assert table.decode(batch["targets"][i, :n].tolist()) == list(text.replace(" ", ""))
    loss, parts = task.loss(task.model, batch, step=1)
    loss.backward()
    assert torch.isfinite(loss) and parts["ctc"] == pytest.approx(float(loss.detach()))
    optimizer = torch.optim.Adam(task.model.parameters(), lr=0.01)
    for step in range(30):
        optimizer.zero_grad()
        task.loss(task.model, batch, step)[0].backward()
        optimizer.step()
    assert task.loss(task.model, batch, 30)[0] < 0.7 * loss


def test_spec_augment_masks_within_the_item() -> None:
    torch.manual_seed(1)
    mel = torch.ones(2, 30, 8)
    out = SpecAugment(freq_masks=1, freq_width=3, time_masks=2, time_width=5)(
        mel, torch.tensor([30, 12])
    )
    assert torch.equal(mel, torch.ones(2, 30, 8))  # a copy
    zero_frames = (out == 0).all(-1)
    assert not zero_frames[1, 12:].any()  # nothing masked past the item's length
    assert (out == 0).any() and (out != 0).any()


def test_validation_and_the_runtime_model(corpus: Path, tmp_path: Path) -> None:
    task = build_task(_cfg(), corpus)
    task.model.eval()
    batches = [task.collate([task.valid_set[i] for i in range(2)])]
    logger = Logger(tmp_path / "tb")
    metrics = task.validate(task.model, batches, step=3, logger=logger)
    logger.close()
    assert metrics["loss"] > 0 and 0 <= metrics["per"] <= 100 * 6  # edits may exceed length
    assert {"posteriors/u4", "posteriors/u5"} <= set(image_tags(tmp_path / "tb"))
    assert task.symbols["task"] == "recognize"

    found = role("ctc_recognizer", "recognize")
    ckpt = {"model": task.model.state_dict(), "symbols": task.symbols, "step": 7}
    model = PhoneRecognizer.from_checkpoint(ckpt, tmp_path / "x.pt", found)
    assert model.reference("a cab.") == ["a", "c", "a", "b"]
    item = task.valid_set.items[0]
    wav = model.load(item["audio"])
    hyp = model.recognize([wav, wav[:800]], batch_size=1)
    assert len(hyp) == 2 and all(s in model.symbols for s in hyp[0])
    with torch.no_grad():
        mel = task.valid_set[0]["mel"]
        log_probs, lengths = task.model(mel[None], torch.tensor([len(mel)]))
    assert hyp[0] == model.symbols.decode(greedy_decode(log_probs, lengths)[0])


def test_a_bad_recipe_key_is_one_line(corpus: Path) -> None:
    with pytest.raises(ConfigError, match="model.spec_augment.time_mask"):
        build_task(_cfg(spec_augment={"time_mask": 1}), corpus)
    with pytest.raises(ConfigError, match="model.n_mels"):
        build_task(_cfg(n_mels=3), corpus)
