"""Free-running decoding with a per-item stop, the items that stopped dropped from the
batch as they stop (`TacotronDecoder.generate`; its fixed-shape twin for CUDA graphs is
`aligner.models.tacotron.static_decoding`)."""

from __future__ import annotations

import math

import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.models.tacotron.steps import DecoderOutput, stop_cut


def generate_dynamic(
    dec: nn.Module,
    memory: torch.Tensor,
    mask: torch.Tensor,
    threshold: float,
    ratio: float,
    max_steps: int | None,
) -> DecoderOutput:
    """Free-running decoding of `dec` over ``memory (B, T_enc, D)``, ``mask (B, T_enc)``:
    an item stops at the first step whose stop logit passes ``stop_cut(threshold)`` or at
    ``ceil(ratio * source length / r)`` steps (capped by `max_steps`; ``hit_max``), and
    then leaves the batch, so later steps cost only the items still decoding. Returns mel
    (B, T, M) zero past ``lengths``, stop logits (-inf past an item's end) and weights."""
    b = memory.size(0)
    limit = torch.ceil(mask.sum(1).float() * ratio / dec.r).long().clamp_min(1)
    if max_steps is not None:
        limit = limit.clamp_max(max_steps)
    cut = stop_cut(threshold)
    state = dec.init_state(memory, mask)
    n_steps = int(limit.max())
    size = min(n_steps, 256)  # buffers grow as decoding goes on
    frames_out = memory.new_zeros(b, size, dec.r, dec.n_mels)
    stop_logits = memory.new_full((b, size), -math.inf)  # -inf past an item's end
    weights = memory.new_zeros(b, size, memory.size(1))
    steps = limit.clone()  # decoder steps each item took
    hit_max = torch.ones_like(limit, dtype=torch.bool)  # until an item's stop fires
    active = torch.arange(b, device=memory.device)  # the items still decoding
    rows: slice | torch.Tensor = slice(None)  # where they are (all: a plain copy)
    active_limit = limit
    frame = memory.new_zeros(b, dec.n_mels)
    for s in range(n_steps):
        if s == frames_out.size(1):
            frames_out, stop_logits, weights = (
                torch.cat([t, torch.full_like(t, fill)], 1)
                for t, fill in ((frames_out, 0.0), (stop_logits, -math.inf), (weights, 0.0))
            )
        frames, stop, w, state = dec.step(frame, state)
        frames_out[rows, s] = frames
        stop_logits[rows, s] = stop
        weights[rows, s] = w
        stopped = stop > cut
        ended = stopped | (active_limit <= s + 1)
        if bool(ended.any()):
            steps[active[stopped]] = s + 1
            hit_max[active[stopped]] = False
            if bool(ended.all()):
                break
            # finished items leave the batch: later steps cost only the rest
            keep = (~ended).nonzero().squeeze(1)
            active, state, frames = active[keep], state.index_select(keep), frames[keep]
            rows, active_limit = active, active_limit[keep]
        frame = frames[:, -1]
    lengths = steps * dec.r
    mel = frames_out[:, : int(steps.max())].flatten(1, 2)
    valid = lengths_to_mask(lengths, mel.size(1))
    mel = mel.masked_fill(~valid[..., None], 0.0)
    n = int(steps.max())
    return DecoderOutput(mel, stop_logits[:, :n], weights[:, :n], lengths, hit_max)
