"""Options shared by several commands, spelled and checked one way: a bad value stops the
command at the command line with one line naming the option, before any work starts."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import click

# Largest accepted values: beyond them an option asks for absurd memory or time.
MAX_PAUSE_SECONDS = 10.0
MAX_BATCH_SIZE = 4096
MAX_GRIFFIN_LIM_ITERS = 10_000


class FloatRange(click.FloatRange):
    """`click.FloatRange` that refuses NaN (every comparison with NaN is false, so click's
    own range lets it through to fail deep in the work)."""

    def convert(self, value, param, ctx):  # type: ignore[no-untyped-def]
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number", param, ctx)
        return number

    def _describe_range(self) -> str:
        """No range in the help of an unbounded number (click writes ``x<=None``)."""
        if self.min is None and self.max is None:
            return ""
        return super()._describe_range()


FLOAT = FloatRange()  # any number, NaN refused


def parse_device(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``cpu``, ``cuda``, ``cuda:N`` or ``mps``, and present on this machine."""
    if value is None:
        return None
    import torch

    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        raise click.BadParameter(f"{value!r} is not a device; use cpu, cuda or cuda:N") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise click.BadParameter(f"{value!r}: no CUDA GPU is visible here; use --device cpu")
        if device.index is not None and device.index >= count:
            raise click.BadParameter(
                f"{value!r}: this machine has {count} GPU(s), cuda:0 to cuda:{count - 1}"
            )
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            raise click.BadParameter(f"{value!r}: MPS is not available here; use --device cpu")
    elif device.type != "cpu":
        raise click.BadParameter(f"{value!r}: use cpu, cuda, cuda:N or mps")
    return value


