"""Everything that scores and runs no model: alignments against reference timings
(``aligner score-alignment``), G2P/translation outputs and converted voices (``aligner
score``). What it reads is files: manifests, records, TextGrids, audio."""


class EvaluationError(ValueError):
    """Files cannot be scored as given; the message says what to do."""
