"""What every use of a trained model shares: the error a user can act on, and reading a
manifest given on the command line."""

from __future__ import annotations

from pathlib import Path


class InferenceError(ValueError):
    """A checkpoint or an input cannot be used; the message says what to do."""


def manifest_items(
    path: Path, option: str, keys: tuple[str, ...] = (), hint: str = ""
) -> list[dict]:
    """The items of the manifest `path` given as `option` (e.g. ``--ref``), each holding
    every key of `keys` (a non-empty value); `InferenceError` (one line, naming the file,
    the items and `hint`) otherwise."""
    from aligner.data.manifest import ManifestError, read_manifest

    if not path.is_file():
        raise InferenceError(f"{option} {path} does not exist{'; ' + hint if hint else ''}")
    try:
        items = read_manifest(path)
    except (ManifestError, ValueError) as err:
        raise InferenceError(str(err).splitlines()[0]) from None
    for key in keys:
        bad = [str(it.get("id", n)) for n, it in enumerate(items, 1) if not it.get(key)]
        if bad:
            more = f"; {hint}" if hint else ""
            raise InferenceError(f"{path}: items without '{key}': {', '.join(bad[:5])}{more}")
    return items
