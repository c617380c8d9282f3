"""eSpeak NG voices: ``NAME[,key=value...]`` specs, and the voices the wheel ships.

``NAME`` is a language voice of the espeakng-loader wheel (``en-us``, ``en``,
``en-gb-x-rp``...) with an optional timbre variant (``+m3``, ``+f2``...); the keys are
``rate`` (words per minute, 80..450), ``pitch`` (base pitch 0..100), ``range`` (pitch range
0..100) and ``gap`` (pause between words, in units of 10 ms).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

PARAM = {"rate": 1, "pitch": 3, "range": 4, "gap": 7}  # espeak_PARAMETER ids
_LIMITS = {"rate": (80, 450), "pitch": (0, 100), "range": (0, 100), "gap": (0, 100)}


@dataclass(frozen=True)
class Voice:
    """An eSpeak NG voice with its prosody settings (see the module docstring)."""

    name: str = "en-us"
    rate: int = 175
    pitch: int = 50
    range: int = 50
    gap: int = 0

    @classmethod
    def parse(cls, spec: str) -> Voice:
        """Parse ``NAME[,key=value...]``; raises ValueError naming the bad part."""
        name, *options = (part.strip() for part in spec.split(","))
        if not name:
            raise ValueError(f"voice {spec!r}: empty voice name (e.g. 'en-us+m3')")
        voice = cls(name=name)
        for option in options:
            key, sep, value = option.partition("=")
            if not sep or key not in PARAM or not value.lstrip("-").isdigit():
                raise ValueError(
                    f"voice {spec!r}: bad option {option!r}; use key=integer with key in "
                    f"{', '.join(PARAM)}"
                )
            voice = replace(voice, **{key: int(value)})
        voice.check()
        check_voice_name(name)
        return voice

    def check(self) -> None:
        """Raise ValueError when a prosody setting lies outside eSpeak's range."""
        for key, (low, high) in _LIMITS.items():
            value = getattr(self, key)
            if not low <= value <= high:
                raise ValueError(f"voice {self.spec}: {key}={value} outside [{low}, {high}]")

    @property
    def spec(self) -> str:
        """The canonical ``NAME,rate=..,pitch=..,range=..,gap=..`` string."""
        options = ",".join(f"{key}={getattr(self, key)}" for key in PARAM)
        return f"{self.name},{options}"


def check_voice_name(name: str) -> None:
    """ValueError when ``LANGUAGE+VARIANT`` names a timbre variant the wheel's data lacks
    (eSpeak NG would silently speak without it). The language is checked when the voice
    is set (`aligner.audio.synth`)."""
    _, _, variant = name.partition("+")
    variants = list_voices()[1]
    if variant and variant.lower() not in {v.lower() for v in variants}:
        some = ", ".join(v for v in variants if len(v) <= 3)
        raise ValueError(f"voice {name!r}: unknown variant {variant!r}; one of {some}, ...")


def data_path() -> Path:
    """The eSpeak NG data folder shipped in the espeakng-loader wheel."""
    import espeakng_loader

    return Path(espeakng_loader.get_data_path())


def list_voices() -> tuple[list[str], list[str]]:
    """Return (language voices, timbre variants) available in the wheel's data folder."""
    root = data_path()
    languages = sorted(p.name.lower() for p in (root / "lang").rglob("*") if p.is_file())
    variants = sorted(p.name for p in (root / "voices" / "!v").iterdir() if p.is_file())
    return languages, variants


@lru_cache(maxsize=1)
def language_aliases() -> dict[str, str]:
    """``{language code: voice file id}`` from the ``language`` lines of the voice files,
    e.g. ``en-gb -> gmw/en``: ``espeak_SetVoiceByName`` finds files by name only."""
    root = data_path() / "lang"
    aliases: dict[str, tuple[int, str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        ident = path.relative_to(root).as_posix()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "language":
                priority = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 5
                code = parts[1].lower()
                if code not in aliases or priority < aliases[code][0]:
                    aliases[code] = (priority, ident)
    return {code: ident for code, (_, ident) in aliases.items()}
