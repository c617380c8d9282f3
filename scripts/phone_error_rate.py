"""Phone error rate of a set of recordings against their texts, by a CTC phone recognizer
trained with ``recipes/recognize/ctc_small.yaml`` (`aligner.inference.recognizer`): whether
synthesized, converted or vocoded speech can be understood.

    python scripts/phone_error_rate.py --checkpoint exp/recognizer --manifest data/test.jsonl
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest data/test.jsonl --audio-key target_audio        # a VC pair's target
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest exp/vc/converted/manifest.jsonl                 # aligner convert's output
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \\
        --manifest data/test.jsonl --audio-dir exp/vocoded         # ID.wav against the texts
    python scripts/phone_error_rate.py --checkpoint exp/recognizer \
        --manifest data/test.jsonl --control noise                 # what no speech scores

It prints ``PER x.xx% (edits/phones) over N items`` and one line per item left out (no
text, missing or unreadable audio); ``--json`` also writes the per-item hypotheses.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command(epilog=__doc__.split("\n\n")[1])
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
@click.option("--limit", default=0, show_default=True, help="First N items (0 = all).")
@click.option("--batch-size", default=16, show_default=True, help="Recordings per batch.")
@click.option("--device", default="cpu", show_default=True, help="cpu, cuda, cuda:1, ...")
@click.option("--verbose", is_flag=True, help="Print every item's errors and hypothesis.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the totals and per-item hypotheses as JSON.",
)
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
) -> None:
    """Print the phone error rate of the manifest's recordings against its texts."""
    from aligner.data.manifest import ManifestError, read_manifest
    from aligner.inference.common import InferenceError
    from aligner.inference.loading import load_model
    from aligner.inference.recognizer import PhoneRecognizer, phone_error_rate
    from aligner.inference.recognizer import control as control_condition

    try:
        model = load_model(checkpoint, device)
        if not isinstance(model, PhoneRecognizer):
            raise InferenceError(
                f"{checkpoint} is no phone recognizer; train one with "
                "recipes/recognize/ctc_small.yaml"
            )
        items = read_manifest(manifest)
    except (InferenceError, ManifestError) as err:
        raise click.ClickException(str(err)) from None
    items = items[:limit] if limit > 0 else items
    transform = None
    if control:
        items, transform = control_condition(model, items, control)
    report = phone_error_rate(model, items, audio_dir, audio_key, batch_size, transform)
    for line in report.bad:
        click.echo(f"left out: {line}", err=True)
    if verbose:
        for uid, (edits, phones, hyp) in report.scored.items():
            click.echo(f"{uid}\t{edits}/{phones}\t{' '.join(hyp)}")
    click.echo(
        f"PER {report.per:.2f}% ({report.edits}/{report.phones}) over {report.items} items"
        + (f"; {len(report.bad)} left out" if report.bad else "")
    )
    if json_out is not None:
        totals = {"per": report.per, "edits": report.edits, "phones": report.phones}
        totals.update(items=report.items, left_out=report.bad)
        scored = {u: {"edits": e, "phones": n, "hyp": h} for u, (e, n, h) in report.scored.items()}
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps({"totals": totals, "items": scored}, ensure_ascii=False))
        click.echo(f"wrote {json_out}", err=True)
    if not report.items:
        raise click.ClickException(f"{manifest}: no item could be scored")


if __name__ == "__main__":
    main()
