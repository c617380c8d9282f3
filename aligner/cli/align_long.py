"""`aligner align --long-form` (and ``--audio``/``--text``): whole recordings with their
whole texts; one library call (`aligner.inference.long_files`), a report out."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.audio.trim import PauseRule
from aligner.cli.errors import user_errors


def align_long_cli(
    checkpoint: Path,
    manifest: Path | None,
    audio: Path | None,
    text: Path | None,
    out: Path,
    device: str,
    force: bool,
    pauses: PauseRule,
) -> None:
    """Align, print each recording's mismatches, exit 1 when one could not be aligned."""
    from aligner.inference.long_files import align_long_items, long_items

    with user_errors():
        lines: list = []  # the manifest's lines that are no item: reported, counted
        items = long_items(manifest, audio, text, bad=lines)
        summary = align_long_items(checkpoint, items, out, force, device, pauses, bad_lines=lines)
    for item in summary.utterances:
        suspect = f"; suspect: {', '.join(item['suspect'])}" if item.get("suspect") else ""
        click.echo(
            f"{item['id']}: focus {item['focus_rate']:.3f}, {int(item['mismatches'])} "
            f"mismatch(es){suspect}"
        )
        if item.get("note"):
            click.echo(f"warning: {item['id']}: {item['note']}", err=True)
    import json

    found = json.loads((out / "summary.json").read_text(encoding="utf-8"))["mismatches"]
    for m in found:
        click.echo(f"  {m['id']} {m['start']:.2f}-{m['end']:.2f} s {m['kind']}: {m['text']!r}")
    if summary.guessed:
        click.echo(summary.guessed_note(), err=True)
    click.echo(f"wrote {out}/summary.json and per-recording files")
    for bad in summary.bad:
        click.echo(f"Error: {bad['id']}: {bad['reason']}", err=True)
    if summary.bad:
        raise click.exceptions.Exit(1)
