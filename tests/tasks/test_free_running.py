"""Free-running synthesis at validation: fixed sentences not in the training data, their
figures in TensorBoard, infer/... metrics, and the texts on the Text dashboard."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from aligner.config import ExperimentConfig
from aligner.tasks import build_task
from aligner.train.tensorboard import Logger

from .speech_corpus import MEL, TEXTS, TINY_MODEL, make_corpus


def _cfg(task: str = "tts", **log) -> ExperimentConfig:
    section = copy.deepcopy(TINY_MODEL)
    if task == "tts":
        section["encoder"] = {"embed_dim": 16, "out_dim": 16}
    else:
        section["encoder"] = {"prenet_dims": [16], "conv_dim": 16, "out_dim": 16}
    log = {"plot_items": 1, "griffin_lim_iters": 2, "infer_max_steps": 12, **log}
    data = {"mel": MEL, "log": log}
    return ExperimentConfig.from_dict({"task": task, "data": data, "model": section})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_corpus(tmp_path_factory.mktemp("free"), parallel=True)


def test_tts_free_running_is_logged(corpus: Path, tmp_path: Path) -> None:
    texts = [TEXTS[0], "a dead bee", "zz\u4e2d", "bead a face"]  # a training text, a new
    task = build_task(_cfg(infer_texts=texts), corpus)  # one, an unspellable one, a new one
    assert [name for name, _, _ in task.infer_sources()] == ["sentence1", "sentence2"]
    assert task.infer_text("sentence1") == "a dead bee"
    task.model.eval()
    batch = task.collate([task.valid_set[0]])
    logger = Logger(tmp_path)
    metrics = task.validate(task.model, [batch], step=4, logger=logger)
    logger.close()
    assert 0 <= metrics["infer/stopped"] <= 1 and 0 < metrics["infer/focus_rate"] <= 1
    assert {"infer/skipped", "infer/length_ratio", "infer/items_with_skips"} <= set(metrics)
    acc = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "audio": 0})
    acc.Reload()
    images = set(acc.Tags()["images"])
    for kind in ("alignment", "mel", "stop"):
        assert {f"infer/{kind}/sentence1", f"infer/{kind}/sentence2"} <= images
    assert "infer/audio/sentence1" in acc.Tags()["audio"]
    stop = acc.Images("infer/stop/sentence1")[0]
    assert stop.step == 4 and stop.width > 100
    assert {"fixed/items/text_summary", "infer/inputs/text_summary"} <= set(acc.Tags()["tensors"])
    inputs = acc.Tensors("infer/inputs/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "| sentence2 | bead a face |" in inputs


def test_free_running_can_be_turned_off(corpus: Path) -> None:
    task = build_task(_cfg(infer_items=0), corpus)
    task.model.eval()
    metrics = task.validate(task.model, [task.collate([task.valid_set[0]])], 1, None)
    assert not any(k.startswith("infer/") for k in metrics)


def test_vc_free_running_converts_validation_items(corpus: Path) -> None:
    task = build_task(_cfg("vc", infer_items=1), corpus)
    assert [name for name, _, _ in task.infer_sources()] == [task.valid_set[0]["id"]]
    task.model.eval()
    metrics = task.validate(task.model, [task.collate([task.valid_set[0]])], 1, None)
    assert 0 <= metrics["infer/stopped"] <= 1


def test_the_validation_decodes_without_the_recipes_synthesis_window(corpus, monkeypatch):
    """The infer/ curves measure the attention as it is: a window the recipe names for
    synthesis (``model.decoder.window``) is not applied, and would change them if it were."""
    import torch

    from aligner.tasks.free_running import log_free_running

    task = build_task(_cfg(infer_texts=["a dead bee", "bead a face"]), corpus)
    task.model.eval()
    decoder = task.model.decoder

    def metrics() -> dict[str, float]:
        torch.manual_seed(0)  # the prenet's dropout stays on when decoding
        return log_free_running(task, task.model, 1, None)

    plain = metrics()
    decoder.synthesis_window = (0, 1)  # as built from a recipe naming [0, 1]
    assert metrics() == plain
    generate = decoder.generate
    monkeypatch.setattr(decoder, "generate", lambda *a, **k: generate(*a, **k, window=(0, 1)))
    assert metrics() != plain  # the same decode under the window
