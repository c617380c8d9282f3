"""`aligner score`: PER/WER of G2P output, BLEU/chrF of translations, or mel-cepstral
distortion of converted speech."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command()
@click.option(
    "--task",
    required=True,
    type=click.Choice(["g2p", "nmt", "vc"]),
    help="g2p: PER/WER of `aligner g2p` lines; nmt: BLEU/chrF of translations; "
    "vc: mel-cepstral distortion of `aligner convert` output.",
)
@click.option(
    "--hyp",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The outputs: `aligner g2p --in MANIFEST` or `aligner translate --in MANIFEST` "
    "(a text file), or the manifest.jsonl of `aligner convert` (vc).",
)
@click.option(
    "--ref",
    type=click.Path(dir_okay=False, path_type=Path),
    help="g2p, nmt: the manifest the outputs were decoded from (its `target`s are "
    "the references); vc names its targets in --hyp.",
)
@click.option(
    "--lowercase",
    is_flag=True,
    help="nmt: case-insensitive scores (a model trained with data.lowercase_target).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scores as one JSON line.")
def score(task: str, hyp: Path, ref: Path, lowercase: bool, as_json: bool) -> None:
    """Score decoded outputs against the references of a manifest.

    G2P: phone and word error rates in %, with the stress digits and without them (a word
    is right when it equals any of its reference pronunciations). Translation: corpus
    BLEU and chrF (sacrebleu, 13a tokenization). VC: DTW mel-cepstral distortion (dB) of
    the converted and of the source audio against the target.

    \b
    Examples:
      aligner g2p --checkpoint exp/g2p/avg.pt --in data/test.jsonl > test.txt
      aligner score --task g2p --hyp test.txt --ref data/test.jsonl
      aligner score --task vc --hyp exp/vc/converted/manifest.jsonl
    """
    from aligner.data.manifest import ManifestError
    from aligner.evaluation import EvaluationError
    from aligner.evaluation.text import score_outputs

    try:
        scores, line = score_outputs(task, hyp, ref, lowercase)
    except (EvaluationError, ManifestError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(json.dumps({k: round(v, 4) for k, v in scores.items()}) if as_json else line)


@click.command("score-alignment")
@click.option(
    "--reference",
    required=True,
    type=click.Path(path_type=Path),
    help="A manifest whose items have reference timings (aligner prepare espeak), "
    "or a folder of reference TextGrids (tiers words, phones).",
)
@click.option(
    "--predicted",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="A folder of predicted ID.TextGrid (any tool) or ID.durations.json (aligner align).",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the full report (per tier, worst and unmatched items) as JSON.",
)
@click.option(
    "--by-speaker",
    is_flag=True,
    help="Also score each speaker of the reference manifest on its own.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing --out.")
def score_alignment(
    reference: Path, predicted: Path, out: Path | None, by_speaker: bool, force: bool
) -> None:
    """Word and phone boundary errors (ms) of an alignment against reference timings.

    Mean, median and signed mean (bias) of the absolute errors of every interval's start
    and end, and the share within 10, 20 and 50 ms, per tier; items that cannot be paired
    (no prediction, no tier, another number of words or phones) are listed.

    \b
    Examples:
      aligner align --checkpoint exp/tts/checkpoints/best.pt --in data/valid.jsonl --out ali
      aligner score-alignment --reference data/valid.jsonl --predicted ali
      aligner score-alignment --reference data/valid.jsonl --predicted mfa_output/
      aligner score-alignment --reference data/festival/test.jsonl --predicted ali --by-speaker
    """
    from aligner.data.manifest import ManifestError
    from aligner.evaluation import EvaluationError
    from aligner.evaluation.alignment import score_alignments, table

    try:
        result = score_alignments(reference, predicted, by_speaker=by_speaker, out=out, force=force)
    except (EvaluationError, ManifestError) as err:
        raise click.ClickException(str(err)) from None
    click.echo(table(result))
    if out is not None:
        click.echo(f"wrote {out}")
    if not any(result[name]["boundaries"] for name in ("words", "phones")):
        raise click.ClickException(
            f"no item of {reference} could be paired with {predicted} (the unmatched lines "
            "above say why; none: the reference items have no words or phones)"
        )
    if result.get("bad_reference_lines"):
        click.echo(
            f"Error: {len(result['bad_reference_lines'])} line(s) of {reference} are no item "
            "(listed above); the others are scored",
            err=True,
        )
        raise click.exceptions.Exit(1)
