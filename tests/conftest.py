"""Shared test set-up: one intra-op thread per worker (CI has 2 cores), fixed seeds."""

import random

import numpy as np
import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed() -> None:
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
