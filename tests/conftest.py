"""Shared test set-up: one intra-op thread per worker (CI has 2 cores), fixed seeds, and a
numba cache of each worker's own."""

import os
import random
import tempfile

# librosa's numba functions use cache=True, which writes into site-packages; two pytest-xdist
# workers compiling the same function into the same cache at once crashed a worker with a
# segfault in librosa.yin on a fresh install. Each worker gets its own cache folder (set
# before numba is first imported).
os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="aligner-numba-")

import numpy as np
import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
