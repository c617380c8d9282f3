"""`aligner synthesize | convert | vocode`: options in, one library call (aligner.inference),
a report out. A failure the user can fix ends with one line (click.ClickException) and exit code 1."""

from __future__ import annotations

from pathlib import Path

import click

from aligner.cli.errors import report, user_errors
from aligner.cli.options import (
    MAX_PAUSE_SECONDS,
    FloatRange,
    alignment_png_option,
    checkpoint_option,
    decoding_options,
    device_option,
    force_option,
    griffin_lim_option,
    renamed,
    vocoder_option,
)

save_mel_option = click.option(
    "--save-mel",
    type=click.Path(file_okay=False, path_type=Path),
    help="Also write each predicted mel spectrogram as NAME.npy (log-mel, frames x mels; "
    "see docs/commands.md) into this folder, for a neural vocoder.",
)


# ---------------------------------------------------------------------- synthesize
@click.command()
@checkpoint_option
@click.option("--text", help="Text to say (long text is split into sentences).")
@click.option(
    "--in",
    "text_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read the text from this UTF-8 file instead.",
)
@renamed("--text-file", "--in", "text_file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Output WAV file (sentences joined with --pause seconds of silence).",
)
@alignment_png_option("one panel per sentence")
@save_mel_option
@click.option(
    "--pause",
    default=0.25,
    show_default=True,
    type=FloatRange(0.0, MAX_PAUSE_SECONDS),
    help=f"Seconds of silence between sentences (at most {MAX_PAUSE_SECONDS:g}).",
)
@decoding_options(
    10.0,
    "mel frames per input token",
    16,
    "Sentences decoded at once (one batch shares each weight read: several times faster "
    "than one by one).",
    "model.decoder.window: 0,2 in the small forward-attention recipe; none in checkpoints "
    "trained before recipes named one",
    pace=True,
)
@device_option
@force_option
def synthesize(
    checkpoint: Path,
    text: str | None,
    text_file: Path | None,
    out: Path,
    alignment: Path | None,
    save_mel: Path | None,
    pause: float,
    decoding,
    device: str,
    force: bool,
) -> None:
    """Text to speech with a TTS checkpoint (Griffin-Lim or --vocoder).

    Prints how the text was normalized and split into sentences.

    \b
    Examples:
      aligner synthesize --checkpoint demo/exp --text "Hello there." --out hello.wav
      aligner synthesize --checkpoint exp/tts/checkpoints/best.pt --in book.txt \\
          --out book.wav --save-mel mels/
    """
    from aligner.inference import synthesis
    from aligner.inference.common import read_text_file, window_words

    if (text is None) == (text_file is None):
        raise click.ClickException("give the text with exactly one of --text or --in FILE")
    with user_errors():
        if text_file is not None:
            text = read_text_file(text_file)
        result = synthesis.synthesize(
            checkpoint,
            text or "",
            out,
            alignment,
            decoding,
            pause,
            device,
            force,
            save_mel=save_mel,
        )
    for i, sentence in enumerate(result.names, 1):
        click.echo(f"sentence {i}: {sentence}")
    report(
        result,
        f"wrote {out} ({result.frames} frames, {len(result.names)} sentence(s), "
        f"{checkpoint} at step {result.step}, {window_words(result.window)})",
    )


# ---------------------------------------------------------------------- convert
@click.command()
@checkpoint_option
@click.option(
    "--in",
    "src",
    required=True,
    type=click.Path(path_type=Path),
    help="Source audio: a file, a folder of audio files, or a manifest (.jsonl).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A WAV file for one input file; a folder for a folder or a manifest.",
)
@alignment_png_option("one input file only")
@save_mel_option
@decoding_options(
    3.0,
    "output frames per source frame",
    16,
    "Pieces of audio decoded at once.",
    "model.decoder.window; the VC recipes name none",
    pace=True,
)
@device_option
@force_option
def convert(
    checkpoint: Path,
    src: Path,
    out: Path,
    alignment: Path | None,
    save_mel: Path | None,
    decoding,
    device: str,
    force: bool,
) -> None:
    """Voice conversion of one file, a folder or a manifest with a VC checkpoint.

    A batch converts every readable input, names each bad one (also in OUT/summary.json)
    and then exits with status 1. Recordings longer than 20 s are converted in pieces cut
    at silences.

    \b
    Examples:
      aligner convert --checkpoint exp/vc --in src.wav --out converted.wav
      aligner convert --checkpoint exp/vc/checkpoints/best.pt --in data/test.jsonl --out conv/
    """
    from aligner.inference import conversion
    from aligner.inference.common import window_words

    with user_errors():
        result = conversion.convert(
            checkpoint, src, out, alignment, decoding, device, force, save_mel=save_mel
        )
    report(
        result,
        f"wrote {len(result.outputs)} file(s) to {out} ({checkpoint} at step {result.step}, "
        f"{window_words(result.window)})",
    )


# ---------------------------------------------------------------------- vocode
@click.command()
@click.option(
    "--in",
    "src",
    required=True,
    type=click.Path(path_type=Path),
    help="A saved log-mel .npy (frames x mels) or a folder of them, with the folder's "
    "mel_config.json (what --save-mel writes).",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path),
    help="A WAV file for one .npy; a folder (NAME.wav) for a folder.",
)
@vocoder_option
@griffin_lim_option
@device_option
@force_option
def vocode(
    src: Path, out: Path, vocoder: str, griffin_lim_iters: int, device: str, force: bool
) -> None:
    """Saved log-mels to audio with any vocoder, to hear mels or compare vocoders.

    A folder is vocoded item by item: every readable mel is written, each bad one named,
    then the command exits with status 1.

    \b
    Examples:
      aligner synthesize --checkpoint exp/tts --in book.txt --out book.wav --save-mel mels/
      aligner vocode --in mels/ --out wavs/ --vocoder hifigan:~/hifigan/LJ_V1
      aligner vocode --in mels/sentence-1.npy --out s1.wav --griffin-lim-iters 100
    """
    from aligner.inference import vocode as vocoding

    with user_errors():
        result = vocoding.vocode(src, out, vocoder, griffin_lim_iters, device, force)
    report(result, f"wrote {len(result.outputs)} file(s) to {out} with {result.vocoder}")
