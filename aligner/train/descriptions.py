"""What each logged scalar means (unit, what it counts), shown by TensorBoard as the
chart's description. Looked up by the tag's last part (``valid/skipped`` -> ``skipped``);
the tag's first part says where the value comes from (`SECTIONS`)."""

from __future__ import annotations

SECTIONS = {
    "train": "Training batches, mean since the last log point.",
    "valid": "Validation set, teacher-forced (the decoder is fed the true previous frames).",
    "fixed": "The same few validation items at every validation, teacher-forced.",
    "infer": "Free-running synthesis of the fixed sentences (data.log.infer_texts), as "
    "`aligner synthesize` does: nothing teacher-forced.",
}

METRICS = {
    "loss": "Loss (lower is better). In validation: mel + stop loss without the guided "
    "term, so values compare across steps; it picks best.pt.",
    "mel_l1": "L1 between predicted (before postnet) and target normalized log-mels.",
    "mel_mse": "Mean squared error before the postnet (normalized log-mel units).",
    "post_l1": "L1 after the postnet (normalized log-mel units).",
    "post_mse": "Mean squared error after the postnet (normalized log-mel units).",
    "stop": "Binary cross-entropy of the stop token.",
    "guided": "Guided attention loss (Tachibana 2017): attention mass far from the diagonal.",
    "guided_weight": "Weight of the guided attention loss at this step (decays to 0).",
    "grad_norm": "Gradient L2 norm before clipping (train.grad_clip).",
    "lr": "Learning rate.",
    "steps_per_s": "Optimizer steps per second (wall clock).",
    "overflow": "Fraction of fp16 steps whose gradients overflowed (update skipped).",
    "nonfinite_skipped": "1 at a step whose loss or gradient was NaN/inf (update skipped).",
    "focus_rate": "Mean over decoder steps of the largest attention weight (0..1; 1 = every "
    "step attends one source position).",
    "diagonality": "Fraction of the attention mass within a band (10% of the source) around "
    "the diagonal (0..1; 1 = diagonal).",
    "entropy": "Mean entropy of the attention weights per decoder step (nats; lower = sharper).",
    "skipped": "Source tokens (not counting </s>) never attended, per item: never the "
    "argmax of a step and less than half a step's worth of attention in all.",
    "repeated": "Source tokens the argmax path returns to after leaving them, per item.",
    "items_with_skips": "Fraction of items with at least one skipped token.",
    "items_with_repeats": "Fraction of items with at least one repeated token.",
    "suspect": "Fraction of items with a skip (not for VC, which rightly passes over source "
    "frames), a repeat or a focus rate below data.log.min_focus.",
    "word_boundary_ms": "Mean absolute error (ms) of word boundaries from the alignment's "
    "durations against the corpus's reference timings.",
    "phone_boundary_ms": "Mean absolute error (ms) of phone boundaries against the reference.",
    "word_bias_ms": "Mean signed word boundary error (ms; negative = early).",
    "phone_bias_ms": "Mean signed phone boundary error (ms; negative = early).",
    "truth_unmatched": "Items whose words or phones could not be paired with the reference.",
    "stopped": "Fraction of sentences whose stop token ended decoding (the rest ran to the "
    "step limit data.log.infer_max_steps).",
    "length_ratio": "Decoder frames per source position.",
    "stopped_at_end": "Fraction of stopped sentences whose attention was on the last "
    "source positions when they stopped.",
}


def describe(tag: str) -> str:
    """The description of scalar `tag` (empty when unknown)."""
    parts = tag.split("/")
    text = [METRICS.get(parts[-1], ""), SECTIONS.get(parts[0], "") if len(parts) > 1 else ""]
    return " ".join(t for t in text if t)
