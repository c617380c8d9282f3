"""Silence trimming keeps the sound and drops the silent edges; pauses are long silences."""

import math

import numpy as np
import pytest
import torch

from aligner.audio.trim import (
    PauseRule,
    frame_rms,
    long_runs,
    noise_floor,
    running_median,
    silence_threshold,
    silent_frames,
    trim_silence,
)


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


def test_long_silences_are_pauses_short_ones_not():
    """A 100 ms silence is a pause (every frame wholly inside it, none outside it); a 20 ms
    one (a stop's closure) is too short for min_frames = 3 (35 ms at hop 256)."""
    sr, hop = 22050, 256
    t = torch.arange(int(0.3 * sr)) / sr
    tone = 0.5 * torch.sin(2 * math.pi * 220 * t)
    gap, closure = torch.zeros(int(0.1 * sr)), torch.zeros(int(0.02 * sr))
    wav = torch.cat([tone, gap, tone, closure, tone])
    n = 1 + wav.numel() // hop
    got = long_runs(silent_frames(wav, hop, n, top_db=40), 3)
    centre = np.arange(n) * hop / sr  # frame t stands for the audio around t * hop
    start, end = 0.3, 0.4
    inside = (centre - 0.5 * hop / sr >= start) & (centre + 0.5 * hop / sr <= end)
    assert got[inside].all() and inside.sum() >= 7
    assert not got[(centre < start - hop / sr) | (centre > end + hop / sr)].any()
    short = long_runs(silent_frames(wav, hop, n, top_db=40), 1)
    assert short[(centre > 0.705) & (centre < 0.715)].all()  # one frame wholly in the closure
    assert not silent_frames(torch.zeros(sr), hop, 10).any()  # silence alone: nothing to pause from


