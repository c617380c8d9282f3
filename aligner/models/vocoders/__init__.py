"""Vocoder families: log-mel -> waveform. Vocos (trained here), the HiFi-GAN generator
(trained here with its discriminators, or a public release), Griffin-Lim, and what
``--vocoder`` names wraps them alike (`base.Vocoder`)."""
