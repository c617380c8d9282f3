"""The CTC phone recognizer ready for use (`aligner.families`: ``ctc_recognizer``):
recordings -> the sounds heard in them, and the phone error rate of a set of recordings
against their texts (whether synthesized or converted speech can be understood).

    model = load_model("exp/recognizer")              # a PhoneRecognizer
    model.recognize([wav])                            # [["h", "ə", "l", "ˈoʊ"]]
    report = phone_error_rate(model, read_manifest("exp/vc/converted/manifest.jsonl"))
    report.per, report.items, report.bad

The references are the texts' tokens that are sounds, as the recognizer was trained on
(the checkpoint's tokenizer; separators, punctuation and specials dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import torch

from aligner.alignment.tiers import optional_tokens
from aligner.audio.features import log_mel
from aligner.audio.io import load_audio
from aligner.data.collate import length_batches, pad
from aligner.inference.common import InferenceError
from aligner.inference.speech import TextSpeechModel
from aligner.models.recognizer import CTCRecognizer, greedy_decode
from aligner.models.vocoders.base import GriffinLimVocoder
from aligner.text.metrics import edit_distance


@dataclass
class PhoneRecognizer(TextSpeechModel):
    """A trained CTC phone recognizer (family ``ctc_recognizer``): waveforms -> sounds."""

    network: ClassVar[type] = CTCRecognizer

    def reference(self, text: str) -> list[str]:
        """The sounds of `text`: its tokens without separators, punctuation, specials."""
        tokens = self.tokenizer.tokenize(text)
        return [t for t, skip in zip(tokens, optional_tokens(tokens)) if not skip]

    @torch.no_grad()
    def recognize(self, wavs: Sequence[torch.Tensor], batch_size: int = 16) -> list[list[str]]:
        """Waveforms ``(L_i,)`` at ``mel_cfg.sample_rate`` -> the sounds of each (greedy
        CTC), decoded in batches of similar length."""
        mels = [self.target_mel(w.float()) for w in wavs]
        out: list[list[str]] = [[] for _ in wavs]
        for idx in length_batches([len(m) for m in mels], batch_size, longest_first=True):
            mel, lengths, _ = pad([mels[i].to(self.device) for i in idx])
            log_probs, out_lengths = self.model(mel, lengths.to(self.device))
            for i, ids in zip(idx, greedy_decode(log_probs, out_lengths)):
                out[i] = self.symbols.decode(ids)
        return out

    def load(self, path: str | Path) -> torch.Tensor:
        """An audio file as a waveform at the model's rate (AudioError, one line)."""
        wav, _ = load_audio(path, self.mel_cfg.sample_rate, self.mel_cfg.win_length)
        return wav


@dataclass
class PERReport:
    """Phone error rate of a set of recordings: ``per`` (%, edits over reference sounds),
    the summed ``edits`` and ``phones``, the ``items`` scored, per item its
    ``(edits, phones, hypothesis)``, and one line per item left out (``bad``)."""

    edits: int = 0
    phones: int = 0
    scored: dict[str, tuple[int, int, list[str]]] = field(default_factory=dict)
    bad: list[str] = field(default_factory=list)

    @property
    def items(self) -> int:
        return len(self.scored)

    @property
    def per(self) -> float:
        return 100.0 * self.edits / max(self.phones, 1)

    def add(self, item_id: str, hyp: list[str], ref: list[str]) -> None:
        edits = edit_distance(hyp, ref)
        self.scored[item_id] = (edits, len(ref), hyp)
        self.edits, self.phones = self.edits + edits, self.phones + len(ref)


IN_MEMORY = 256  # recordings held at once (each batch is sorted by length within them)


def audio_path(item: dict[str, Any], audio_dir: Path | None, key: str) -> Path:
    """Where an item's recording is: ``audio_dir/ID.wav``, else the item's `key`."""
    if audio_dir is not None:
        return Path(audio_dir) / f"{item['id']}.wav"
    if not item.get(key):
        raise InferenceError(f"no {key!r} in the manifest item")
    return Path(item[key])


def phone_error_rate(
    model: PhoneRecognizer,
    items: Sequence[dict[str, Any]],
    audio_dir: str | Path | None = None,
    audio_key: str = "audio",
    batch_size: int = 16,
    transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> PERReport:
    """The phone error rate of manifest `items` (``id``, ``text``, and ``audio_key`` or a
    file ``audio_dir/ID.wav``) against their texts; `transform` changes each waveform
    first (`control`). An item without text, without sounds in its text, or whose audio
    is missing or unreadable is left out with one line."""
    report, pending = PERReport(), []
    folder = Path(audio_dir) if audio_dir is not None else None
    for item in items:
        uid = str(item["id"])
        try:
            ref = model.reference(str(item.get("text") or ""))
            if not ref:
                raise InferenceError("no text (or no sounds in it) to score against")
            wav = model.load(audio_path(item, folder, audio_key))
        except (InferenceError, ValueError) as err:  # AudioError is a ValueError
            report.bad.append(f"{uid}: {err}")
            continue
        pending.append((uid, transform(wav) if transform is not None else wav, ref))
        if len(pending) >= IN_MEMORY:
            _score(model, pending, batch_size, report)
    _score(model, pending, batch_size, report)
    return report


def _score(model: PhoneRecognizer, pending: list, batch_size: int, report: PERReport) -> None:
    """Recognize the pending ``(id, waveform, reference)`` into `report`; empties it."""
    hyps = model.recognize([wav for _, wav, _ in pending], batch_size) if pending else []
    for (uid, _, ref), hyp in zip(pending, hyps):
        report.add(uid, hyp, ref)
    pending.clear()


CONTROLS = ("griffin-lim", "noise", "wrong-text")


def control(
    model: PhoneRecognizer, items: Sequence[dict[str, Any]], name: str, seed: int = 0
) -> tuple[list[dict[str, Any]], Callable[[torch.Tensor], torch.Tensor] | None]:
    """The items and waveform transform of a control condition, what tells a score's
    meaning: ``griffin-lim`` (each recording through its own log-mel and 60 Griffin-Lim
    iterations: the floor of a system that makes mels), ``noise`` (white noise of the
    recording's length and RMS: what no speech scores) or ``wrong-text`` (each recording
    against the next item's text)."""
    if name == "wrong-text":
        n = len(items)
        return [{**it, "text": items[(i + 1) % n].get("text")} for i, it in enumerate(items)], None
    if name == "griffin-lim":
        vocoder = GriffinLimVocoder(model.mel_cfg, 60, model.device)
        return list(items), lambda wav: vocoder(log_mel(wav, model.mel_cfg))
    if name == "noise":
        gen = torch.Generator().manual_seed(seed)

        def noise(wav: torch.Tensor) -> torch.Tensor:
            return wav.pow(2).mean().sqrt() * torch.randn(wav.shape, generator=gen)

        return list(items), noise
    raise ValueError(f"unknown control {name!r}; choose one of {', '.join(CONTROLS)}")
