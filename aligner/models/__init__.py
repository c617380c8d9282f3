"""Models: Tacotron encoders, decoder and postnet (TTS and VC) and the text seq2seq model."""
