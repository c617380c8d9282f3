"""aligner: attention-based sequence-to-sequence alignment for speech and text."""

__version__ = "0.1.0"