def test_pause_rule_off_and_in_frames():
    sr, hop = 22050, 256
    wav = torch.cat([0.5 * torch.ones(sr // 4), torch.zeros(sr // 4), 0.5 * torch.ones(sr // 4)])
    n = 1 + wav.numel() // hop
    assert PauseRule(silence_db=0).frames(wav, sr, hop, n) is None
    on = PauseRule().frames(wav, sr, hop, n)
    assert on.shape == (n,) and 15 <= on.sum() <= 22  # 250 ms is 21.5 frames
    assert PauseRule(min_seconds=0.3).frames(wav, sr, hop, n).sum() == 0


def test_pauses_above_the_fixed_threshold_are_found_over_the_noise_floor():
    """Noise 30 dB under the speech everywhere: nothing is 40 dB down, so the fixed rule
    (``margin_db`` 0) finds no pause (None: the tiers use the token rule); the gap's steady
    noise is the recording's floor, and 6 dB above it the gap is a pause, as 20 dB below
    the peak finds it."""
    sr, hop = 22050, 256
    g = torch.Generator().manual_seed(0)
    speech = 0.5 * torch.sin(2 * math.pi * 220 * torch.arange(sr // 4) / sr)
    wav = torch.cat([speech, torch.zeros(sr // 4), speech]) + 0.01 * torch.randn(
        3 * (sr // 4), generator=g
    )
    n = 1 + wav.numel() // hop
    assert PauseRule(margin_db=0).frames(wav, sr, hop, n) is None
    fixed = PauseRule(silence_db=20, margin_db=0).frames(wav, sr, hop, n)
    assert 15 <= fixed.sum() <= 22
    found = PauseRule().frames(wav, sr, hop, n)  # -25 dB: the frame half in the gap is sound
    assert 15 <= found.sum() <= 22 and not (found & ~fixed).any()


def test_a_clean_recording_keeps_the_fixed_threshold():
    """The threshold is the fixed one where the background is far below the peak, and where
    no steady background lies near the quietest frames: speech alone (a steady tone), and a
    steady sound 25 dB down between digital silences of a few frames (eSpeak NG's
    fricatives between its closures)."""
    levels = np.concatenate([np.full(20, -100.0), np.zeros(30), np.full(20, -60.0)])
    assert silence_threshold(levels, 40.0) == -40.0  # background 60 dB down
    assert noise_floor(np.zeros(50)) is None  # a steady tone: no background
    quiet_sound = np.concatenate([np.zeros(30), np.full(12, -25.0), np.full(4, -90.0)] * 3)
    assert noise_floor(quiet_sound) is None and silence_threshold(quiet_sound, 40.0) == -40.0
    noisy = np.concatenate([np.full(20, -35.0), np.zeros(30), np.full(20, -34.0)])
    assert noise_floor(noisy) == pytest.approx(-35.0)
    # a steady background (levels within 1 dB): the least margin, 3 dB
    assert silence_threshold(noisy, 40.0) == pytest.approx(-32.0)
    assert silence_threshold(noisy, 40.0, margin_db=0) == -40.0
    # a background that swings by 5 dB: its swing (90th percentile of the 60 background
    # levels, 4.24 dB over the floor) + 1
    swinging = np.concatenate([np.full(20, -35.0), np.zeros(30), np.linspace(-35, -30, 40)])
    assert silence_threshold(swinging, 40.0) == pytest.approx(-35.0 + 4.24 + 1.0, abs=0.01)
    wide = np.concatenate([np.full(10, -35.0), np.zeros(30), np.linspace(-35, -20, 60)])
    assert silence_threshold(wide, 40.0) == pytest.approx(-29.0)  # swing over 5 dB: 6 dB
    assert silence_threshold(np.array([-np.inf, -np.inf]), 40.0) == -np.inf
    # digital silence a noisy file was padded with, at its edges, is no background
    padded = np.concatenate([np.full(12, -100.0), noisy, np.full(3, -100.0)])
    assert noise_floor(padded) == pytest.approx(-35.0)
    # smoothed levels whose loudest frame was smoothed away: the peak is the one given
    assert silence_threshold(np.array([-10.0, -45.0]), 40.0, peak_db=0.0) == -40.0


def test_running_median_against_a_brute_force():
    rng = np.random.default_rng(0)
    x = rng.normal(size=9)
    for width in (1, 3, 5):
        padded = np.concatenate([[x[0]] * (width // 2), x, [x[-1]] * (width // 2)])
        want = [np.median(padded[t : t + width]) for t in range(len(x))]
        assert running_median(x, width) == pytest.approx(want)
    with pytest.raises(ValueError, match="odd"):
        running_median(x, 2)


def test_a_frame_of_noise_in_a_silence_does_not_cut_the_pause():
    """A 150 ms silence with one frame of noise above the threshold in its middle: without
    the median the pause falls in two runs shorter than 80 ms (none is a pause); with the
    rule's median of 3 frames it is one pause."""
    sr, hop = 22050, 256
    t = torch.arange(int(0.3 * sr)) / sr
    tone = 0.5 * torch.sin(2 * math.pi * 220 * t)
    wav = torch.cat([tone, torch.zeros(int(0.15 * sr)), tone])
    c = round(0.375 * sr / hop)  # the frame at the silence's middle, alone to hear the noise
    wav[c * hop - hop // 4 : c * hop + hop // 4] = 0.05  # -17 dB: sound
    n = 1 + wav.numel() // hop
    assert not long_runs(silent_frames(wav, hop, n, 40.0), 7).any()
    pauses = PauseRule().frames(wav, sr, hop, n)
    centre = np.arange(n) * hop / sr
    assert pauses[(centre > 0.32) & (centre < 0.43)].all() and not pauses[centre < 0.28].any()


@pytest.mark.parametrize("n", [1, 255, 256, 257, 22050, 100003])
@pytest.mark.parametrize("hop", [1, 64, 255, 256])
def test_frame_rms_chunk_by_chunk_is_librosas_centred_rms(n, hop):
    import librosa

    y = np.random.default_rng(n + hop).standard_normal(n).astype(np.float32)
    want = librosa.feature.rms(y=y, frame_length=hop, hop_length=hop, center=True)[0]
    for chunk in (1, 3, 1 << 16):
        got = frame_rms(y, hop, chunk)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
