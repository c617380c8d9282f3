"""How training stops early: errors whose message tells the user what to fix (`aligner
train` prints them as one line)."""

from __future__ import annotations


class TrainingError(RuntimeError):
    """Training cannot go on for a reason the user can fix (the message says how)."""


class TrainingDiverged(TrainingError):
    """The loss was NaN/inf for `max_nonfinite` steps in a row; a checkpoint was written."""
