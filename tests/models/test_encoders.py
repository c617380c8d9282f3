"""Text and mel encoders: masks, reduced lengths, padding invariance."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aligner.attention.base import lengths_to_mask
from aligner.models.tacotron.encoders import MelEncoder, TextEncoder

from .helpers import padded


@given(st.lists(st.integers(1, 9), min_size=1, max_size=5))
@settings(max_examples=25, deadline=None)
def test_lengths_to_mask_counts(lengths: list[int]) -> None:
    mask = lengths_to_mask(torch.tensor(lengths), 12)
    assert mask.shape == (len(lengths), 12)
    assert mask.sum(1).tolist() == lengths
    assert (mask.int().diff(dim=1) <= 0).all()  # valid positions form a prefix


def test_text_encoder_batch_equals_items() -> None:
    enc = TextEncoder(20, embed_dim=16, out_dim=12).eval()
    lengths = [7, 3, 5]
    tokens = torch.randint(4, 20, (3, 7))
    for i, n in enumerate(lengths):
        tokens[i, n:] = 0
    memory, mask = enc(tokens, torch.tensor(lengths))
    assert memory.shape == (3, 7, 12) and mask.sum(1).tolist() == lengths
    for i, n in enumerate(lengths):
        alone, _ = enc(tokens[i : i + 1, :n], torch.tensor([n]))
        torch.testing.assert_close(memory[i, :n], alone[0], atol=1e-5, rtol=1e-5)
        assert memory[i, n:].abs().max() == 0 if n < 7 else True


@pytest.mark.parametrize("mode", ["stride", "pool"])
@pytest.mark.parametrize("reduction", [1, 2, 3])
def test_mel_encoder_reduction_and_padding(mode: str, reduction: int) -> None:
    enc = MelEncoder(
        5, prenet_dims=(8,), conv_dim=8, out_dim=10, reduction=reduction, reduce_mode=mode
    )
    enc.eval()
    lengths = [11, 4, 7]
    mel = padded(lengths, 5)
    memory, mask = enc(mel, torch.tensor(lengths))
    expected = [-(-n // reduction) for n in lengths]
    assert memory.shape == (3, -(-11 // reduction), 10)
    assert mask.sum(1).tolist() == expected
    for i, n in enumerate(lengths):
        alone, _ = enc(mel[i : i + 1, :n], torch.tensor([n]))
        torch.testing.assert_close(memory[i, : expected[i]], alone[0], atol=1e-5, rtol=1e-5)


def test_mel_encoder_pool_is_masked_average() -> None:
    enc = MelEncoder(3, reduction=3, reduce_mode="pool")
    x = torch.arange(2 * 7 * 1, dtype=torch.float).reshape(2, 7, 1)
    mask = lengths_to_mask(torch.tensor([7, 4]), 7)
    pooled = enc._pool(x, mask)
    # item 0: windows [0,1,2] [3,4,5] [6]; item 1 (length 4): [7,8,9] [10] [nothing]
    assert pooled[0, :, 0].tolist() == [1.0, 4.0, 6.0]
    assert pooled[1, :, 0].tolist() == [8.0, 10.0, 0.0]


def test_bad_options_raise() -> None:
    with pytest.raises(ValueError, match="reduce_mode"):
        MelEncoder(3, reduce_mode="max")
    with pytest.raises(ValueError, match="even"):
        TextEncoder(10, out_dim=7)
