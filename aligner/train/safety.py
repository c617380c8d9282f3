"""What keeps a run's folder whole: one training per experiment folder (a lock file with
the process id), and a checkpoint on Ctrl-C or SIGTERM (a cluster's pre-emption).

`RunLock(out_dir)` writes ``out_dir/train.lock`` (``pid host start-time``) or refuses
with a line naming the live run that holds it; a lock whose process is gone (same host)
is taken over. It is removed on exit.

`Interrupts()` is a context manager that turns the first SIGINT/SIGTERM into a flag the
training loop polls (it then saves a checkpoint and stops); a second signal raises
`KeyboardInterrupt` at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from pathlib import Path
from types import FrameType

from aligner.files import process_alive

LOCK_NAME = "train.lock"


class LockedError(RuntimeError):
    """Another live `aligner train` holds the experiment folder."""


class RunLock:
    """The experiment folder's lock; see the module docstring."""

    def __init__(self, out_dir: str | Path) -> None:
        self.path = Path(out_dir) / LOCK_NAME
        self.held = False

    def _holder(self) -> tuple[int, str, str] | None:
        try:
            pid, host, *started = self.path.read_text(encoding="utf-8").split()
            return int(pid), host, " ".join(started)
        except (OSError, ValueError):
            return None

    def _write(self, flags: int) -> bool:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        try:
            fd = os.open(self.path, flags, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()} {socket.gethostname()} {stamp}\n")
        return True

    def acquire(self) -> None:
        """Take the lock, or raise `LockedError` naming the run that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self._write(os.O_WRONLY | os.O_CREAT | os.O_EXCL):
            holder = self._holder()
            if holder is not None and self._alive(holder):
                pid, host, started = holder
                raise LockedError(
                    f"{self.path.parent} is in use by another `aligner train` (process {pid} "
                    f"on {host}, since {started}); wait for it, stop it, or give another --out"
                    + ("" if host == socket.gethostname() else f" (stale? delete {self.path})")
                )
            self._write(os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # stale: take it over
            holder = self._holder()
            if holder is None or holder[0] != os.getpid():  # another run took it first
                raise LockedError(f"{self.path.parent} was just taken by another `aligner train`")
        self.held = True

    @staticmethod
    def _alive(holder: tuple[int, str, str]) -> bool:
        pid, host, _ = holder
        if host != socket.gethostname():
            return True  # cannot tell; a run on another machine counts as alive
        return pid != os.getpid() and process_alive(pid)

    def release(self) -> None:
        if self.held:
            holder = self._holder()
            if holder is not None and holder[0] == os.getpid():
                self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class Interrupts(contextlib.AbstractContextManager):
    """First SIGINT/SIGTERM: set ``signal_name`` (polled by the loop); second: raise
    `KeyboardInterrupt`. Outside the main thread it does nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signal_name: str | None = None
        self.signal_number = 0
        self._previous: dict[int, object] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal_name is not None:
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}")
        self.signal_name, self.signal_number = signal.Signals(signum).name, signum

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
