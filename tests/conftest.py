"""Shared test set-up: one intra-op thread per worker (CI has 2 cores), fixed seeds, and a
numba cache of each worker's own."""

import atexit
import os
import random
import shutil
import tempfile

# librosa's numba functions use cache=True, which writes into site-packages; two pytest-xdist
# workers compiling the same function into the same cache at once crashed a worker with a
# segfault in librosa.yin on a fresh install. Each worker gets its own cache folder (set
# before numba is first imported), removed when the worker exits.
os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="aligner-numba-")

import numpy as np
import pytest
import torch

atexit.register(shutil.rmtree, os.environ["NUMBA_CACHE_DIR"], ignore_errors=True)
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)


class FullDiskFile:
    """A file opened for writing whose writes fail with ENOSPC (a full disk)."""

    def __init__(self, fh):
        self.fh = fh

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()

    def write(self, data):
        import errno
        import os

        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.fh, name)


@pytest.fixture
def wav_disk_full(monkeypatch):
    """Every .wav (temporary) file that aligner.files opens gets no room."""
    import builtins

    import aligner.files

    def opener(path, *args, **kwargs):
        fh = builtins.open(path, *args, **kwargs)
        return FullDiskFile(fh) if ".wav" in str(path) else fh

    monkeypatch.setattr(aligner.files, "open", opener, raising=False)
