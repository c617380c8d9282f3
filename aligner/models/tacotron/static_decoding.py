"""Free-running Tacotron decoding in steps of one fixed shape, replayable as a CUDA graph.

`TacotronDecoder.generate` lets finished items leave the batch and asks the device after
every step whether an item stopped: right on a CPU, where a step is bound by reading the
weights, but on a GPU a batch-1 step is a chain of small kernels bound by their launches,
and each stop check is a host sync. `generate_static` decodes the same way with every
shape fixed: finished items stay in the batch (their later frames are masked away), the
step writes its outputs at a step counter that lives on the device, the stop bookkeeping
is tensor arithmetic, and the host looks at the stop flags once every ``check_every``
steps. A step is then a fixed chain of kernels with static inputs and outputs, so on a
GPU it is captured once as a CUDA graph (``graph=True``) and replayed: one launch a step,
one sync every ``check_every`` steps.

The result equals `TacotronDecoder.generate`'s (the same lengths and stop flags; frames,
stop logits and attention within rounding, since a batch that keeps its finished items
multiplies matrices of another shape). Prenet dropout, when on, draws from the graph-safe
generator of the device (other random numbers than the eager loop's). Under
``torch.autocast`` the capture turns the weight cast cache off (a CUDA graph requirement).
A graph is captured per call (its buffers hold that call's memory): the cost of
`WARMUP` eager steps and one capture, paid once per batch.

    out = generate_static(decoder, memory, mask, stop_threshold=0.5, graph=True)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass
from typing import Any

import torch
from torch import nn

from aligner.attention.base import lengths_to_mask
from aligner.models.tacotron.steps import DecoderOutput, stop_cut

CHECK_EVERY = 16  # decoder steps between two looks at the stop flags
WARMUP = 2  # eager steps before a graph capture (on a side stream, as CUDA graphs need)


def state_tensors(state: Any) -> Iterator[torch.Tensor]:
    """Every tensor of a decoder state, in a fixed order (dataclass fields, tuples, dicts
    by key; None skipped)."""
    if isinstance(state, torch.Tensor):
        yield state
    elif is_dataclass(state):
        for f in fields(state):
            yield from state_tensors(getattr(state, f.name))
    elif isinstance(state, (tuple, list)):
        for item in state:
            yield from state_tensors(item)
    elif isinstance(state, dict):
        for key in sorted(state):
            yield from state_tensors(state[key])
    elif state is not None:
        raise TypeError(f"a decoder state holds tensors, tuples and dicts, got {type(state)}")


def distinct(state: Any, seen: set[int] | None = None) -> Any:
    """`state` with a tensor that appears twice (an initial state may give two fields one
    zero tensor) cloned, so that every field has a buffer of its own to be written. Only
    the same tensor object counts: two views of one storage would still share it (no
    decoder state has such views today)."""
    seen = set() if seen is None else seen
    if isinstance(state, torch.Tensor):
        if id(state) in seen:
            return state.clone()
        seen.add(id(state))
        return state
    if is_dataclass(state):
        return type(state)(
            **{f.name: distinct(getattr(state, f.name), seen) for f in fields(state)}
        )
    if isinstance(state, (tuple, list)):
        return type(state)(distinct(item, seen) for item in state)
    if isinstance(state, dict):
        return {key: distinct(value, seen) for key, value in state.items()}
    return state


def copy_state(target: Any, source: Any) -> None:
    """Copy `source`'s tensors into `target`'s (the same structure), in place; a tensor
    the step passed on unchanged (keys, memory, mask) is not copied onto itself."""
    targets, sources = list(state_tensors(target)), list(state_tensors(source))
    if len(targets) != len(sources):
        raise ValueError(f"states differ: {len(targets)} tensors against {len(sources)}")
    # a tensor the step moved to another field is copied before its old field is written
    moved = [s is not d and any(s is t for t in targets) for d, s in zip(targets, sources)]
    sources = [s.clone() if m else s for s, m in zip(sources, moved)]
    for dst, src in zip(targets, sources):
        if dst is not src:
            dst.copy_(src)


class StaticSteps:
    """The buffers of a static decode and one step over them.

    Args:
        decoder: a `TacotronDecoder` (eval mode for inference).
        memory: ``(B, T_enc, D)`` encoder output; mask ``(B, T_enc)`` bool.
        limit: ``(B,)`` long, the most steps each item may take.
        cut: the stop logit an item stops above (`stop_cut`).
    """

    def __init__(
        self,
        decoder: nn.Module,
        memory: torch.Tensor,
        mask: torch.Tensor,
        limit: torch.Tensor,
        cut: float,
    ) -> None:
        b, r, m = memory.size(0), decoder.r, decoder.n_mels
        self.decoder, self.limit, self.cut = decoder, limit, cut
        self.size = int(limit.max())  # steps of the longest item
        room = self.size + WARMUP  # a capture's warm-up writes its steps too
        self.state = distinct(decoder.init_state(memory, mask))
        self.frame = memory.new_zeros(b, m)
        self.counter = torch.zeros(1, dtype=torch.long, device=memory.device)
        self.done = torch.zeros(b, dtype=torch.bool, device=memory.device)
        self.steps = limit.clone()  # decoder steps each item took (the limit until it stops)
        self.hit_max = torch.ones_like(self.done)  # until an item's stop fires
        self.frames = memory.new_zeros(b, room, r, m)
        self.stop_logits = memory.new_zeros(b, room)
        self.weights = memory.new_zeros(b, room, memory.size(1))
        self._start = [t.clone() for t in self._mutable()]

    def _mutable(self) -> list[torch.Tensor]:
        """The buffers a step writes (what `reset` restores)."""
        fixed = (self.state.attention.keys, self.state.attention.values, self.state.attention.mask)
        state = [t for t in state_tensors(self.state) if not any(t is f for f in fixed)]
        outputs = [self.frames, self.stop_logits, self.weights]
        return [*state, self.frame, self.counter, self.done, self.steps, self.hit_max, *outputs]

    def reset(self) -> None:
        """Back to before the first step (after a warm-up or a graph capture)."""
        for buffer, start in zip(self._mutable(), self._start, strict=True):
            buffer.copy_(start)

    def step(self) -> None:
        """One decoder step for every item, finished or not; no host sync."""
        frames, stop, weights, state = self.decoder.step(self.frame, self.state)
        at = self.counter
        self.frames.index_copy_(1, at, frames[:, None].to(self.frames.dtype))
        self.stop_logits.index_copy_(1, at, stop[:, None].to(self.stop_logits.dtype))
        self.weights.index_copy_(1, at, weights[:, None].to(self.weights.dtype))
        fired = (stop > self.cut) & ~self.done
        self.steps.copy_(torch.where(fired, at + 1, self.steps))
        self.hit_max.masked_fill_(fired, False)
        self.done.copy_(self.done | fired | (self.limit <= at + 1))
        self.frame.copy_(frames[:, -1])
        copy_state(self.state, state)
        self.counter.add_(1)

    def capture(self) -> Callable[[], None]:
        """A CUDA graph of `step` (`WARMUP` steps on a side stream first, as CUDA graphs
        need); the buffers are reset after. Under autocast the weight cast cache is off
        while capturing (a cached cast would outlive the graph). Returns its replay."""
        cast = contextlib.nullcontext()
        if torch.is_autocast_enabled("cuda"):
            dtype = torch.get_autocast_dtype("cuda")
            cast = torch.autocast("cuda", dtype=dtype, cache_enabled=False)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with cast:
            with torch.cuda.stream(side):
                for _ in range(WARMUP):
                    self.step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                self.step()
        self.reset()
        return graph.replay

    def output(self) -> DecoderOutput:
        """The decode as `DecoderOutput`: mel (B, T, M) zero past each item's length, stop
        logits -inf and attention zero past its last step."""
        n = int(self.steps.max())
        past = torch.arange(n, device=self.steps.device)[None] >= self.steps[:, None]
        lengths = self.steps * self.decoder.r
        mel = self.frames[:, :n].flatten(1, 2)
        mel = mel.masked_fill(~lengths_to_mask(lengths, mel.size(1))[..., None], 0.0)
        stop = self.stop_logits[:, :n].masked_fill(past, -math.inf)
        weights = self.weights[:, :n].masked_fill(past[..., None], 0.0)
        return DecoderOutput(mel, stop, weights, lengths, self.hit_max.clone())


@torch.no_grad()
def generate_static(
    decoder: nn.Module,
    memory: torch.Tensor,
    mask: torch.Tensor,
    stop_threshold: float = 0.5,
    max_length_ratio: float = 10.0,
    max_steps: int | None = None,
    check_every: int = CHECK_EVERY,
    graph: bool = False,
) -> DecoderOutput:
    """`TacotronDecoder.generate` with fixed shapes: memory (B, T_enc, D), mask (B, T_enc)
    bool -> `DecoderOutput` (mel (B, T, M) zero past ``lengths``, stop logits (B, S),
    alignments (B, S, T_enc), lengths (B,), hit_max (B,)) as `generate` returns it. The
    stop flags are read every `check_every` steps; ``graph=True`` (a CUDA memory only)
    replays each step as a CUDA graph."""
    if check_every < 1:
        raise ValueError(f"check_every must be at least 1, got {check_every}")
    if graph and not memory.is_cuda:
        raise ValueError(f"graph=True needs the model on a CUDA device, not {memory.device}")
    limit = torch.ceil(mask.sum(1).float() * max_length_ratio / decoder.r).long().clamp_min(1)
    if max_steps is not None:
        limit = limit.clamp_max(max_steps)
    steps = StaticSteps(decoder, memory, mask, limit, stop_cut(stop_threshold))
    step = steps.capture() if graph else steps.step
    for s in range(1, steps.size + 1):
        step()
        if s % check_every == 0 and bool(steps.done.all()):  # the one host sync
            break
    return steps.output()
