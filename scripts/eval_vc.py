"""Voice conversion scored as VC papers score it, for the source itself (no conversion)
and each converted system, against the target voice (`aligner.evaluation.vc`):

- MCD (dB): SPTK mel-cepstra of WORLD spectral envelopes (pyworld + pysptk, order 24,
  all-pass constant 0.455 at 22,050 Hz, c0 excluded, 5 ms frames), silent frames
  (< -20 dB) dropped, exact DTW, mean over the path;
- F0 RMSE (Hz and cents) and correlation on the DTW pairs voiced in both, V/UV error;
- the duration difference (speech seconds, silence trimmed) and ratio, converted/target;
- mapping ms: mean distance of the source-to-target time mapping from the reference
  phone (or word) boundaries of the target voice (the source: its own timing).

    python scripts/eval_vc.py --system seq2seq=exp/vc/converted/manifest.jsonl \
        --system baseline=exp/baseline/converted/manifest.jsonl \
        --alignment seq2seq=exp/vc/align/summary.json --alignment baseline=source \
        [--limit 20] [--verbose] [--json exp/vc/score/table.json]

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
@click.option("--limit", default=0, show_default=True, help="First N items (0 = all).")
@click.option("--verbose", is_flag=True, help="Print every item.")
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write per-item scores and totals as JSON.",
)
def main(systems, alignments, limit: int, verbose: bool, json_out: Path | None) -> None:
    """Print MCD, F0 and duration scores of the source and each system (Markdown table)."""
    from aligner.evaluation.vc import markdown, score_systems, set_mapping
    from aligner.inference.common import InferenceError

    manifests = {name: Path(path) for name, path in _pairs(systems, "--system").items()}
    if "source" in manifests:
        raise click.ClickException("--system source=...: 'source' names the unconverted row")
    try:
        table = score_systems(manifests, limit=limit, progress=_progress)
        for name, alignment in _pairs(alignments, "--alignment").items():
            set_mapping(table, name, alignment)
    except InferenceError as err:
        raise click.ClickException(str(err)) from None
    if verbose:
        for name, rows in table.items.items():
            for r in rows:
                click.echo(
                    f"{name}\t{r['id']}\tMCD {r['mcd']:.2f}\tF0 RMSE {r['f0_rmse_hz']:.1f} Hz"
                    f"\tdur {r['seconds']:.2f}/{r['target_seconds']:.2f} s"
                )
    click.echo(markdown(table))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps({"totals": table.totals, "items": table.items}, indent=1))
        click.echo(f"wrote {json_out}", err=True)


if __name__ == "__main__":
    main()
