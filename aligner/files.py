"""Writing output files safely (the bottom floor): atomically, with one clear error.

``atomic_write(path)`` is a context manager giving a binary (or text) file object on a
temporary file next to `path`; when the block ends without an error the file is flushed,
fsynced and renamed over `path` (so `path` is always either the old or the new file),
and the folder is fsynced. On any error the temporary file is removed and `path` is left
as it was. A full disk, a quota, a read-only file system or a permission problem
(ENOSPC, EDQUOT, EROFS, EACCES, EPERM) becomes an `OutputError` whose message is one
line naming the file, the device and what to do; torch's serializer, which reports a
failed write as ``RuntimeError: [enforce fail at inline_container.cc] ... file write
failed``, is recognised too.

``write_atomic(path, writer)`` is the same as a call: ``writer(fh)`` writes the content.
``temporary_owner(path)`` tells whose temporary file a name is, so a start-up cleanup
removes only those of processes that are gone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

TMP_MARK = ".tmp-"
_WHY = {
    errno.ENOSPC: "no space left on {device}",
    errno.EDQUOT: "disk quota exceeded on {device}",
    errno.EROFS: "{device} is a read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}
_WHAT_TO_DO = {
    errno.ENOSPC: "free some space or write elsewhere",
    errno.EDQUOT: "free some space or write elsewhere",
    errno.EROFS: "write to another folder",
    errno.EACCES: "write to a folder you may write to",
    errno.EPERM: "write to a folder you may write to",
}
LOW_SPACE = 1 << 20  # bytes: a failed torch write with less free than this is a full disk


class OutputError(Exception):
    """An output file could not be written; the message is one line (what, where, what to
    do). ``path`` is the file and ``errno`` the cause (None when unknown)."""

    def __init__(self, message: str, path: str | Path, code: int | None = None) -> None:
        super().__init__(message)
        self.path, self.errno = Path(path), code

    def __reduce__(self):  # raised in a worker process, re-raised in the parent
        return (OutputError, (str(self), str(self.path), self.errno))


def mount_point(path: str | Path) -> Path:
    """The mount point (the device's folder) holding `path` (which need not exist yet)."""
    p = Path(os.path.abspath(path))
    while not p.exists():
        p = p.parent
    while not os.path.ismount(p):
        p = p.parent
    return p


def _errno_of(err: BaseException, folder: Path) -> int | None:
    """The errno behind `err` (an OSError, or one wrapped by torch's RuntimeError)."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.errno in _WHY:
            return cause.errno
        cause = cause.__cause__ or cause.__context__
    text = str(err)
    if "No space left" in text:
        return errno.ENOSPC
    torch_write = isinstance(err, RuntimeError) and (
        "inline_container" in text or "write failed" in text
    )
    short_write = isinstance(err, OSError) and err.errno is None and "written" in text  # numpy
    if torch_write or short_write:
        with contextlib.suppress(OSError):  # the errno was dropped: look at the disk
            if shutil.disk_usage(folder).free < LOW_SPACE:
                return errno.ENOSPC
    return None


def output_error(err: BaseException, path: str | Path) -> OutputError | None:
    """`err` (raised while writing `path`) as an `OutputError`, or None when it is not one
    of the storage errors this module names."""
    path = Path(path)
    blocked = _file_in_the_way(err, path)
    if blocked is not None:
        return OutputError(
            f"{blocked} is a file, not a folder, so {path} cannot be written; "
            "choose another output path",
            path,
            errno.ENOTDIR,
        )
    if isinstance(err, FileNotFoundError) and path.parent.is_dir():
        return OutputError(
            f"{path.parent} takes no new files (cannot create {path.name} there); "
            "write to another folder",
            path,
            errno.ENOENT,
        )
    code = _errno_of(err, path.parent if path.parent.exists() else mount_point(path))
    if code is None:
        return None
    why = _WHY[code].format(device=mount_point(path))
    return OutputError(f"{why} while writing {path}; {_WHAT_TO_DO[code]}", path, code)


def make_folder(folder: Path) -> None:
    """`folder` (and its parents) for output files; a folder that cannot be made (in
    /proc, under a file, a full disk) is one `OutputError` naming it and what to do."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        first = next((p for p in [*reversed(folder.parents), folder] if not p.exists()), folder)
        raise output_error(err, first) or err from None


def with_file_name(err: OSError, path: str | Path) -> OSError:
    """`err`, or, where it names no file (a full disk as PIL or TensorBoard's writer
    reports it), the same error naming `path`."""
    if err.filename is not None or err.errno is None:
        return err
    return OSError(err.errno, err.strerror or str(err), str(path))


def _file_in_the_way(err: BaseException, path: Path) -> Path | None:
    """The file that stands where a folder of `path` should be, when that is why writing
    it failed (``out.wav/x.wav`` with ``out.wav`` a file); else None."""
    if not isinstance(err, FileExistsError | NotADirectoryError):
        return None
    return next((p for p in path.parents if p.exists() and not p.is_dir()), None)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_name(path: Path) -> Path:
    """``.NAME.tmp-PID`` next to `path`: this process's temporary file for `path`."""
    return path.with_name(f".{path.name}{TMP_MARK}{os.getpid()}")


def temporary_owner(path: str | Path) -> int | None:
    """The process id in a temporary file's name (see `temporary_name`), else None."""
    _, mark, pid = Path(path).name.rpartition(TMP_MARK)
    return int(pid) if mark and pid.isdigit() else None


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


@contextlib.contextmanager
def _into_place(path: Path) -> Iterator[Path]:
    """A temporary name beside `path`, renamed onto it when the block ends without error;
    a storage error becomes `OutputError` (`output_error`), and the temporary file never
    stays behind. A link is written through (its target replaced); a device, a pipe or a
    socket is refused, not replaced by a file (``--out /dev/null --force``)."""
    if path.is_symlink():
        path = path.resolve()
    if path.exists() and not path.is_file():
        what = "a folder" if path.is_dir() else "not a regular file (a device, a pipe or a socket)"
        raise OutputError(f"{path} is {what}; name a file to write", path)
    tmp = temporary_name(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        yield tmp
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except Exception as err:
        nicer = output_error(err, path)
        if nicer is not None:
            raise nicer from None
        raise
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "wb", **open_kw: Any) -> Iterator[IO]:
    """``with atomic_write(path) as fh: ...``: see the module docstring. `mode` is "wb"
    or "w" (then `open_kw`, e.g. ``encoding="utf-8"``, go to `open`)."""
    with _into_place(Path(path)) as tmp, open(tmp, mode, **open_kw) as fh:
        yield fh
        fh.flush()
        os.fsync(fh.fileno())


def write_atomic(path: str | Path, writer: Callable[[IO], Any], mode: str = "wb", **kw: Any):
    """``writer(fh)`` into `path` atomically (see `atomic_write`); returns `path`."""
    with atomic_write(path, mode, **kw) as fh:
        writer(fh)
    return Path(path)


def save_by_name(path: str | Path, save: Callable[[Path], Any]) -> Path:
    """For writers that take a file name (a TextGrid, matplotlib): ``save(temporary name)``,
    then the rename; storage errors as in `atomic_write`, no temporary left behind."""
    path = Path(path)
    with _into_place(path) as tmp:
        save(tmp)
    return path


def looks_utf16(data: bytes) -> bool:
    """Whether the bytes of a file look like UTF-16 text: a UTF-16 byte-order mark, or in
    the first 4 kB mostly ASCII characters with every other byte a NUL."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    head = data[:4096]
    if len(head) < 4:
        return False
    for zeros, chars in ((head[1::2], head[0::2]), (head[0::2], head[1::2])):
        text = zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars)
        if text and all(c >= 9 for c in chars if c):
            return True
    return False


class NotUtf8Error(ValueError):
    """A text file that is not UTF-8: ``line`` (from 1) and ``byte`` (its value) where the
    decoding failed, for the caller's message."""

    def __init__(self, path: Path, line: int, byte: int) -> None:
        super().__init__(f"{path}: line {line} is not UTF-8 (byte {byte:#x})")
        self.path, self.line, self.byte = path, line, byte


def read_utf8(path: str | Path) -> str:
    """The text of the file `path`, UTF-8 (a byte-order mark is no character of it);
    `NotUtf8Error` naming the line where it is not."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise NotUtf8Error(Path(path), line, data[err.start]) from None
