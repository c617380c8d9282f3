"""Collate functions: lists of dataset examples -> padded batch dicts with lengths and masks.

Masks are bool with ``True`` = valid position. Token padding is ``<pad>`` (id 0);
mel padding is 0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.nn.utils.rnn import pad_sequence

from aligner.attention.base import lengths_to_mask
from aligner.text.symbols import SymbolTable

PAD_ID = SymbolTable.pad_id
BOS_ID = SymbolTable.bos_id
EOS_ID = SymbolTable.eos_id


def pad(
    seqs: Sequence[torch.Tensor], value: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad ``(L_i, ...)`` tensors along dim 0.

    Returns:
        ``(padded (B, L_max, ...), lengths (B,) long, mask (B, L_max) bool)``.
    """
    if not seqs:
        raise ValueError("cannot collate an empty batch")
    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=value)
    return padded, lengths, lengths_to_mask(lengths, padded.shape[1])


def length_batches(
    lengths: Sequence[int], size: int, longest_first: bool = False
) -> list[list[int]]:
    """Indices ``0..len(lengths)-1`` grouped into batches of at most `size` items of similar
    length, shortest first (or longest first), each index once; equal lengths keep their
    order. Padding a batch then costs little."""
    if size < 1:
        raise ValueError(f"batch size must be >= 1, got {size}")
    sign = -1 if longest_first else 1
    order = sorted(range(len(lengths)), key=lambda i: sign * lengths[i])
    return [order[i : i + size] for i in range(0, len(order), size)]


def collate_tts(examples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """TTS batch: ``ids``, ``tokens (B, N)``, ``token_lengths``, ``token_mask``,
    ``mel (B, T, M)``, ``mel_lengths``, ``mel_mask``, ``speakers``."""
    tokens, token_lengths, token_mask = pad([e["tokens"] for e in examples], PAD_ID)
    mel, mel_lengths, mel_mask = pad([e["mel"] for e in examples])
    return {
        "ids": [e["id"] for e in examples],
        "tokens": tokens,
        "token_lengths": token_lengths,
        "token_mask": token_mask,
        "mel": mel,
        "mel_lengths": mel_lengths,
        "mel_mask": mel_mask,
        "speakers": [e.get("speaker") for e in examples],
    }


def collate_vc(examples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """VC batch: ``ids``, ``src_mel (B, S, M)``, ``src_lengths``, ``src_mask``,
    ``mel (B, T, M)``, ``mel_lengths``, ``mel_mask``."""
    src, src_lengths, src_mask = pad([e["src_mel"] for e in examples])
    mel, mel_lengths, mel_mask = pad([e["mel"] for e in examples])
    return {
        "ids": [e["id"] for e in examples],
        "src_mel": src,
        "src_lengths": src_lengths,
        "src_mask": src_mask,
        "mel": mel,
        "mel_lengths": mel_lengths,
        "mel_mask": mel_mask,
    }


def collate_text(examples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Text batch: ``ids``, ``src (B, N)``, ``src_lengths``, ``src_mask``,
    ``tgt_in (B, U)`` = ``<s> y``, ``tgt_out (B, U)`` = ``y </s>``, ``tgt_lengths`` (= U_i,
    counting the added symbol), ``tgt_mask``."""
    src, src_lengths, src_mask = pad([e["src"] for e in examples], PAD_ID)
    bos = torch.tensor([BOS_ID], dtype=torch.long)
    eos = torch.tensor([EOS_ID], dtype=torch.long)
    tgt_in, tgt_lengths, tgt_mask = pad([torch.cat([bos, e["tgt"]]) for e in examples], PAD_ID)
    tgt_out, _, _ = pad([torch.cat([e["tgt"], eos]) for e in examples], PAD_ID)
    return {
        "ids": [e["id"] for e in examples],
        "src": src,
        "src_lengths": src_lengths,
        "src_mask": src_mask,
        "tgt_in": tgt_in,
        "tgt_out": tgt_out,
        "tgt_lengths": tgt_lengths,
        "tgt_mask": tgt_mask,
    }
