"""Silence trimming keeps the sound and drops the silent edges."""

import math

import torch

from aligner.audio.trim import trim_silence


def test_trims_leading_and_trailing_silence():
    sr = 16000
    t = torch.arange(sr // 2) / sr
    tone = 0.5 * torch.sin(2 * math.pi * 440 * t)
    wav = torch.cat([torch.zeros(sr // 4), tone, torch.zeros(sr // 2)])
    out = trim_silence(wav, sr, top_db=40)
    hop = 256
    assert abs(out.numel() - tone.numel()) <= 4 * hop
    assert out.abs().max() == tone.abs().max()


def test_all_silent_and_untrimmable():
    sr = 16000
    assert trim_silence(torch.zeros(sr), sr).numel() == 0
    noise = torch.randn(sr) * 0.1
    assert trim_silence(noise, sr).numel() >= sr - 1024
