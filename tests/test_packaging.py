"""What a wheel carries: the package and its recipes (a user who runs `pip install .` and
then `aligner demo` from another folder finds the default recipe)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_wheel_ships_every_recipe(tmp_path):
    leftover = ROOT / "build"  # setuptools' build folder, removed when this test made it
    had_build = leftover.exists()
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            str(ROOT),
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    if not had_build:
        shutil.rmtree(leftover, ignore_errors=True)
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("aligner-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    recipes = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "aligner" / "recipes").rglob("*.yaml")
    )
    assert recipes and set(recipes) <= names, set(recipes) - names
    assert "aligner/pipeline/demo.py" in names and "aligner/alignment/record.py" in names
