"""Phone error rate of a set of recordings against their texts, by a CTC phone recognizer
trained with ``recipes/recognize/ctc_small.yaml`` (`aligner.inference.recognizer`): whether
synthesized, converted or vocoded speech can be understood.


    python scripts/phone_error_rate.py --checkpoint exp/recognizer --manifest data/test.jsonl
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest data/test.jsonl --audio-key target_audio        # a VC pair's target
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest exp/vc/converted/manifest.jsonl                 # aligner convert's output
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest data/test.jsonl --audio-dir exp/vocoded         # ID.wav against the texts
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest data/test.jsonl --control noise                 # what no speech scores

It prints ``PER x.xx% (edits/phones) over N items`` and one line per item left out (no
text, missing or unreadable audio) and per file of ``--audio-dir`` that no item names;
``--json`` also writes the per-item hypotheses (an existing file only with ``--force``).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from aligner.cli.options import MAX_BATCH_SIZE, force_option, parse_device


@click.command(
    epilog=__doc__.split("\n\n")[1], context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--checkpoint",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="The recognizer: a checkpoint or its experiment folder (best.pt, else the latest).",
)
@click.option(
    "--manifest",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON Lines manifest of the items: id, text and the audio.",
)
@click.option(
    "--audio-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Score DIR/ID.wav for each item instead of the manifest's audio.",
)
@click.option(
    "--audio-key",
    default="audio",
    show_default=True,
    help="The manifest field of the recording (a VC pair's target: target_audio).",
)
@click.option(
    "--control",
    type=click.Choice(["griffin-lim", "noise", "wrong-text"]),
    help="Score a control instead: each recording through Griffin-Lim (the floor of a "
    "mel-making system), white noise of its length and RMS, or the next item's text.",
)
@click.option(
    "--limit",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="First N items (0 = all).",
)
@click.option(
    "--batch-size",
    default=16,
    show_default=True,
    type=click.IntRange(1, MAX_BATCH_SIZE),
    help="Recordings per batch.",
)
@click.option(
    "--device",
    default="cpu",
    show_default=True,
    callback=parse_device,
    help="cpu, cuda, cuda:1, ...",
)
@click.option("--verbose", is_flag=True, help="Print every item's errors and hypothesis.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the totals and per-item hypotheses as JSON.",
)
@force_option
def main(
    checkpoint: Path,
    manifest: Path,
    audio_dir: Path | None,
    audio_key: str,
    control: str | None,
    limit: int,
    batch_size: int,
    device: str,
    verbose: bool,
    json_out: Path | None,
    force: bool,
) -> None:
    """Print the phone error rate of the manifest's recordings against its texts."""
    from aligner.data.manifest import ManifestError, read_manifest_items
    from aligner.files import write_atomic
    from aligner.inference.common import InferenceError
    from aligner.inference.loading import load_model
    from aligner.inference.recognizer import PhoneRecognizer, phone_error_rate
    from aligner.inference.recognizer import control as control_condition

    if json_out is not None and json_out.exists() and not force:
        raise click.ClickException(f"{json_out} exists; pass --force to overwrite it")
    try:
        model = load_model(checkpoint, device)
        if not isinstance(model, PhoneRecognizer):
            raise InferenceError(
                f"{checkpoint} is no phone recognizer; train one with "
                "recipes/recognize/ctc_small.yaml"
            )
        items, bad_lines = read_manifest_items(manifest)
    except (InferenceError, ManifestError) as err:
        raise click.ClickException(str(err)) from None
    strays = _unnamed_files(audio_dir, items) if audio_dir is not None else []
    items = items[:limit] if limit > 0 else items
    transform = None
    if control:
        items, transform = control_condition(model, items, control)
    report = phone_error_rate(model, items, audio_dir, audio_key, batch_size, transform)
    lines = [f"{b.where}: {b.reason}" for b in bad_lines] + list(report.bad)
    for line in lines:
        click.echo(f"left out: {line}", err=True)
    if strays:
        shown = ", ".join(p.name for p in strays[:10])
        more = f" and {len(strays) - 10} more" if len(strays) > 10 else ""
        click.echo(
            f"not scored: {len(strays)} file(s) of {audio_dir} that no item of {manifest} "
            f"names: {shown}{more}",
            err=True,
        )
    if verbose:
        for uid, (edits, phones, hyp) in report.scored.items():
            click.echo(f"{uid}\t{edits}/{phones}\t{' '.join(hyp)}")
    click.echo(
        f"PER {report.per:.2f}% ({report.edits}/{report.phones}) over {report.items} items"
        + (f"; {len(lines)} left out" if lines else "")
    )
    if json_out is not None:
        totals = {"per": report.per, "edits": report.edits, "phones": report.phones}
        totals.update(items=report.items, left_out=lines)
        scored = {u: {"edits": e, "phones": n, "hyp": h} for u, (e, n, h) in report.scored.items()}
        json_out.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"totals": totals, "items": scored}, ensure_ascii=False)
        write_atomic(json_out, lambda fh: fh.write(text), mode="w", encoding="utf-8")
        click.echo(f"wrote {json_out}", err=True)
    if not report.items:
        raise click.ClickException(f"{manifest}: no item could be scored")


def _unnamed_files(folder: Path, items: list[dict]) -> list[Path]:
    """The audio files of `folder` whose name is no item's ``ID.wav`` (sorted)."""
    named = {f"{item['id']}.wav" for item in items}
    return sorted(
        p for p in folder.iterdir() if p.is_file() and _is_audio(p) and p.name not in named
    )


def _is_audio(path: Path) -> bool:
    return path.suffix.lower() in {".wav", ".flac", ".ogg", ".mp3"}


if __name__ == "__main__":
    main()