def parse_window(ctx: click.Context, param: click.Parameter, value: str | None):
    """`aligner.inference.common.parse_window`; not given -> ``RECIPE_WINDOW`` (the
    checkpoint's recipe decides)."""
    from aligner.inference import common

    if value is None:
        return common.RECIPE_WINDOW
    try:
        return common.parse_window(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


def resolve_checkpoint(ctx: click.Context, param: click.Parameter, value):
    """A checkpoint file, or an experiment folder (or its ``checkpoints/``): its
    ``best.pt``, else its latest checkpoint (`aligner.checkpoint.checkpoint_file`)."""
    from aligner.checkpoint import CheckpointError, checkpoint_file

    if value is None:
        return None
    values = value if isinstance(value, tuple) else (value,)
    try:
        resolved = tuple(checkpoint_file(v) for v in values)
    except CheckpointError as err:
        raise click.BadParameter(str(err)) from None
    return resolved if isinstance(value, tuple) else resolved[0]


def device_option(func):
    return click.option(
        "--device",
        default="cpu",
        show_default=True,
        callback=parse_device,
        help="Where to run: cpu, cuda, cuda:N or mps.",
    )(func)


def batch_size_option(default: int = 8, what: str = "Items decoded at once."):
    """The --batch-size decorator (at least 1)."""
    return click.option(
        "--batch-size",
        default=default,
        show_default=True,
        type=click.IntRange(1, MAX_BATCH_SIZE),
        help=what,
    )


def griffin_lim_option(func):
    return click.option(
        "--griffin-lim-iters",
        default=60,
        show_default=True,
        type=click.IntRange(1, MAX_GRIFFIN_LIM_ITERS),
        help="Griffin-Lim iterations of the vocoder (more: cleaner phase, slower).",
    )(func)


def vocoder_option(func):
    return click.option(
        "--vocoder",
        default="griffin-lim",
        show_default=True,
        metavar="NAME",
        help="griffin-lim; hifigan:DIR (a HiFi-GAN release: config.json and a generator "
        "file); or a vocoder trained here: its experiment folder or checkpoint (after `make "
        "demo`: demo/vocoder). Refused when its sample rate, hop, mels or f_max differ from "
        "the model's.",
    )(func)


def precision_option(func):
    return click.option(
        "--precision",
        default="fp32",
        show_default=True,
        type=click.Choice(["fp32", "fp16", "int8"]),
        help="The decoder's weights on the CPU: fp32 (each LSTM cell one fused product); fp16 "
        "(about 1.3x faster at Tacotron 2's size, output within about 1e-3 of fp32); int8 "
        "(about 1.9x, within the rounding of 8-bit weights).",
    )(func)


def max_length_ratio_option(default: float, per: str):
    """The --max-length-ratio decorator."""
    return click.option(
        "--max-length-ratio",
        default=default,
        show_default=True,
        type=FloatRange(0.0, 1000.0, min_open=True),
        help=f"Stop an output after this many {per} (reported when hit).",
    )


def checkpoint_option(func):
    return click.option(
        "--checkpoint",
        required=True,
        type=click.Path(path_type=Path),
        callback=resolve_checkpoint,
        help="A .pt file from EXP/checkpoints, or the experiment folder EXP (its best.pt, "
        "else its latest checkpoint).",
    )(func)


def force_option(func):
    return click.option(
        "--force", is_flag=True, help="Overwrite existing output files (nothing is deleted)."
    )(func)


def renamed(old: str, new: str, dest: str, **option_kw):
    """Decorator: accept the old spelling `old` of the option `new` (stored in `dest`) for
    a while, hidden from the help, with a note on stderr when it is used."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            value = kwargs.pop(f"old_{dest}")
            if value is not None:
                click.echo(
                    f"note: {old} is now spelled {new}; the old spelling will go in a "
                    "later release",
                    err=True,
                )
                if kwargs.get(dest) is None:
                    kwargs[dest] = value
            return func(*args, **kwargs)

        return click.option(old, f"old_{dest}", hidden=True, default=None, **option_kw)(wrapper)

    return decorate


def alignment_png_option(what: str):
    """``--alignment FILE.png``: the attention heatmap of what a command decoded."""
    return click.option(
        "--alignment",
        type=click.Path(dir_okay=False, path_type=Path),
        help=f"Alignment heatmap PNG file ({what}).",
    )


def window_option(default: str):
    """``--window BACK,FRONT|none`` (`parse_window`); `default` says what the checkpoint's
    recipe names when it is not given."""
    return click.option(
        "--window",
        callback=parse_window,
        help="Monotonic attention window BACK,FRONT around the last focus (e.g. 0,2; FRONT 1 "
        "at least), none, or recipe. Default: recipe, the one the checkpoint's recipe names "
        f"({default}).",
    )


def decoding_options(
    length_default: float,
    length_per: str,
    batch_default: int,
    batch_what: str,
    window_default: str,
    pace: bool = False,
):
    """The free-running decoding options of `synthesize` and `convert`, spelled once and
    handed to the command as one `aligner.inference.synthesis.Decoding` (``decoding``):
    --max-length-ratio, --window, --batch-size, [--pace,] --griffin-lim-iters, --vocoder,
    --precision and --seed."""
    options = [
        max_length_ratio_option(default=length_default, per=length_per),
        window_option(window_default),
        batch_size_option(default=batch_default, what=batch_what),
        *([pace_option] if pace else []),
        griffin_lim_option,
        vocoder_option,
        precision_option,
        seed_option,
    ]

    def decorate(func):
        @functools.wraps(func)
        def command(*args, **kw):
            from aligner.inference.synthesis import Decoding

            names = ("batch_size", "max_length_ratio", "window", "griffin_lim_iters", "seed")
            names += ("vocoder", "precision", "pace")
            decoding = Decoding(**{k: kw.pop(k) for k in names if k in kw})
            return func(*args, decoding=decoding, **kw)

        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def pace_option(func):
    return click.option(
        "--pace",
        default=1.0,
        show_default=True,
        type=FloatRange(0.1, 10.0),
        help="Speaking rate of a model that predicts its durations (fastpitch, fastvc): 2 "
        "says it twice as fast, 0.8 slower.",
    )(func)


def seed_option(func):
    from aligner.config import SEED_MAX, SEED_MIN

    return click.option(
        "--seed",
        default=0,
        show_default=True,
        type=click.IntRange(SEED_MIN, SEED_MAX),
        help="Seed (the prenet keeps dropout on, as Tacotron 2).",
    )(func)
