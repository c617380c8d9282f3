"""The text seq2seq model of a recipe's ``model:`` section (G2P, NMT): its typed options
and the model they build, for training (`aligner.tasks.text`) and for loading a
checkpoint (`aligner.inference.text_models`) alike."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch

from aligner.config import from_dict
from aligner.models.seq2seq.model import Seq2Seq, build_seq2seq

# options of the task (loss, validation, decoding defaults), not of the network
TASK_OPTIONS = frozenset(
    {"label_smoothing", "valid_beam", "length_penalty", "max_len_ratio", "plot_items"}
)


@dataclass
class TextModelConfig:
    """`model:` section: `build_seq2seq` arguments plus loss and validation decoding."""

    decoder: Literal["bahdanau", "luong"] = "bahdanau"
    emb_dim: int = 128
    enc_hidden: int = 256
    enc_layers: int = 1
    dec_hidden: int = 512
    dec_layers: int = 1
    attention: str = "additive"
    attn_dim: int = 256
    attention_options: dict[str, Any] | None = None
    out_dim: int = 256
    dropout: float = 0.2
    bridge: bool = True
    input_feeding: bool = True
    label_smoothing: float = 0.1
    valid_beam: int = 1
    length_penalty: float = 0.0
    max_len_ratio: float = 2.0
    plot_items: int = 3


def build_model(opts: TextModelConfig, src_vocab: int, tgt_vocab: int) -> Seq2Seq:
    """The `Seq2Seq` of a `model:` section."""
    kwargs = {k: v for k, v in asdict(opts).items() if k not in TASK_OPTIONS}
    return build_seq2seq(src_vocab, tgt_vocab, **kwargs)


def from_checkpoint_config(
    model_section: dict[str, Any],
    src_vocab: int,
    tgt_vocab: int,
    state_dict: dict[str, torch.Tensor],
) -> tuple[Seq2Seq, TextModelConfig]:
    """The model of a checkpoint's ``config["model"]`` with its weights, and its options."""
    opts = from_dict(TextModelConfig, model_section, where="model")
    model = build_model(opts, src_vocab, tgt_vocab)
    model.load_state_dict(state_dict)
    return model, opts
