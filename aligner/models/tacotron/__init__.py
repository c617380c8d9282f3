"""The Tacotron family (TTS and VC share it): encoders, the decoder on any attention
mechanism of the core, the postnet, free-running and fixed-shape decoding, and the
decoder's inference precisions on a CPU (fused cells, fp16 and int8 weights)."""
