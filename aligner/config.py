"""Typed experiment configs: dataclasses, YAML loading and `--set a.b=c` overrides.

A recipe is a YAML file with four top-level keys::

    task: tts                 # tts | vc | align | vocoder | g2p | nmt
    family: tacotron          # the architecture (`aligner.families`); default: the task's
    data: {...}               # task-specific, converted by the task (see `from_dict`)
    model: {...}              # task-specific, converted by the task
    train: {...}              # `TrainConfig`

Only this module and the `build_*` functions translate configs into objects; every
class elsewhere takes explicit arguments.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml

from aligner.families import FamilyError, family_name, role

T = TypeVar("T")

Decay = Literal["noam", "exponential", "cosine", "none"]
Precision = Literal["fp32", "bf16", "fp16"]


SEED_MIN, SEED_MAX = 0, 2**32 - 1  # within what torch.manual_seed takes, as NumPy's legacy seeds


class ConfigError(ValueError):
    """A config value or key is wrong; the message names where and what to do."""


@dataclass
class TrainConfig:
    """Optimisation, precision, logging and checkpointing of one run.

    The learning rate warms up linearly over `warmup_steps` optimizer updates to `lr`,
    then decays by `decay` (see `aligner.train.schedule`). `max_minutes` is a wall-clock
    budget: the run stops (with a checkpoint) when it is spent, as it does at `max_steps`.
    `ema`: the decay of an exponential moving average of the weights that validation and
    the checkpoints' ``model`` hold (`aligner.train.ema`; None: the weights as trained).
    """

    batch_size: int = 16
    max_steps: int = 10_000
    max_minutes: float | None = None
    lr: float = 1e-3
    warmup_steps: int = 500
    decay: Decay = "noam"
    decay_rate: float = 0.5
    decay_steps: int = 10_000
    min_lr: float = 1e-5
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])
    weight_decay: float = 1e-6
    grad_clip: float = 1.0
    precision: Precision = "fp32"
    seed: int = 1234
    num_workers: int = 0
    log_every: int = 50
    eval_every: int = 500
    checkpoint_every: int = 500
    keep_last: int = 3
    max_nonfinite: int = 10
    valid_batches: int | None = None
    progress: bool = True
    init_from: str | None = None
    init_modules: list[str] = field(default_factory=list)
    ema: float | None = None

    def __post_init__(self) -> None:
        positive = ("batch_size", "max_steps", "log_every", "eval_every", "checkpoint_every")
        for name in (*positive, "keep_last", "max_nonfinite", "decay_steps"):
            if getattr(self, name) < 1:
                raise ConfigError(f"train.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("lr", "grad_clip", "weight_decay", "min_lr", "warmup_steps", "num_workers"):
            if getattr(self, name) < 0:
                raise ConfigError(f"train.{name} must be >= 0, got {getattr(self, name)}")
        if self.max_minutes is not None and self.max_minutes <= 0:
            raise ConfigError(f"train.max_minutes must be > 0, got {self.max_minutes}")
        if self.ema is not None and not 0 < self.ema < 1:
            raise ConfigError(f"train.ema must be between 0 and 1 (e.g. 0.999), got {self.ema}")
        if not SEED_MIN <= self.seed <= SEED_MAX:
            raise ConfigError(
                f"train.seed must be between {SEED_MIN} and {SEED_MAX}, got {self.seed}"
            )
        if len(self.betas) != 2:
            raise ConfigError(f"train.betas must be two numbers, got {self.betas}")


@dataclass
class ExperimentConfig:
    """A whole recipe: the task name, the model family, its data and model sections, and
    `TrainConfig`. ``family`` defaults to the task's (`aligner.families.family_name`: a
    vocoder recipe's ``model.kind`` names it, as written before recipes named families)."""

    task: str
    family: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        self.family = family_name({"task": self.task, "family": self.family, "model": self.model})
        if self.task == "vocoder" and "kind" in self.model:
            if self.model["kind"] != self.family:
                raise ConfigError(
                    f"model.kind {self.model['kind']!r} and family {self.family!r} differ; "
                    "name the vocoder by family alone"
                )
            self.model = {k: v for k, v in self.model.items() if k != "kind"}
        if self.family:
            try:
                role(self.family, self.task)
            except FamilyError as err:
                raise ConfigError(str(err)) from None

    def to_dict(self) -> dict[str, Any]:
        """A plain, YAML/JSON-able dict; `ExperimentConfig.from_dict(c.to_dict()) == c`."""
        return to_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "config") -> ExperimentConfig:
        return from_dict(cls, d, where=where)


