"""One line for what went wrong: the library's user errors, an operating-system error that
reached the command line, and a batch's bad items."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import click


def describe_os_error(err: OSError) -> str:
    """A full disk, a quota, a read-only folder or a permission problem as
    `aligner.files.output_error` words it (naming the file and the device); any other
    error as its reason and file."""
    from aligner.files import output_error

    name = err.filename
    if name is not None:
        nicer = output_error(err, name)
        if nicer is not None:
            return str(nicer)
    reason = err.strerror or str(err)
    return f"{reason}: {name}" if name else f"{reason}; check the output folder and free space"


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the library's user-facing errors into one-line click errors."""
    from aligner.audio.io import AudioError
    from aligner.checkpoint import CheckpointError
    from aligner.data.manifest import ManifestError
    from aligner.evaluation import EvaluationError
    from aligner.inference.common import InferenceError

    try:
        yield
    except (
        InferenceError,
        EvaluationError,
        CheckpointError,
        AudioError,
        ManifestError,
        FileExistsError,
    ) as err:
        raise click.ClickException(str(err)) from None


def report(run, what: str) -> None:
    """Warnings, then `what`; every bad item of a batch on its own line and exit 1."""
    for line in run.warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(what)
    bad = getattr(run, "bad", [])
    for line in bad:
        click.echo(f"Error: {line}", err=True)
    if bad:
        click.echo(f"Error: {len(bad)} bad input(s) skipped (listed above)", err=True)
        raise click.exceptions.Exit(1)
