"""Model families: what each trainable model is and what it can do, in one table.

A recipe names its **task** (what is learned from which data: ``tts``, ``vc``, ``align``,
``vocoder``, ``g2p``, ``nmt``, ``recognize``) and its **family** (the architecture that
learns it: ``tacotron``, ``forward_sum``, ``fastpitch``, ``fastvc``, ``vocos``, ``hifigan``,
``rnn_seq2seq``, ``ctc_recognizer``). A family serves
one or more tasks; for each it declares a `Role`: the trainer task that builds and trains
it (`aligner.tasks`), the class that uses it once trained (`aligner.inference`), and its
capabilities. Every caller (the trainer, inference, ``align``, ``synthesize``,
``convert``, the CLI, the demo) asks the role, never compares task names.

The table holds dotted paths, not imports: each layer imports the part it needs (the
trainer the task module, inference the runtime class), so this module sits on the bottom
floor and imports nothing of the package. A new family is one entry of `FAMILIES` plus
its own modules (network, task, runtime class, recipes).

Recipes and checkpoints written before recipes named a family take their task's
`DEFAULT_FAMILY` (a vocoder's the generator its ``model.kind`` named).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class FamilyError(ValueError):
    """A recipe or checkpoint names a family or task that does not fit; one line."""


@dataclass(frozen=True)
class Role:
    """What a family does for one task.

    task_module: the module whose ``build(cfg, data_dir)`` makes the trainer task.
    runtime: ``module:Class`` of the trained model ready for use (`aligner.inference`).
    reads: what its source is: ``text`` (token ids), ``mel`` (a source speaker's
        mel) or ``words`` / ``sentences`` (the text tasks' inputs).
    writes: what it produces: ``mel``, ``wave``, ``tokens`` or ``alignment``.
    free_running: it decodes a whole output from its source alone (``synthesize``,
        ``convert``, ``g2p``, ``translate``).
    aligns: it aligns a recording with its source (``align``): teacher-forced attention,
        or the path of an alignment model.
    hard_alignment: its alignment is a monotonic path over frames (the alignment model's
        durations: word separators take the pauses, phone edges lie between frames), not
        attention weights over decoder steps.
    skips_suspect / repeats_suspect: whether a skipped / repeated token marks a suspect
        alignment (a VC source's frames may be passed over; an alignment model's
        frame-level argmax flickers at boundaries).
    paced: it predicts its own durations, so it speaks at any rate (``--pace``).
    """

    task_module: str
    runtime: str
    reads: str
    writes: str
    free_running: bool = False
    aligns: bool = False
    hard_alignment: bool = False
    skips_suspect: bool = True
    repeats_suspect: bool = True
    paced: bool = False
    verb: str = ""


@dataclass(frozen=True)
class Family:
    """A model family: its name, what it is, and its role for each task it serves."""

    name: str
    describe: str
    roles: Mapping[str, Role] = field(default_factory=dict)


FAMILIES: dict[str, Family] = {
    "tacotron": Family(
        "tacotron",
        "Tacotron 2: encoder, attention decoder on any mechanism of the core, postnet",
        {
            "tts": Role(
                "aligner.tasks.tts",
                "aligner.inference.tacotron:TTSModel",
                "text",
                "mel",
                free_running=True,
                aligns=True,
                verb="aligner synthesize",
            ),
            "vc": Role(
                "aligner.tasks.vc",
                "aligner.inference.tacotron:VCModel",
                "mel",
                "mel",
                free_running=True,
                aligns=True,
                skips_suspect=False,
                verb="aligner convert",
            ),
        },
    ),
    "forward_sum": Family(
        "forward_sum",
        "the alignment model: convolution encoders, a prior, forward-sum loss, hard durations",
        {
            "align": Role(
                "aligner.tasks.align",
                "aligner.inference.forward_sum:AlignModel",
                "text",
                "alignment",
                aligns=True,
                hard_alignment=True,
                repeats_suspect=False,
                verb="aligner align",
            ),
        },
    ),
    "fastpitch": Family(
        "fastpitch",
        "FastPitch: FFT encoder, duration, pitch and energy predictors, parallel decoder",
        {
            "tts": Role(
                "aligner.tasks.fastpitch",
                "aligner.inference.fastpitch:FastPitchModel",
                "text",
                "mel",
                free_running=True,
                aligns=True,
                paced=True,
                verb="aligner synthesize",
            ),
        },
    ),
    "fastvc": Family(
        "fastvc",
        "non-autoregressive VC: source mel encoder, target frames per step, parallel decoder",
        {
            "vc": Role(
                "aligner.tasks.fastvc",
                "aligner.inference.fastvc:FastVCModel",
                "mel",
                "mel",
                free_running=True,
                aligns=True,
                skips_suspect=False,
                paced=True,
                verb="aligner convert",
            ),
        },
    ),
    "vocos": Family(
        "vocos",
        "Vocos: ConvNeXt blocks at the frame rate and an inverse STFT",
        {
            "vocoder": Role(
                "aligner.tasks.vocoder",
                "aligner.models.vocoders.base:ToolkitVocoder",
                "mel",
                "wave",
            )
        },
    ),
    "hifigan": Family(
        "hifigan",
        "HiFi-GAN: transposed-convolution generator, trained with its discriminators",
        {
            "vocoder": Role(
                "aligner.tasks.vocoder",
                "aligner.models.vocoders.base:ToolkitVocoder",
                "mel",
                "wave",
            )
        },
    ),
    "rnn_seq2seq": Family(
        "rnn_seq2seq",
        "BiGRU encoder, GRU decoder with Bahdanau or Luong attention",
        {
            "g2p": Role(
                "aligner.tasks.text",
                "aligner.inference.text:TextModel",
                "words",
                "tokens",
                free_running=True,
                verb="aligner g2p",
            ),
            "nmt": Role(
                "aligner.tasks.text",
                "aligner.inference.text:TextModel",
                "sentences",
                "tokens",
                free_running=True,
                verb="aligner translate",
            ),
        },
    ),
    "ctc_recognizer": Family(
        "ctc_recognizer",
        "a CTC phone recognizer: convolutions (time subsampled), BiGRU layers, greedy decoding",
        {
            "recognize": Role(
                "aligner.tasks.recognizer",
                "aligner.inference.recognizer:PhoneRecognizer",
                "mel",
                "tokens",
                verb="scripts/phone_error_rate.py",
            )
        },
    ),
}

DEFAULT_FAMILY: dict[str, str] = {
    "tts": "tacotron",
    "vc": "tacotron",
    "align": "forward_sum",
    "vocoder": "vocos",
    "g2p": "rnn_seq2seq",
    "nmt": "rnn_seq2seq",
    "recognize": "ctc_recognizer",
}


def family_name(config: Mapping[str, Any]) -> str:
    """The family a recipe or checkpoint config (``{"task", "family"?, "model"?}``) names:
    its ``family``, else its task's default (a vocoder's: the ``model.kind`` it named).
    Empty for a task no family serves (a user's own task module)."""
    if config.get("family"):
        return str(config["family"])
    task = str(config.get("task") or "")
    if task == "vocoder":
        return str((config.get("model") or {}).get("kind") or DEFAULT_FAMILY[task])
    return DEFAULT_FAMILY.get(task, "")


def role(family: str, task: str) -> Role:
    """The `Role` of `family` for `task`; FamilyError naming the valid choices."""
    if family not in FAMILIES:
        raise FamilyError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
    roles = FAMILIES[family].roles
    if task not in roles:
        raise FamilyError(
            f"the {family} family does not train task {task!r}; it trains {', '.join(roles)}"
        )
    return roles[task]


def families_for(task: str) -> list[str]:
    """The families that serve `task`."""
    return [name for name, fam in FAMILIES.items() if task in fam.roles]
