"""Small model builders shared by the model tests."""

from __future__ import annotations

import torch

from aligner.models.tacotron.decoder import TacotronDecoder
from aligner.models.tacotron.model import Tacotron, TacotronConfig

N_MELS, MEM = 4, 8


def small_decoder(
    r: int = 1, attention: str = "location", dim: int = 16, **opts
) -> TacotronDecoder:
    """A tiny deterministic (eval, prenet dropout off) decoder over memory of size MEM."""
    dec = TacotronDecoder(
        N_MELS,
        MEM,
        r,
        prenet_dims=(8, 8),
        attn_rnn_dim=dim,
        attention=attention,
        attn_dim=8,
        attention_options=opts,
        dec_dim=16,
        dec_layers=2,
    )
    dec.prenet.always_dropout = False
    return dec.eval()


def small_tts(r: int = 2, attention: str = "location", n_symbols: int = 12, **dec) -> Tacotron:
    cfg = TacotronConfig.from_dict(
        {
            "n_mels": N_MELS,
            "r": r,
            "n_symbols": n_symbols,
            "encoder": {"embed_dim": 16, "out_dim": 16},
            "attention": attention,
            "attn_dim": 8,
            "decoder": {
                "attn_rnn_dim": 16,
                "dec_dim": 16,
                "dec_layers": 2,
                "prenet_dims": [8, 8],
                **dec,
            },
            "postnet": {"channels": 8},
        }
    )
    return Tacotron.from_config(cfg)


def padded(lengths: list[int], dim: int, max_len: int | None = None) -> torch.Tensor:
    """Random (B, max_len, dim) with zeros past each length."""
    t = max_len or max(lengths)
    x = torch.randn(len(lengths), t, dim)
    for i, n in enumerate(lengths):
        x[i, n:] = 0
    return x
