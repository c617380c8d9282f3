"""Griffin-Lim: least-squares mel inverse and convergence over iterations."""

import math

import pytest
import torch

from aligner.audio.features import MelConfig, log_mel, mel_filterbank
from aligner.audio.vocoder import GriffinLim

CFG = MelConfig(
    sample_rate=16000, n_fft=512, hop_length=128, win_length=512, n_mels=80, f_max=8000.0
)


def _signal(seconds: float = 0.5) -> torch.Tensor:
    t = torch.arange(int(CFG.sample_rate * seconds)) / CFG.sample_rate
    return 0.4 * torch.sin(2 * math.pi * 220 * t) + 0.2 * torch.sin(2 * math.pi * 700 * t * (1 + t))


def _stft_mag(wav: torch.Tensor) -> torch.Tensor:
    return torch.stft(
        wav,
        CFG.n_fft,
        CFG.hop_length,
        CFG.win_length,
        torch.hann_window(CFG.win_length),
        center=True,
        pad_mode="reflect",
        return_complex=True,
    ).abs()


def test_linear_inverse_reprojects_to_the_same_mel():
    mel = log_mel(_signal(), CFG)
    gl = GriffinLim(CFG, n_iter=1)
    lin = gl.linear(mel)  # (F, T)
    assert (lin >= 0).all()
    remel = lin.T @ mel_filterbank(CFG)
    # the clamp at 0 may perturb slightly; the projection must come back close
    assert ((remel - mel.exp()).norm() / mel.exp().norm()) < 0.05


def test_spectral_convergence_improves_with_iterations():
    mel = log_mel(_signal(), CFG)
    target = GriffinLim(CFG).linear(mel)
    errors = []
    for n_iter in (1, 10, 40):
        torch.manual_seed(0)
        wav = GriffinLim(CFG, n_iter=n_iter)(mel)
        est = _stft_mag(wav)[:, : target.shape[1]]
        errors.append(((est - target).norm() / target.norm()).item())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.5 * errors[0]


def test_batched_equals_single_and_shapes():
    mel = log_mel(_signal(0.25), CFG)
    gl = GriffinLim(CFG, n_iter=5, rand_init=False)
    one = gl(mel)
    two = gl(torch.stack([mel, mel]))
    assert one.shape == ((mel.shape[0] - 1) * CFG.hop_length,)
    assert two.shape == (2, one.numel())
    assert torch.allclose(two[0], one, atol=1e-4) and torch.allclose(two[1], one, atol=1e-4)


def test_wrong_mel_bins_is_clear():
    with pytest.raises(ValueError, match="80 bins"):
        GriffinLim(CFG)(torch.zeros(10, 64))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_runs_on_cuda_device_of_input():
    mel = log_mel(_signal(0.25), CFG).cuda()
    wav = GriffinLim(CFG, n_iter=5)(mel)
    assert wav.is_cuda
