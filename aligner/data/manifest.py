"""JSON Lines manifests: one utterance (or text pair) per line.

Speech corpora: ``{"id", "audio", "text", "speaker", "target_audio"?, "duration"?}``.
Text corpora (G2P, translation): ``{"id", "source", "target"}``.

File paths (``audio``, ``target_audio``, ``source_audio``) are stored relative to the manifest's folder
and resolved to absolute paths when read, so a corpus folder can be moved as a whole.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aligner.files import write_atomic

PATH_KEYS: tuple[str, ...] = ("audio", "target_audio", "source_audio")


class ManifestError(ValueError):
    """A manifest that cannot be read; the message names the file, the line and the fix."""


class ManifestNotFoundError(ManifestError, FileNotFoundError):
    """The manifest file does not exist."""


TEXT_KEYS: tuple[str, ...] = ("text", "source", "target")


def read_manifest(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Read a JSON Lines manifest; audio paths are returned absolute.

    Blank lines are ignored. Every other line must be a JSON object with a unique ``id``.
    Raises ``ManifestError`` naming the file and line of the first bad line and the
    numbers of the others (`read_manifest_items` keeps the good items of such a file),
    and ``FileNotFoundError`` for a missing manifest.
    """
    items, bad = read_manifest_items(path)
    if bad:
        others = [b.where.rsplit(":", 1)[-1] for b in bad[1:]]
        more = f" (bad lines too: {', '.join(others[:10])}" if others else ""
        more += f" and {len(others) - 10} more)" if len(others) > 10 else (")" if others else "")
        raise ManifestError(f"{bad[0].where}: {bad[0].reason}{more}")
    return items


@dataclass(frozen=True)
class BadLine:
    """A manifest line that is no item: ``where`` (``FILE:LINE``) and the ``reason``, with
    the fix."""

    where: str
    reason: str


def read_manifest_items(path: str | os.PathLike) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """Every good item of a JSON Lines manifest (audio paths absolute) and every bad line
    (`BadLine`: not UTF-8, not a JSON object, no ``id``, a field of the wrong type, an id
    met before: the first keeps it), for a batch job that reports them and goes on;
    ``FileNotFoundError`` for a missing manifest."""
    path = Path(path)
    if not path.is_file():
        raise ManifestNotFoundError(f"{path}: manifest not found; run `aligner prepare` first")
    root = path.parent.resolve()
    items: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    seen: dict[str, int] = {}
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            where = f"{path}:{lineno}"
            try:
                line = _decode(raw, path, lineno)
                if not line.strip():
                    continue
                item = _parse_line(line, path, lineno)
            except ManifestError as err:
                bad.append(BadLine(where, str(err).removeprefix(f"{where}: ")))
                continue
            if item["id"] in seen:
                reason = (
                    f"duplicate id {item['id']!r} (first on line {seen[item['id']]}); "
                    "ids must be unique"
                )
                bad.append(BadLine(where, reason))
                continue
            seen[item["id"]] = lineno
            items.append(_resolve_paths(item, root))
    return items, bad


def _decode(raw: bytes, path: Path, lineno: int) -> str:
    try:
        return raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as err:
        raise ManifestError(
            f"{path}:{lineno}: not UTF-8 (byte {raw[err.start]:#x} at column {err.start + 1}); "
            "manifests are UTF-8: convert the file, e.g. iconv -f latin1 -t utf-8"
        ) from None


def _parse_line(line: str, path: Path, lineno: int) -> dict[str, Any]:
    """Decode one manifest line and check it is an object with a string ``id``."""
    try:
        item = json.loads(line)
    except json.JSONDecodeError as err:
        raise ManifestError(
            f"{path}:{lineno}: not valid JSON ({err.msg} at column {err.colno}); "
            "each line must be one JSON object"
        ) from None
    if not isinstance(item, dict):
        raise ManifestError(
            f"{path}:{lineno}: expected a JSON object, got {type(item).__name__}; "
            "each line must be one JSON object"
        )
    if not isinstance(item.get("id"), str) or not item["id"]:
        raise ManifestError(f"{path}:{lineno}: missing or empty string field 'id'")
    for key in PATH_KEYS:
        if key in item and not isinstance(item[key], str):
            raise ManifestError(f"{path}:{lineno}: field {key!r} must be a path string")
    for key in TEXT_KEYS:
        if key in item and not isinstance(item[key], str):
            raise ManifestError(
                f"{path}:{lineno}: field {key!r} must be a string, got "
                f"{type(item[key]).__name__} {json.dumps(item[key])[:40]}"
            )
    return item


def _resolve_paths(item: dict[str, Any], root: Path) -> dict[str, Any]:
    for key in PATH_KEYS:
        if key in item:
            item[key] = os.path.normpath(root / item[key])
    return item


def write_manifest(
    path: str | os.PathLike, items: Iterable[Mapping[str, Any]], force: bool = True
) -> Path:
    """Write ``items`` as JSON Lines, atomically (temporary file, fsync, rename).

    Audio paths are stored relative to the manifest's folder (absolute or relative to
    the current directory on input). With ``force=False`` an existing file is an error.
    Returns the manifest path.
    """
    path = Path(path)
    if path.exists() and not force:
        raise FileExistsError(f"{path}: already exists; pass force=True (--force) to overwrite")
    path.parent.mkdir(parents=True, exist_ok=True)
    root = path.parent.resolve()
    lines = [json.dumps(_relative_paths(item, root), ensure_ascii=False) for item in items]
    text = "".join(line + "\n" for line in lines)  # readable as any file (mkstemp's were 0600)
    return write_atomic(path, lambda fh: fh.write(text), "w", encoding="utf-8")


def _relative_paths(item: Mapping[str, Any], root: Path) -> dict[str, Any]:
    out = dict(item)
    for key in PATH_KEYS:
        if key in out:
            out[key] = os.path.relpath(Path(out[key]).resolve(), root)
    return out


def manifest_items(
    path: Path,
    option: str,
    keys: tuple[str, ...] = (),
    hint: str = "",
    bad: list[BadLine] | None = None,
) -> list[dict]:
    """The items of the manifest `path` given as `option` (e.g. ``--ref``), each holding
    every key of `keys` (a non-empty value); `ManifestError` (one line, naming the file,
    the items and `hint`) otherwise, and for a manifest without items. `bad`: a batch
    job's list, which gets the lines that are no item (`read_manifest_items`) instead of
    an error for them."""
    if not path.is_file():
        raise ManifestError(f"{option} {path} does not exist{'; ' + hint if hint else ''}")
    try:
        if bad is None:
            items = read_manifest(path)
        else:
            items, lines = read_manifest_items(path)
            bad.extend(lines)
    except ManifestError:
        raise
    except ValueError as err:
        raise ManifestError(str(err).splitlines()[0]) from None
    if not items and not bad:
        raise ManifestError(
            f"{option} {path} holds no items; {hint or 'give a manifest with some'}"
        )
    for key in keys:
        bad = [str(it.get("id", n)) for n, it in enumerate(items, 1) if not it.get(key)]
        if bad:
            more = f"; {hint}" if hint else ""
            raise ManifestError(f"{path}: items without '{key}': {', '.join(bad[:5])}{more}")
    return items
