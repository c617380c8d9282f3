"""Voice conversion scored as VC papers score it, for the source itself (no conversion)
and each converted system, against the target voice (`aligner.evaluation.vc`):

- MCD (dB): SPTK mel-cepstra of WORLD spectral envelopes (pyworld + pysptk, order 24,
  all-pass constant 0.455 at 22,050 Hz, c0 excluded, 5 ms frames), silent frames
  (< -20 dB) dropped, exact DTW, mean over the path;
- F0 RMSE (Hz and cents) and correlation on the DTW pairs voiced in both, V/UV error;
- the duration difference (speech seconds, silence trimmed) and ratio, converted/target;
- mapping ms: mean distance of the source-to-target time mapping from the reference
  phone (or word) boundaries of the target voice (the source: its own timing);
- PER %: with ``--recognizer``, the phone error rate of each row's audio against the
  texts by a phone recognizer trained on the corpus (``recipes/recognize/ctc_small.yaml``,
  `scripts/phone_error_rate.py`), and below the table that of the target's recordings.

    python scripts/eval_vc.py --system seq2seq=exp/vc/converted/manifest.jsonl \
        --system baseline=exp/baseline/converted/manifest.jsonl \
        --alignment seq2seq=exp/vc/align/summary.json --alignment baseline=source \
        [--recognizer exp/recognizer] [--limit 20] [--verbose] [--json exp/vc/score/vc.json]

Each manifest is what `aligner convert --in data/test.jsonl --out DIR` (or
`scripts/vc_baseline.py convert`) writes; ``--alignment NAME=SUMMARY`` takes a system's
mapping error from `aligner align`'s summary.json, ``NAME=source`` marks a system that
keeps the source's timing.
"""

from __future__ import annotations

import json
from pathlib import Path

import click


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise click.ClickException(f"{option} {value!r}: write NAME=PATH")
        out[name] = path
    return out


def _progress(done: int, total: int) -> None:
    if done == total or done % 10 == 0:
        click.echo(f"  analysed {done}/{total}", err=True)


@click.command()
@click.option(
    "--system",
    "systems",
    multiple=True,
    required=True,
    help="NAME=MANIFEST: the manifest.jsonl of a conversion (repeatable).",
)
@click.option(
    "--alignment",
    "alignments",
    multiple=True,
    help="NAME=SUMMARY: aligner align's summary.json for that system, or NAME=source.",
)
@click.option(
    "--recognizer",
    type=click.Path(exists=True, path_type=Path),
    help="A phone recognizer (checkpoint or experiment folder): adds the PER column.",
)
@click.option("--limit", default=0, show_default=True, help="First N items (0 = all).")
@click.option("--verbose", is_flag=True, help="Print every item.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write per-item scores and totals as JSON.",
)
def main(
    systems, alignments, recognizer: Path | None, limit: int, verbose: bool, json_out: Path | None
) -> None:
    """Print MCD, F0 and duration scores of the source and each system (Markdown table)."""
    from aligner.evaluation import EvaluationError
    from aligner.evaluation.vc import markdown, score_systems, set_mapping
    from aligner.inference.common import InferenceError

    manifests = {name: Path(path) for name, path in _pairs(systems, "--system").items()}
    if "source" in manifests:
        raise click.ClickException("--system source=...: 'source' names the unconverted row")
    try:
        table = score_systems(manifests, limit=limit, progress=_progress)
        for name, alignment in _pairs(alignments, "--alignment").items():
            set_mapping(table, name, alignment)
        target = _phone_error_rates(table, recognizer) if recognizer is not None else None
    except (EvaluationError, InferenceError) as err:
        raise click.ClickException(str(err).splitlines()[0]) from None
    if verbose:
        for name, rows in table.items.items():
            for r in rows:
                click.echo(
                    f"{name}\t{r['id']}\tMCD {r['mcd']:.2f}\tF0 RMSE {r['f0_rmse_hz']:.1f} Hz"
                    f"\tdur {r['seconds']:.2f}/{r['target_seconds']:.2f} s"
                )
    click.echo(markdown(table))
    result = {"totals": table.totals, "items": table.items}
    if target is not None:
        click.echo(
            f"\nThe target's recordings: PER {target.per:.2f}% ({target.edits}/{target.phones} "
            f"phones, {target.items} items; recognizer {recognizer})."
        )
        result["target_per"] = {"per": target.per, "edits": target.edits, "phones": target.phones}
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=1))
        click.echo(f"wrote {json_out}", err=True)


def _phone_error_rates(table, recognizer: Path):
    """The PER of every row (the source row: its source audio) and the `PERReport` of the
    target's recordings; items left out are named on stderr."""
    from aligner.evaluation.vc import set_per
    from aligner.inference.common import InferenceError
    from aligner.inference.loading import load_model
    from aligner.inference.recognizer import PhoneRecognizer, phone_error_rate

    model = load_model(recognizer)
    if not isinstance(model, PhoneRecognizer):
        raise InferenceError(
            f"--recognizer {recognizer} is no phone recognizer; train one with "
            "recipes/recognize/ctc_small.yaml"
        )
    for name in list(table.items):
        key = "source_audio" if name == "source" else "audio"
        report = phone_error_rate(model, table.sources[name], None, key)
        set_per(table, name, report.scored)
        for line in report.bad:
            click.echo(f"PER of {name}: left out {line}", err=True)
    return phone_error_rate(model, table.sources["source"], None, "target_audio")


if __name__ == "__main__":
    main()
