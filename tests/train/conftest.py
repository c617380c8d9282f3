"""Trainer tests: the tiny task's folder on sys.path, and a batch sampler available."""

import sys
from pathlib import Path

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from tiny_task import ensure_sampler  # noqa: E402

ensure_sampler()
