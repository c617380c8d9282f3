"""FastPitch: a non-autoregressive TTS network trained on given durations
(`aligner.models.fastpitch.model.FastPitch`)."""
