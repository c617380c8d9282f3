"""Vocoders (what the command line, the demo and the TensorBoard logger turn mels into
sound with): natural-log mels ``(T, n_mels)`` (denormalized, as the acoustic models
predict them) -> waveform ``(L,)``, chosen by one option everywhere (``--vocoder``):

- ``griffin-lim`` (the default): Griffin-Lim with the acoustic model's own feature
  settings (`aligner.audio.vocoder.GriffinLim`);
- ``hifigan:DIR`` (or ``hifigan:DIR/GENERATOR``): a generator of the public HiFi-GAN
  release format, ``config.json`` beside a file holding ``{"generator": state_dict}``
  (`aligner.models.vocoders.hifigan`);
- a vocoder trained by this toolkit (``task: vocoder``): its checkpoint, or its
  experiment folder (best.pt, else the latest: `aligner.checkpoint.checkpoint_file`).

A vocoder whose sample rate, hop, number of mels or f_max differs from the mels' is
refused in one line (`check_compatible`): it would play the mels at the wrong speed or
read them as other frequencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from aligner.audio.features import MelConfig
from aligner.audio.vocoder import GriffinLim
from aligner.checkpoint import CheckpointError, checkpoint_family, load_weights, read_checkpoint
from aligner.families import Role, role
from aligner.models.vocoders.gan import waveform
from aligner.models.vocoders.hifigan import HiFiGANConfig, HiFiGANGenerator
from aligner.models.vocoders.vocos import Vocos, VocosConfig

GRIFFIN_LIM = "griffin-lim"


class VocoderError(ValueError):
    """A vocoder that cannot be loaded or does not fit the mels; the message is one line."""


HIFIGAN_PREFIX = "hifigan:"


@dataclass(frozen=True)
class VocoderFeatures:
    """What a vocoder expects of its mels."""

    sample_rate: int
    hop_length: int
    n_mels: int
    f_max: float | None


class Vocoder:
    """Log-mel ``(T, n_mels)`` -> waveform ``(L,)`` at `features.sample_rate`."""

    name: str
    features: VocoderFeatures

    def __call__(self, mel: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError


class GriffinLimVocoder(Vocoder):
    """Griffin-Lim with the mels' own settings (any mel it is given fits); a mel shorter
    than one STFT window is padded with silence (the log floor) first."""

    def __init__(self, cfg: MelConfig, n_iter: int = 60, device: str | torch.device = "cpu"):
        self.cfg, self.name = cfg, GRIFFIN_LIM
        self.features = VocoderFeatures(cfg.sample_rate, cfg.hop_length, cfg.n_mels, cfg.f_max)
        self.module = GriffinLim(cfg, n_iter=n_iter).to(device)

    def __call__(self, mel: torch.Tensor) -> torch.Tensor:
        import math

        short = self.cfg.n_fft // self.cfg.hop_length + 2 - len(mel)
        if short > 0:
            silence = mel.new_full((short, mel.size(1)), math.log(self.cfg.log_floor))
            mel = torch.cat([mel, silence])
        device = self.module.fb_pinv.device
        return self.module(mel.to(device)).cpu()


class HiFiGANVocoder(Vocoder):
    """A generator of the public HiFi-GAN release format, in eval mode."""

    def __init__(self, generator, name: str, device: str | torch.device = "cpu") -> None:
        cfg = generator.cfg
        self.name, self.generator = name, generator.eval().to(device)
        self.features = VocoderFeatures(cfg.sampling_rate, generator.hop, cfg.num_mels, cfg.fmax)

    @torch.no_grad()
    def __call__(self, mel: torch.Tensor) -> torch.Tensor:
        device = next(self.generator.parameters()).device
        wav = self.generator(mel.float().T[None].to(device))
        return wav[0, 0].cpu()


class ToolkitVocoder(Vocoder):
    """A vocoder trained by ``aligner train`` (`aligner.models.vocoders.vocos.Vocos`, or a HiFi-GAN
    generator trained with discriminators), in eval mode; ``features`` are those of its
    checkpoint's mels."""

    def __init__(
        self, model, mel_cfg: MelConfig, name: str, device: str | torch.device = "cpu"
    ) -> None:
        self.name, self.model = name, model.eval().to(device)
        self.features = VocoderFeatures(
            mel_cfg.sample_rate, mel_cfg.hop_length, mel_cfg.n_mels, mel_cfg.f_max
        )

    @classmethod
    def from_checkpoint(cls, ckpt: dict, file: Path, role: Role, device="cpu") -> ToolkitVocoder:
        """The vocoder of a checkpoint dict read from `file` (`aligner.checkpoint`)."""
        return cls(*generator_of(ckpt, file), str(file), device)

    @torch.no_grad()
    def __call__(self, mel: torch.Tensor) -> torch.Tensor:

        device = next(self.model.parameters()).device
        return waveform(self.model, mel.float().T[None].to(device))[0].cpu()


def generator_from_config(config: dict):
    """The generator a vocoder checkpoint's ``symbols["model"]`` describes: ``kind``
    ``hifigan`` (`HiFiGANGenerator`) or ``vocos`` (the default: `Vocos`)."""
    config = dict(config)
    if config.pop("kind", "vocos") == "hifigan":
        return HiFiGANGenerator(HiFiGANConfig.from_dict(config))
    return Vocos(VocosConfig.from_dict(config))


