"""aligner.files: atomic writes, one-line storage errors (a full disk above all), and a
text file's encoding told."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import torch

from aligner.checkpoint import atomic_save, load_checkpoint
from aligner.files import (
    OutputError,
    atomic_write,
    mount_point,
    output_error,
    temporary_owner,
    write_atomic,
)


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "sub" / "out.txt"
    write_atomic(path, lambda fh: fh.write("one"), "w", encoding="utf-8")
    with atomic_write(path, "w", encoding="utf-8") as fh:
        fh.write("two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["out.txt"]


def test_a_failing_writer_keeps_the_old_file(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(ZeroDivisionError):
        with atomic_write(path) as fh:
            fh.write(b"new")
            raise ZeroDivisionError
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "no space left on"),
        (errno.EDQUOT, "disk quota exceeded on"),
        (errno.EROFS, "is a read-only file system"),
        (errno.EACCES, "permission denied"),
    ],
)
def test_storage_errors_are_one_line(tmp_path, code, words):
    path = tmp_path / "out.bin"

    def writer(fh):
        fh.write(b"x")
        raise OSError(code, os.strerror(code))

    with pytest.raises(OutputError) as info:
        write_atomic(path, writer)
    message = str(info.value)
    assert words in message and f"while writing {path}" in message and "\n" not in message
    assert info.value.errno == code and not path.exists() and os.listdir(tmp_path) == []


def test_full_disk_in_torch_save_keeps_the_checkpoint(tmp_path, monkeypatch):
    """torch's serializer may wrap the OSError in a RuntimeError ([enforce fail at
    inline_container.cc]); both read as a full disk, the old checkpoint intact."""
    path = tmp_path / "ckpt-00000001.pt"
    atomic_save({"model": {}, "step": 1, "config": {}}, path)

    def wrapped(obj, fh):
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as err:
            raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected") from err

    for fake in (wrapped, lambda obj, fh: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full"))):
        monkeypatch.setattr(torch, "save", fake)
        with pytest.raises(OutputError, match=f"no space left on .* while writing {path}"):
            atomic_save({"model": {}, "step": 2, "config": {}}, path)
        assert load_checkpoint(path)["step"] == 1
        assert os.listdir(tmp_path) == [path.name]


def test_torch_write_failure_without_errno_on_a_full_disk(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10, 10, 0))

    def failing(obj, fh):
        raise RuntimeError(
            "[enforce fail at inline_container.cc:778] . PytorchStreamWriter "
            "failed writing file data/0: file write failed"
        )

    monkeypatch.setattr(torch, "save", failing)
    with pytest.raises(OutputError, match="no space left"):
        atomic_save({}, tmp_path / "a.pt")


def test_numpy_short_write_on_a_full_disk(tmp_path, monkeypatch):
    """np.save into a full disk raises OSError("N requested and M written") without errno."""
    import shutil
    from collections import namedtuple

    import numpy as np

    from aligner.files import write_atomic

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10, 10, 0))

    def short(fh, arr):
        raise OSError("61744 requested and 44000 written")

    monkeypatch.setattr(np, "save", short)
    with pytest.raises(OutputError, match="no space left on .* while writing .*a.npy"):
        write_atomic(tmp_path / "a.npy", lambda fh: np.save(fh, np.zeros(3)))
    assert list(tmp_path.iterdir()) == []


def test_audio_on_a_full_disk_is_one_error_and_no_callback_noise(tmp_path, wav_disk_full, capfd):
    """soundfile writing into a file object reported ENOSPC through cffi callbacks, which
    printed tracebacks ("Exception ignored from cffi callback"); the samples are encoded
    in memory and written with one plain write."""
    import numpy as np

    from aligner.audio.io import write_audio_array

    with pytest.raises(OutputError, match="no space left on .* while writing .*a.wav"):
        write_audio_array(tmp_path / "a.wav", np.zeros(2205, dtype=np.float32), 22050)
    assert "Traceback" not in capfd.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_other_errors_pass_through_and_helpers(tmp_path):
    with pytest.raises(OSError) as info:
        write_atomic(tmp_path / "a", lambda fh: (_ for _ in ()).throw(OSError(errno.EIO, "io")))
    assert not isinstance(info.value, OutputError)
    assert temporary_owner(tmp_path / ".ckpt.pt.tmp-1234") == 1234
    assert temporary_owner(tmp_path / "ckpt.pt") is None
    assert os.path.ismount(mount_point(tmp_path / "not" / "yet"))


def test_a_file_where_a_folder_should_be_is_one_line(tmp_path):
    """``--out out.wav/x.wav`` with ``out.wav`` a file: named as the file in the way, no
    temporary left; a folder that takes no new file is named, not the temporary's name."""
    blocker = tmp_path / "out.wav"
    blocker.write_bytes(b"x")
    with pytest.raises(OutputError, match=r"out.wav is a file, not a folder, so .*x.wav"):
        write_atomic(blocker / "x.wav", lambda fh: fh.write(b"y"))
    assert blocker.read_bytes() == b"x"
    err = output_error(FileNotFoundError(errno.ENOENT, "gone", "/x/.y.tmp-1"), tmp_path / "y")
    assert err is not None and ".tmp" not in str(err) and "takes no new files" in str(err)


def test_a_device_or_pipe_is_refused_and_a_link_written_through(tmp_path):
    """``--out /dev/null --force`` replaced the device node with a file; a fifo too. A
    link to a file keeps being a link: its target gets the new contents."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for special in (fifo, Path("/dev/null")):
        with pytest.raises(OutputError, match="not a regular file"):
            write_atomic(special, lambda fh: fh.write(b"x"))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and Path("/dev/null").is_char_device()
    target, link = tmp_path / "target.txt", tmp_path / "link.txt"
    target.write_text("old")
    link.symlink_to(target)
    write_atomic(link, lambda fh: fh.write("new"), "w")
    assert link.is_symlink() and target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.txt", "pipe", "target.txt"]


def test_a_manifest_is_readable_as_any_file_the_user_writes(tmp_path):
    """Manifests were written through mkstemp, owner-only (0600) beside a 0644 summary."""
    from aligner.data.manifest import write_manifest

    old = os.umask(0o022)
    try:
        path = write_manifest(tmp_path / "train.jsonl", [{"id": "a", "text": "x"}])
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["train.jsonl"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_text_is_named_and_a_binary_file_is_not_taken_for_one(tmp_path, encoding):
    """A text saved as UTF-16 (with or without a byte-order mark) is named as such, with
    how to convert it; audio (NULs in its silence) is a binary file, and UTF-8 text is
    read, its byte-order mark dropped."""
    from aligner.files import looks_utf16
    from aligner.inference.common import InferenceError, read_text_file

    text = tmp_path / "t.txt"
    text.write_text("Hello there, my friend.\nWe left at dawn.\n", encoding=encoding)
    assert looks_utf16(text.read_bytes())
    with pytest.raises(InferenceError, match="is UTF-16; save it as UTF-8"):
        read_text_file(text, "--text")
    wav = tmp_path / "a.txt"
    sf.write(wav, np.r_[np.zeros(4000), 0.3 * np.sin(np.arange(4000) / 5)], 16000, format="WAV")
    assert not looks_utf16(wav.read_bytes())
    with pytest.raises(InferenceError, match="binary file, not text"):
        read_text_file(wav, "--text")
    text.write_text("Hello there.\n", encoding="utf-8-sig")
    assert not looks_utf16(text.read_bytes()) and read_text_file(text) == "Hello there.\n"
