"""What every use of a trained model shares: the error a user can act on."""

from __future__ import annotations


class InferenceError(ValueError):
    """A checkpoint or an input cannot be used; the message says what to do."""
