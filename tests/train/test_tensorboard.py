"""The TensorBoard Logger: image arrays, no-op on other ranks, and what lands in the events."""

import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from aligner.train.tensorboard import Logger, heatmap


def test_heatmap_orientation_and_range():
    m = np.zeros((5, 3), dtype=np.float32)  # (T, bins)
    m[4, 0] = 1.0  # last frame, lowest bin -> bottom-right pixel
    img = heatmap(m)
    assert img.shape == (3, 5, 3) and img.dtype == np.uint8
    bright = np.unravel_index(img.sum(-1).argmax(), img.shape[:2])
    assert tuple(bright) == (2, 4)
    assert np.array_equal(heatmap(np.full((2, 2), 7.0)), heatmap(np.zeros((2, 2))))  # flat
    with pytest.raises(ValueError, match=r"2-D matrix"):
        heatmap(np.zeros(3))


def test_disabled_logger_writes_nothing(tmp_path):
    log = Logger(tmp_path / "tb", enabled=False)
    log.scalar("a", 1.0, 0)
    log.alignment("b", torch.eye(3), 0)
    log.mel("c", torch.rand(4, 2), 0)
    log.audio("d", torch.zeros(100), 16000, 0)
    log.close()
    assert not (tmp_path / "tb").exists()


def test_logged_events(tmp_path):
    log = Logger(tmp_path)
    log.scalars({"loss": 0.5, "lr": 1e-3}, step=3, prefix="train")
    log.alignment("valid/alignment/0", torch.softmax(torch.randn(7, 4), -1), 3)
    log.mel("valid/mel/0", torch.randn(20, 8), 3)
    log.audio("valid/audio/0", 2 * torch.sin(torch.arange(800) / 5.0), 8000, 3)
    with pytest.raises(ValueError, match=r"\(H, W, 3\) uint8"):
        log.image("bad", np.zeros((4, 4), dtype=np.uint8), 0)
    log.close()
    acc = EventAccumulator(str(tmp_path), size_guidance={"audio": 0})
    acc.Reload()
    assert [e.value for e in acc.Scalars("train/loss")] == [0.5]
    assert acc.Scalars("train/lr")[0].value == pytest.approx(1e-3)
    mel = acc.Images("valid/mel/0")[0]
    assert (mel.width, mel.height) == (20, 8)
    assert acc.Images("valid/alignment/0")[0].step == 3
    audio = acc.Audio("valid/audio/0")[0]
    assert audio.sample_rate == 8000 and audio.length_frames == 800


def test_scalars_carry_descriptions_and_run_text(tmp_path):
    log = Logger(tmp_path)
    log.scalars({"skipped": 1.0, "infer/stopped": 0.5}, step=1, prefix="valid")
    log.scalar("valid/skipped", 2.0, 2)
    log.run_text(tmp_path / "myexp", {"task": "tts", "train": {"lr": 0.001}}, 0)
    log.close()
    acc = EventAccumulator(str(tmp_path))
    acc.Reload()
    assert [e.value for e in acc.Scalars("valid/skipped")] == [1.0, 2.0]
    assert acc.Scalars("infer/stopped")[0].value == 0.5  # a name with "/" keeps it
    skipped = acc.SummaryMetadata("valid/skipped").summary_description
    assert "never attended" in skipped and "teacher-forced" in skipped
    assert "stop token" in acc.SummaryMetadata("infer/stopped").summary_description
    recipe = acc.Tensors("run/recipe/text_summary")[0].tensor_proto.string_val[0].decode()
    assert "    task: tts" in recipe
    name = acc.Tensors("run/name/text_summary")[0].tensor_proto.string_val[0].decode()
    assert name.startswith("**myexp**")


def test_a_full_disk_names_the_tensorboard_folder(tmp_path, monkeypatch):
    """TensorBoard's writer reports a full disk as an OSError without a file name (so the
    command's line named nothing) and its thread printed a traceback: the error names the
    folder, and the thread's traceback is left out (the error comes again in training)."""
    import errno
    import threading
    from types import SimpleNamespace

    from aligner.train.tensorboard import _quiet_writer_thread

    logger = Logger(tmp_path / "tb")

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(logger.writer, "add_text", no_room)
    with pytest.raises(OSError) as caught:
        logger.text("run/name", "x", 0)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(tmp_path / "tb")
    logger.close()

    class _AsyncWriterThread(threading.Thread):
        pass

    seen = []
    hook = _quiet_writer_thread(seen.append)
    for thread, exc in ((_AsyncWriterThread(), OSError), (threading.Thread(), OSError)):
        hook(SimpleNamespace(thread=thread, exc_type=exc))
    hook(SimpleNamespace(thread=_AsyncWriterThread(), exc_type=ValueError))
    assert len(seen) == 2  # another thread's error and another kind of error still shown
