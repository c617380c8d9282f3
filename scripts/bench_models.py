"""The two Tacotrons that `bench_tacotron.py` compares and how each is timed: aligner's
TTS model and ``torchaudio.models.Tacotron2`` in Tacotron 2's configuration, a random batch,
the training loss, one inference call of each, and the interleaved timer. Shared by
`bench_tacotron.py` and its inference paths (`bench_paths.py`); not run on its own.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

N_SYMBOLS = 148


def build_aligner(n_mels: int = 80) -> nn.Module:
    """aligner's TTS Tacotron in torchaudio's Tacotron2 configuration."""
    from aligner.models.tacotron.model import (
        DecoderConfig,
        PostnetConfig,
        Tacotron,
        TacotronConfig,
        TextEncoderConfig,
    )

    cfg = TacotronConfig(
        n_mels=n_mels,
        r=1,
        n_symbols=N_SYMBOLS,
        attention="location",
        attn_dim=128,
        attention_options={"filters": 32, "kernel_size": 31},
        encoder=TextEncoderConfig(embed_dim=512, out_dim=512, n_convs=3, kernel_size=5),
        decoder=DecoderConfig(
            prenet_dims=[256, 256],
            attn_rnn_dim=1024,
            dec_dim=1024,
            dec_layers=1,
            rnn_dropout=0.1,
        ),
        postnet=PostnetConfig(channels=512, n_convs=5, kernel_size=5),
    )
    return Tacotron.from_config(cfg)


def build_torchaudio(steps: int, n_mels: int = 80) -> nn.Module:
    """torchaudio.models.Tacotron2 with its defaults, stop disabled (the loss masks padding)."""
    from torchaudio.models import Tacotron2

    return Tacotron2(
        mask_padding=False,  # True breaks backward (in-place masked_fill_ in torchaudio 2.11)
        n_mels=n_mels,
        n_symbol=N_SYMBOLS,
        decoder_max_step=steps,
        decoder_early_stopping=False,
        gate_threshold=2.0,
    )


def random_batch(b: int, n: int, t: int, n_mels: int, device: torch.device, seed: int = 0):
    """tokens (B, N), token lengths (B,), mel (B, T, M), mel lengths (B,); lengths decreasing
    from the maximum to about 80 % of it."""
    g = torch.Generator().manual_seed(seed)
    tok_len = torch.linspace(n, max(1, int(0.8 * n)), b).round().long()
    mel_len = torch.linspace(t, max(1, int(0.8 * t)), b).round().long()
    tokens = torch.randint(4, N_SYMBOLS, (b, n), generator=g)
    tokens = tokens.masked_fill(torch.arange(n)[None] >= tok_len[:, None], 0)
    mel = torch.randn(b, t, n_mels, generator=g)
    mel = mel.masked_fill((torch.arange(t)[None] >= mel_len[:, None])[..., None], 0.0)
    return tokens.to(device), tok_len.to(device), mel.to(device), mel_len.to(device)


def tacotron_loss(mel, post, gate, target, mel_len) -> torch.Tensor:
    """Masked MSE before and after the postnet + stop BCE; mels (B, T, M), gate (B, T)."""
    mask = (torch.arange(target.size(1), device=target.device)[None] < mel_len[:, None]).float()
    stop = torch.zeros_like(mask)
    stop[torch.arange(len(mel_len)), mel_len - 1] = 1.0
    m = mask[..., None]
    mse = ((mel - target) ** 2 * m).sum() / m.sum() + ((post - target) ** 2 * m).sum() / m.sum()
    bce = F.binary_cross_entropy_with_logits(gate, stop, weight=mask, reduction="sum") / mask.sum()
    return mse + bce


def aligner_train_step(model, batch) -> None:
    tokens, tok_len, mel, mel_len = batch
    out = model(tokens, tok_len, mel, mel_len)
    tacotron_loss(out.mel, out.mel_post, out.stop_logits, mel, mel_len).backward()


def torchaudio_train_step(model, batch) -> None:
    tokens, tok_len, mel, mel_len = batch
    pre, post, gate, _ = model(tokens, tok_len, mel.transpose(1, 2), mel_len)
    tacotron_loss(pre.transpose(1, 2), post.transpose(1, 2), gate, mel, mel_len).backward()


def aligner_infer(model, tokens, lengths, steps: int) -> int:
    mel, out = model.generate(
        tokens, lengths, stop_threshold=2.0, max_length_ratio=1e9, max_steps=steps
    )
    return int(out.lengths.sum())


def torchaudio_infer(model, tokens, lengths, steps: int) -> int:
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Reached max decoder steps": intended here
        mel, mel_len, _ = model.infer(tokens, lengths)
    return int(mel_len.sum())


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_pair(
    fns: dict[str, Callable[[], object]], repeats: int, device: torch.device, autocast
) -> dict[str, list[float]]:
    """Run each function once to warm up, then `repeats` times interleaved, alternating
    which goes first (an order effect then hits both alike); seconds per run."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for rep in range(repeats + 1):
        for name in names if rep % 2 else names[::-1]:
            fn = fns[name]
            sync(device)
            start = time.perf_counter()
            with autocast():
                fn()
            sync(device)
            if rep > 0:
                times[name].append(time.perf_counter() - start)
    return times


def count(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
