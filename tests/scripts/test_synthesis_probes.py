"""scripts/synthesis_probes.py: the distortion split against hand-made mels, and the probes
end to end on a tiny randomly initialised TTS checkpoint."""

from __future__ import annotations

import numpy as np
import synthesis_probes

from tests.cli.test_speech_cli import make_checkpoint


def test_distortion_is_zero_on_itself_and_splits_quiet_from_speech() -> None:
    rng = np.random.default_rng(0)
    ref = rng.normal(0.0, 1.0, (40, 16))
    ref[:10] -= 20.0  # a quiet start
    assert synthesis_probes.distortion(ref, ref) == (0.0, 0.0, 0.0)
    hyp = ref.copy()
    hyp[10:] += rng.normal(0.0, 1.0, (30, 16))  # only the speech differs
    total, quiet, speech = synthesis_probes.distortion(hyp, ref)
    assert quiet == 0.0 and speech > 0.0 and 0.0 < total < speech


def test_probes_run_on_a_tiny_checkpoint_and_leave_the_attention_alone(tmp_path) -> None:
    ckpt = make_checkpoint(tmp_path, "tts")
    out = synthesis_probes.probe(ckpt, tmp_path / "data_tts" / "test.jsonl", items=2)
    assert set(out) == {
        "free_running",
        "free_running_quiet",
        "free_running_speech",
        "no_dropout",
        "forced_attention",
        "teacher_forced",
    }
    assert all(np.isfinite(v) or k.endswith("quiet") for k, v in out.items())


def test_forced_attention_decodes_under_the_given_weights_and_restores_the_method(tmp_path):
    import torch

    from aligner.inference.loading import load_speech_model

    speech = load_speech_model(make_checkpoint(tmp_path, "tts"), "synthesize")
    attention = speech.model.decoder.attention
    src = speech.encode_text("hello world.")
    weights = torch.zeros(3, len(src))
    weights[:, 1] = 1.0  # every step on token 1
    mel = synthesis_probes.forced_attention(speech, src, weights)
    assert mel.ndim == 2 and len(mel) > 0
    assert "forward" not in vars(attention)  # the class's method again
    seen = []
    original = attention.forward
    attention.forward = lambda q, st: seen.append(1) or original(q, st)
    synthesis_probes.forced_attention(speech, src, weights)
    assert seen and "forward" not in vars(attention)
