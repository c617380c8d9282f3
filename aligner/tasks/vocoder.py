"""A neural vocoder (``task: vocoder``) as a trainer task: the log-mels of ``data.mel`` (the
features the TTS and VC models predict, natural log, not normalized) -> the waveform, on
the audio of any speech manifest.

Recipe sections::

    task: vocoder
    family: vocos             # or hifigan (`aligner.families`)
    data: {train: train.jsonl, valid: valid.jsonl, mel: {...}, segment_frames: 32}
    model: {dim: 256, intermediate: 768, layers: 8, kernel: 7}  # vocos: models.vocoders.vocos
    model: {upsample_rates: [8, 8, 2, 2], ...}   # hifigan: models.vocoders.hifigan (V1 sizes)
    model.loss: {mel_weight: 1.0, stft_weight: 1.0, resolutions: [[512, 128], ...]}
    model.adversarial: {kinds: [mpd, mrd], weight: 1.0, feature_weight: 2.0}  # optional

Training cuts a random segment of ``segment_frames`` frames from each utterance; the loss
is the L1 distance of full-band log-mels (up to the Nyquist frequency, so the band above
``data.mel.f_max`` is learnt too) plus a multi-resolution STFT loss (spectral convergence
and log-magnitude L1; Yamamoto et al. 2020); with ``model.adversarial`` also the
discriminators' least-squares losses and feature matching (`aligner.models.vocoders.gan`:
generator and discriminators learn in one update). Validation scores the reconstruction
losses on fixed segments and logs the fixed items' audio and spectrograms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from aligner.audio.features import LogMel, MelConfig
from aligner.audio.io import load_audio
from aligner.config import ConfigError, from_dict
from aligner.data.manifest import read_manifest
from aligner.models.vocoders.discriminators import DiscriminatorConfig
from aligner.models.vocoders.gan import GANVocoder, waveform
from aligner.models.vocoders.hifigan import HiFiGANConfig, HiFiGANGenerator
from aligner.models.vocoders.vocos import Vocos, VocosConfig
from aligner.tasks.speech_data import manifest_path, mel_settings
from aligner.tasks.vocoder_losses import VocoderLoss, phase_loss, stft_loss


@dataclass
class VocoderData:
    """``data:`` section: manifests and which of their audio keys to learn from
    (``audio``; a parallel VC corpus's target voice: ``target_audio``; both: every voice),
    mel settings, the training segment in frames, and how many validation items are logged
    as audio."""

    train: str = "train.jsonl"
    valid: str = "valid.jsonl"
    audio_keys: list[str] = field(default_factory=lambda: ["audio"])
    mel: dict[str, Any] = field(default_factory=dict)
    segment_frames: int = 32
    audio_items: int = 2


class AudioSet(torch.utils.data.Dataset):
    """The waveforms of a manifest's `keys` (e.g. ``audio``) at `sample_rate`, every key of
    every item, read once and kept. An item without one of the keys is a ConfigError that
    names it."""

    def __init__(self, manifest: Path, sample_rate: int, keys: Sequence[str] = ("audio",)) -> None:
        self.items = read_manifest(manifest)
        for n, item in enumerate(self.items, 1):
            missing = [k for k in keys if k not in item]
            if missing:
                raise ConfigError(
                    f"{manifest}: item {n} ({item.get('id', '?')}) has no {missing[0]!r}; "
                    f"data.audio_keys {list(keys)} names the audio the vocoder learns from"
                )
        self.waves = [
            load_audio(it[k], sample_rate, min_samples=1)[0] for it in self.items for k in keys
        ]

    def __len__(self) -> int:
        return len(self.waves)

    def __getitem__(self, index: int) -> torch.Tensor:
        return self.waves[index]


def segment(wav: torch.Tensor, length: int, start: int | None = None) -> torch.Tensor:
    """``length`` samples of `wav` from `start` (random when None), zero-padded at the end
    when the utterance is shorter."""
    if len(wav) <= length:
        return F.pad(wav, (0, length - len(wav)))
    if start is None:
        start = int(torch.randint(0, len(wav) - length + 1, ()).item())
    return wav[start : start + length]


class VocoderTask:
    """Mel -> waveform as a `aligner.tasks.base.Task`."""

    def __init__(
        self,
        model: nn.Module,
        data: VocoderData,
        mel_cfg: MelConfig,
        loss: VocoderLoss,
        data_dir: Path,
        generator_config: dict[str, Any] | None = None,
    ) -> None:
        self.model, self.data, self.mel_cfg, self.loss_cfg = model, data, mel_cfg, loss
        sr = mel_cfg.sample_rate
        keys = data.audio_keys
        self.train_set = AudioSet(manifest_path(data_dir, data.train, "train"), sr, keys)
        self.valid_set = AudioSet(manifest_path(data_dir, data.valid, "valid"), sr, keys)
        self.features = LogMel(mel_cfg)  # the model's input
        full_band = MelConfig(**{**mel_cfg.to_dict(), "f_max": sr / 2})
        self.loss_features = LogMel(full_band)  # the loss covers the whole band
        self.samples = data.segment_frames * mel_cfg.hop_length
        self.logged_targets = False  # the fixed items' recordings go to TensorBoard once
        self.symbols = {
            "task": "vocoder",
            "model": generator_config or model.cfg.to_dict(),
            "mel": mel_cfg.to_dict(),
        }

    def lengths(self, dataset: torch.utils.data.Dataset) -> Sequence[int]:
        return [1] * len(dataset)  # every training example is one segment

    def collate(self, examples: list[torch.Tensor]) -> dict[str, Any]:
        return {"wav": torch.stack([segment(w, self.samples) for w in examples])}

    def _losses(self, model: nn.Module, wav: torch.Tensor) -> dict[str, torch.Tensor]:
        feats, loss_feats = self.features.to(wav.device), self.loss_features.to(wav.device)
        with torch.no_grad():
            mel = feats(wav).transpose(1, 2)  # (B, n_mels, T)
        out: dict[str, torch.Tensor] = {}
        spec = None
        if isinstance(getattr(model, "module", model), GANVocoder):
            pred, out = model(mel, wav)
        elif self.loss_cfg.phase_weight > 0:
            pred, spec = model(mel, return_spectrum=True)
        else:
            pred = waveform(model, mel)
        n = min(pred.size(1), wav.size(1))
        pred, target = pred[:, :n], wav[:, :n]
        out["mel_l1"] = F.l1_loss(loss_feats(pred.float()), loss_feats(target))
        stft = [stft_loss(pred, target, n, h) for n, h in self.loss_cfg.resolutions]
        out["stft"] = torch.stack(stft).mean()
        c = self.loss_cfg
        out["loss"] = c.mel_weight * out["mel_l1"] + c.stft_weight * out["stft"]
        if spec is not None:
            out["phase"] = phase_loss(spec, self._target_spectrum(target))
            out["loss"] = out["loss"] + c.phase_weight * out["phase"]
        if "disc" in out:  # both players' losses (their gradients are routed apart)
            adv = getattr(model, "module", model).cfg
            generator = adv.weight * (out["adv"] + adv.feature_weight * out["feature"])
            out["loss"] = out["loss"] + generator + out["disc"]
        return out

    def _target_spectrum(self, wav: torch.Tensor) -> torch.Tensor:
        """The complex STFT of `wav` (B, L) at the model's head: (B, F, 1 + L // hop)."""
        cfg = self.mel_cfg
        window = torch.hann_window(cfg.win_length, device=wav.device)
        return torch.stft(
            wav, cfg.n_fft, cfg.hop_length, cfg.win_length, window, center=True, return_complex=True
        )

    def loss(self, model: nn.Module, batch: dict[str, Any], step: int):
        parts = self._losses(model, batch["wav"])
        return parts["loss"], {k: float(v.detach()) for k, v in parts.items() if k != "loss"}

    @staticmethod
    def generator(model: nn.Module) -> nn.Module:
        """The network that makes audio (the generator of a GAN)."""
        model = getattr(model, "module", model)
        return model.generator if isinstance(model, GANVocoder) else model

    @torch.no_grad()
    def validate(
        self, model: nn.Module, batches: Iterable[dict[str, Any]], step: int, logger: Any | None
    ) -> dict[str, float]:
        """The loss on segments from the start of each validation utterance (fixed, so
        values compare across steps); the fixed items' audio and spectrograms."""
        del batches  # random segments: validation cuts its own, the same every time
        device = next(model.parameters()).device
        totals: dict[str, float] = {}
        waves = [segment(w, self.samples, start=0) for w in self.valid_set.waves]
        generator = self.generator(model)  # the reconstruction losses, comparable across steps
        for i in range(0, len(waves), 16):
            parts = self._losses(generator, torch.stack(waves[i : i + 16]).to(device))
            for k, v in parts.items():
                totals[k] = totals.get(k, 0.0) + float(v) * len(waves[i : i + 16])
        metrics = {k: v / max(len(waves), 1) for k, v in totals.items()}
        if logger is not None:
            self._log_items(model, step, logger, device)
        return metrics

    def _log_items(self, model: nn.Module, step: int, logger: Any, device: torch.device) -> None:
        sr = self.mel_cfg.sample_rate
        for k, wav in enumerate(self.valid_set.waves[: self.data.audio_items]):
            mel = self.features.to(device)(wav.to(device))
            pred = waveform(self.generator(model), mel.T[None])[0].float()
            # the features on the generator's device (their window lives there), then the CPU
            pred_mel = self.loss_features.to(device)(pred).cpu()
            logger.audio(f"audio/item{k}", pred.cpu(), sr, step)
            logger.mel(f"mel/item{k}", pred_mel, step)
            if not self.logged_targets:
                logger.audio(f"audio/item{k}_target", wav, sr, step)
        self.logged_targets = True


def build(cfg: Any, data_dir: Path) -> VocoderTask:
    """The vocoder task of an ``ExperimentConfig`` from manifests under ``data_dir``."""
    data = from_dict(VocoderData, cfg.data, where="data")
    if not data.audio_keys or not all(isinstance(k, str) for k in data.audio_keys):
        raise ConfigError(
            f"data.audio_keys {data.audio_keys!r}: give a list of manifest keys, e.g. "
            "[audio] or [target_audio]"
        )
    mel_cfg = mel_settings(data)
    model = dict(cfg.model or {})
    loss = from_dict(VocoderLoss, model.pop("loss", None), where="model.loss")
    samples = data.segment_frames * mel_cfg.hop_length
    too_long = [n for n, _ in loss.resolutions if n // 2 >= samples]
    if data.segment_frames < 2 or too_long:
        raise ConfigError(
            f"data.segment_frames {data.segment_frames} ({samples} samples) is too short for "
            f"the STFT loss's n_fft {too_long or '-'}: need at least 2 frames and more than "
            "n_fft / 2 samples; raise data.segment_frames or lower model.loss.resolutions"
        )
    adversarial = model.pop("adversarial", None)
    generator, generator_config = GENERATORS[cfg.family](model, mel_cfg)
    if loss.phase_weight > 0 and (not isinstance(generator, Vocos) or adversarial is not None):
        raise ConfigError("model.loss.phase_weight needs family vocos without model.adversarial")
    net: nn.Module = generator
    if adversarial is not None:
        try:
            net = GANVocoder(generator, DiscriminatorConfig.from_dict(dict(adversarial)))
        except (TypeError, ValueError) as err:
            raise ConfigError(str(err)) from None
    return VocoderTask(net, data, mel_cfg, loss, Path(data_dir), generator_config)


def vocos_generator(model: dict[str, Any], mel_cfg: MelConfig) -> tuple[nn.Module, dict]:
    """A Vocos generator sized for `mel_cfg`, and the dict a checkpoint keeps to rebuild
    it (`generator_from_config`)."""
    sizes = {"n_mels": mel_cfg.n_mels, "hop_length": mel_cfg.hop_length}
    sizes |= {"n_fft": mel_cfg.n_fft, "win_length": mel_cfg.win_length}
    try:
        cfg = VocosConfig.from_dict({**model, **sizes})
    except (TypeError, ValueError) as err:
        raise ConfigError(f"model: {err}") from None
    return Vocos(cfg), cfg.to_dict()


def hifigan_generator(model: dict[str, Any], mel_cfg: MelConfig) -> tuple[nn.Module, dict]:
    """A HiFi-GAN generator sized for `mel_cfg`, and the dict a checkpoint keeps."""
    features = {"num_mels": mel_cfg.n_mels, "sampling_rate": mel_cfg.sample_rate}
    features |= {"hop_size": mel_cfg.hop_length, "n_fft": mel_cfg.n_fft}
    features |= {"win_size": mel_cfg.win_length, "fmin": mel_cfg.f_min, "fmax": mel_cfg.f_max}
    try:
        cfg = HiFiGANConfig.from_dict({**model, **features})
    except (TypeError, ValueError) as err:
        raise ConfigError(f"model: {err}") from None
    if cfg.extra:
        raise ConfigError(f"model: unknown HiFi-GAN option(s) {sorted(cfg.extra)}")
    generator = HiFiGANGenerator(cfg)
    if generator.hop != mel_cfg.hop_length:
        raise ConfigError(
            f"model.upsample_rates {list(cfg.upsample_rates)} multiply to {generator.hop}, "
            f"data.mel.hop_length is {mel_cfg.hop_length}: they must be equal"
        )
    return generator, {"kind": "hifigan", **cfg.to_dict()}


# the generator of each vocoder family (`aligner.families`)
GENERATORS = {"vocos": vocos_generator, "hifigan": hifigan_generator}