def load_toolkit_vocoder(path: Path):
    """(generator, its MelConfig) of a ``task: vocoder`` checkpoint or experiment folder
    (a GAN's discriminators left out); VocoderError (one line, naming the file) for
    anything else."""
    try:
        file, ckpt = read_checkpoint(path)
        family, task = checkpoint_family(ckpt, file)
    except CheckpointError as err:
        raise VocoderError(str(err)) from None
    if role(family, task).writes != "wave":
        raise VocoderError(f"{file} is a {family} {task} checkpoint, not a vocoder")
    return generator_of(ckpt, file)


def generator_of(ckpt: dict, file: Path):
    """(generator, its MelConfig) of a vocoder checkpoint's dict read from `file`."""
    symbols = ckpt.get("symbols") or {}
    try:
        model = generator_from_config(symbols["model"])
        state = ckpt["model"]
        if any(k.startswith("generator.") for k in state):  # trained with discriminators
            state = {
                k[len("generator.") :]: v for k, v in state.items() if k.startswith("generator.")
            }
        model.load_state_dict(state)
        return model, MelConfig.from_dict(symbols["mel"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        first = str(err).splitlines()[0]
        raise VocoderError(f"{file}: weights do not match its vocoder config ({first})") from None


def load_vocoder(
    spec: str | None,
    cfg: MelConfig,
    griffin_lim_iters: int = 60,
    device: str | torch.device = "cpu",
) -> Vocoder:
    """The vocoder `spec` names (module docstring) for mels of settings `cfg`;
    VocoderError (one line) for an unknown name, an unreadable release or a vocoder
    whose features differ from `cfg`."""
    if spec is None or spec == GRIFFIN_LIM:
        return GriffinLimVocoder(cfg, griffin_lim_iters, device)
    if spec.startswith(HIFIGAN_PREFIX):
        vocoder = HiFiGANVocoder(load_hifigan(spec.removeprefix(HIFIGAN_PREFIX)), spec, device)
    elif Path(spec).expanduser().exists():
        vocoder = ToolkitVocoder(*load_toolkit_vocoder(Path(spec).expanduser()), spec, device)
    else:
        raise VocoderError(
            f"--vocoder {spec!r}: give {GRIFFIN_LIM}, {HIFIGAN_PREFIX}DIR (a HiFi-GAN "
            "release: config.json and a generator file) or a vocoder's experiment folder "
            "or checkpoint (task: vocoder)"
        )
    check_compatible(vocoder, cfg)
    return vocoder


def check_compatible(vocoder: Vocoder, cfg: MelConfig) -> None:
    """VocoderError naming each setting in which `vocoder` and the mels differ."""
    f = vocoder.features
    pairs = [
        ("sample rate", f.sample_rate, cfg.sample_rate),
        ("hop", f.hop_length, cfg.hop_length),
        ("mels", f.n_mels, cfg.n_mels),
        ("f_max", None if f.f_max is None else float(f.f_max), float(cfg.f_max)),
    ]
    differ = [
        f"{what} {theirs} (the mels: {ours})" for what, theirs, ours in pairs if theirs != ours
    ]
    if differ:
        raise VocoderError(
            f"vocoder {vocoder.name} does not fit these mels: {'; '.join(differ)}; use a "
            "vocoder trained on the acoustic model's features (or --vocoder griffin-lim)"
        )


def load_hifigan(path: str | Path):
    """A HiFi-GAN release: `path` is its folder (``config.json`` and one generator file)
    or the generator file (``config.json`` beside it). VocoderError naming the file."""
    path = Path(path)
    if not path.exists():
        raise VocoderError(
            f"{HIFIGAN_PREFIX}{path} does not exist; give a HiFi-GAN release's folder "
            "(config.json and a generator file) or its generator file"
        )
    folder = path if path.is_dir() else path.parent
    if not (folder / "config.json").is_file():
        raise VocoderError(f"{HIFIGAN_PREFIX}{path}: no config.json in {folder}")
    try:
        cfg = HiFiGANConfig.read(folder / "config.json")
    except ValueError as err:
        raise VocoderError(str(err)) from None
    file = path if path.is_file() else _generator_file(folder)
    try:
        state = load_weights(file)
        generator = HiFiGANGenerator(cfg)
        generator.load_release_state(state["generator"] if "generator" in state else state)
    except (CheckpointError, RuntimeError, KeyError, TypeError, ValueError) as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise VocoderError(
            f"{file} is not a HiFi-GAN generator for its config.json ({first})"
        ) from None
    return generator


def _generator_file(folder: Path) -> Path:
    """The one file of `folder` that is not its config (the releases name it ``g_STEP``
    or ``generator_*``)."""
    found = sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.name != "config.json" and not p.name.startswith(".")
    )
    named = [p for p in found if p.name.startswith(("g_", "generator"))] or found
    if len(named) != 1:
        listed = ", ".join(p.name for p in named) or "nothing"
        raise VocoderError(
            f"{HIFIGAN_PREFIX}{folder}: expected one generator file, found {listed}; "
            f"name it ({HIFIGAN_PREFIX}{folder}/FILE)"
        )
    return named[0]
