"""Trainer tests: the tiny task's folder on sys.path (also for subprocesses), and its
recipe."""

import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def tiny_recipe(tmp_path, monkeypatch):
    """A function that writes the tiny task's recipe with a ``train:`` section and returns
    its path (``tmp_path/tiny.yaml``)."""
    monkeypatch.syspath_prepend(str(HERE))

    def write(train: dict) -> Path:
        path = tmp_path / "tiny.yaml"
        path.write_text(yaml.safe_dump({"task": "tiny_task", "model": {}, "train": train}))
        return path

    return write
