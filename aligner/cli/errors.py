"""One line for an operating-system error that reached the command line."""

from __future__ import annotations


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