def to_dict(obj: Any) -> Any:
    """Recursively turn dataclasses (and tuples) into plain dicts and lists."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_dict(v) for v in obj]
    return copy.deepcopy(obj)


def from_dict(cls: type[T], d: Mapping[str, Any] | None, where: str = "config") -> T:
    """Build dataclass `cls` from `d`, checking names and types.

    Unknown keys raise `ConfigError` naming the key (as `where.key`) and listing the
    valid ones; values are checked against the field annotations (int, float, str, bool,
    Literal choices, Optional, list, dict and nested dataclasses). Integers are accepted
    for floats, and number-like strings such as ``1e-3`` (which YAML 1.1 reads as a
    string) for numbers. Missing keys take the dataclass defaults.
    """
    if d is None:
        d = {}
    if not isinstance(d, Mapping):
        raise ConfigError(f"{where} must be a mapping of keys to values, got {d!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = [k for k in d if k not in fields]
    if unknown:
        raise ConfigError(
            f"unknown key {where}.{unknown[0]}; valid keys of {where}: {', '.join(fields)}"
        )
    kwargs = {k: _convert(v, hints[k], f"{where}.{k}") for k, v in d.items()}
    missing = [
        n
        for n, f in fields.items()
        if n not in kwargs
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ConfigError(f"missing key {where}.{missing[0]} (required)")
    return cls(**kwargs)


def _convert(value: Any, tp: Any, where: str) -> Any:
    """Check `value` against annotation `tp` and return it (coerced where harmless)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return _convert(value, arg, where)
            except ConfigError as err:
                errors.append(str(err))
        raise ConfigError(errors[0])
    if origin is Literal:
        if value not in args:
            choices = ", ".join(map(str, args))
            raise ConfigError(f"{where} must be one of {choices}, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, where)
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        item = args[0] if args else Any
        return [_convert(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where} must be a mapping, got {value!r}")
        return dict(value)
    return _size(_scalar(value, tp, where), where)


# a model's sizes by their names: widths (at least 1) and counts (at least 0)
_WIDTH = re.compile(r"(dim|channels|hidden|heads|units)$")
_COUNT = re.compile(r"(^n_|layers$|convs$)")


def _size(value: Any, where: str) -> Any:
    """`value`, or ConfigError where a size under ``model.`` is below its least: a width
    (``attn_dim``, ``channels``, ``ff_hidden``, ``heads``) below 1, a count (``n_convs``,
    ``decoder_layers``) below 0 (PyTorch would fail later, or build a model of nothing)."""
    name = where.rsplit(".", 1)[-1]
    if not where.startswith("model.") or type(value) is not int:
        return value
    least = 1 if _WIDTH.search(name) else 0 if _COUNT.search(name) else None
    if least is not None and value < least:
        raise ConfigError(f"{where} must be at least {least} (a size of the model), got {value}")
    return value


def _scalar(value: Any, tp: type, where: str) -> Any:
    if tp is bool:
        if isinstance(value, bool):
            return value
    elif tp in (int, float):
        if isinstance(value, str):
            try:
                value = float(value) if tp is float else int(value)
            except ValueError:
                pass
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isfinite(value):  # NaN passes every range check
                raise ConfigError(f"{where} must be a finite number, got {value!r}")
            if tp is int and isinstance(value, float):
                if value.is_integer():
                    return int(value)
            else:
                return tp(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif isinstance(value, tp):
        return value
    raise ConfigError(f"{where} must be of type {tp.__name__}, got {value!r}")


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``a.b.c=value`` into (["a", "b", "c"], value parsed as a YAML scalar)."""
    key, sep, raw = text.partition("=")
    path = key.strip().split(".")
    if not sep or not all(path):
        raise ConfigError(f"bad override {text!r}: expected KEY=VALUE, e.g. train.lr=1e-3")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError as err:
        raise ConfigError(f"bad override {text!r}: value is not valid YAML ({err})") from None
    return path, value


def apply_overrides(raw: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    """Return a copy of the raw recipe dict with ``a.b=c`` overrides applied.

    Top-level keys and `train.*` keys are checked at once (unknown ones raise
    `ConfigError` with the valid names); keys under `data`/`model` are checked by the task
    when it converts its section with `from_dict`.
    """
    out = copy.deepcopy(raw)
    top = [f.name for f in dataclasses.fields(ExperimentConfig)]
    train_keys = [f.name for f in dataclasses.fields(TrainConfig)]
    for text in overrides:
        path, value = parse_override(text)
        if path[0] not in top:
            raise ConfigError(f"unknown key {path[0]!r} in override {text!r}; valid: {top}")
        if path[0] == "train" and len(path) > 1 and path[1] not in train_keys:
            raise ConfigError(
                f"unknown key train.{path[1]} in override {text!r}; "
                f"valid keys of train: {', '.join(train_keys)}"
            )
        node = out
        for i, name in enumerate(path[:-1]):
            child = node.setdefault(name, {})
            if not isinstance(child, dict):
                dotted = ".".join(path[: i + 1])
                raise ConfigError(f"cannot set {text!r}: {dotted} is a value, not a section")
            node = child
        node[path[-1]] = value
    return out


RECIPES = Path(__file__).resolve().parent / "recipes"  # shipped with the package


def find_recipe(path: str | Path) -> Path:
    """`path` when it exists, else the recipe of that name shipped with the package
    (``recipes/tts/tacotron_dca_small.yaml`` or ``tts/tacotron_dca_small.yaml`` from any
    folder, also where aligner was installed from a wheel); else `path` unchanged."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    parts = path.parts[1:] if path.parts[:1] == ("recipes",) else path.parts
    shipped = RECIPES.joinpath(*parts) if parts else RECIPES
    return shipped if shipped.is_file() else path


def read_recipe(path: str | Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The raw dict of a YAML recipe (a file, or one shipped with the package:
    `find_recipe`). A recipe that names a ``base:`` recipe (a path relative to its own
    folder, or a shipped one) is that recipe with its own keys merged over it, section by
    section (`merge`): one setting written once, for the recipes that share it."""
    path = find_recipe(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        named = f" (the base: of {seen[-1]})" if seen else ""
        raise ConfigError(
            f"recipe {path}{named} does not exist; give the path to a YAML recipe"
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        what = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"cannot read recipe {path}{at}: {what}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read recipe {path}: {err}".splitlines()[0]) from None
    if not isinstance(raw, dict):
        raise ConfigError(f"recipe {path} must be a YAML mapping with task/data/model/train")
    base = raw.pop("base", None)
    if base is None:
        return raw
    if path.resolve() in seen:
        raise ConfigError(f"recipe {path} names itself as a base, through {seen[-1]}")
    near = path.parent / str(base)
    parent = read_recipe(near if near.is_file() else base, (*seen, path.resolve()))
    return merge(parent, raw)


def merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over`'s keys set over it; a mapping merges into a mapping key by key,
    anything else (a value, a list) replaces."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(path: str | Path, overrides: Iterable[str] = ()) -> ExperimentConfig:
    """Read a YAML recipe (`read_recipe`: a file or a shipped recipe, its ``base`` merged
    in), apply overrides, and validate it into an `ExperimentConfig`."""
    path = find_recipe(path)
    raw = apply_overrides(read_recipe(path), overrides)
    try:
        return ExperimentConfig.from_dict(raw, where="config")
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def save_config(cfg: ExperimentConfig, path: str | Path) -> None:
    """Write the full config as YAML (what `load_config` reads back)."""
    Path(path).write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False), encoding="utf-8")
