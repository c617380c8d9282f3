"""Tacotron (TTS and VC) from config, on every registered attention mechanism."""

from __future__ import annotations

import pytest
import torch

from aligner.attention import available
from aligner.config import ConfigError
from aligner.models.tacotron.encoders import MelEncoder, TextEncoder
from aligner.models.tacotron.model import Tacotron, TacotronConfig
from aligner.tasks.speech_losses import GuidedSchedule, TacotronLossConfig, tacotron_loss

from .helpers import N_MELS, padded, small_tts


def _batch(n_symbols: int = 12) -> tuple[torch.Tensor, ...]:
    tok_lengths, mel_lengths = torch.tensor([6, 4, 5]), torch.tensor([10, 7, 9])
    tokens = torch.randint(4, n_symbols, (3, 6))
    for i, n in enumerate(tok_lengths.tolist()):
        tokens[i, n:] = 0
    return tokens, tok_lengths, padded(mel_lengths.tolist(), N_MELS), mel_lengths


def test_config_round_trip_and_errors() -> None:
    raw = {"n_mels": 40, "r": 3, "n_symbols": 50, "attention": "dca", "decoder": {"dec_layers": 2}}
    cfg = TacotronConfig.from_dict(raw)
    assert cfg.attention == "dca" and cfg.decoder.dec_layers == 2 and cfg.encoder.kind == "text"
    assert TacotronConfig.from_dict(cfg.to_dict()) == cfg
    vc = TacotronConfig.from_dict({"encoder": {"kind": "mel", "reduction": 2}})
    assert vc.encoder.reduction == 2 and isinstance(Tacotron.from_config(vc).encoder, MelEncoder)
    with pytest.raises(ConfigError, match="model.decoder.attn_dimm"):
        TacotronConfig.from_dict({"decoder": {"attn_dimm": 3}})
    with pytest.raises(ConfigError, match="decoder.attention .'gmm'. and model.attention"):
        TacotronConfig.from_dict({"attention": "dca", "decoder": {"attention": "gmm"}})
    with pytest.raises(ConfigError, match="encoder.kind"):
        TacotronConfig.from_dict({"encoder": {"kind": "wav"}})
    with pytest.raises(ValueError, match="n_symbols"):
        Tacotron.from_config(TacotronConfig())


def test_old_decoder_attention_keys_still_load() -> None:
    """Recipes and checkpoints of aligner <= 0.1 kept the attention under model.decoder."""
    old = {
        "n_symbols": 5,
        "decoder": {
            "attention": "gmm",
            "attn_dim": 7,
            "dec_layers": 2,
            "attention_opts": {"components": 3},
        },
    }
    new = {
        "n_symbols": 5,
        "attention": "gmm",
        "attn_dim": 7,
        "decoder": {"dec_layers": 2},
        "attention_options": {"components": 3},
    }
    assert TacotronConfig.from_dict(old) == TacotronConfig.from_dict(new)
    assert old["decoder"]["attention"] == "gmm"  # the caller's dict is left as it was


def test_forward_masks_padded_frames() -> None:
    model = small_tts(r=2)
    assert isinstance(model.encoder, TextEncoder)
    tokens, tl, mel, ml = _batch()
    out = model(tokens, tl, mel, ml)
    assert out.mel_post.shape == (3, 10, N_MELS) and out.alignments.shape == (3, 5, 6)
    assert out.mel_post[1, 7:].abs().max() == 0 and out.mel[2, 9:].abs().max() == 0
    assert out.enc_mask.sum(1).tolist() == [6, 4, 5]


@pytest.mark.parametrize("name", available())
def test_trains_and_generates_with_every_mechanism(name: str) -> None:
    model = small_tts(r=2, attention=name)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens, tl, mel, ml = _batch()
    cfg = TacotronLossConfig(guided=GuidedSchedule(1.0, "constant"))
    for step in range(2):
        loss, parts = tacotron_loss(model(tokens, tl, mel, ml), mel, ml, 2, step, cfg)
        opt.zero_grad()
        loss.backward()
        assert torch.isfinite(loss) and parts["guided"] > 0
        grads = [p.grad for p in model.parameters() if p.requires_grad]
        assert all(g is not None and torch.isfinite(g).all() for g in grads)
        opt.step()
    model.eval()
    post, out = model.generate(tokens, tl, max_steps=4, window=(1, 2))
    assert post.shape == (3, int(out.lengths.max()), N_MELS) and torch.isfinite(post).all()
    assert (out.lengths <= 8).all()


@pytest.mark.slow
def test_overfits_a_few_items() -> None:
    torch.manual_seed(0)
    model = small_tts(r=2, n_symbols=12, prenet_dropout=0.1)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.1
    tokens, tl, mel, ml = _batch()
    mel = (
        torch.sin(torch.linspace(0, 6, 10))[None, :, None]
        * torch.arange(1, N_MELS + 1)
        * (ml[:, None, None] > torch.arange(10)[None, :, None])
    )
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    cfg = TacotronLossConfig()
    losses = []
    for step in range(200):
        loss, _ = tacotron_loss(model(tokens, tl, mel, ml), mel, ml, 2, step, cfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.2 * losses[0]
