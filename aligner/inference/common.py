"""What every use of a trained model shares: the error a user can act on, reading a
manifest given on the command line, and the decoding window that the checkpoint's recipe
names."""

from __future__ import annotations

from pathlib import Path

from aligner.attention.base import MAX_WINDOW, check_window
from aligner.files import NotUtf8Error, looks_utf16, read_utf8

# Free-running decoding's window: the one the checkpoint's recipe names for synthesis
# (``model.decoder.window``; none where it names none). See `FreeRunning.generate`.
RECIPE_WINDOW = "recipe"


def parse_window(text: str) -> tuple[int, int] | str | None:
    """A window as the command line and scripts spell it: ``"BACK,FRONT"`` -> (back, front)
    (the core's `check_window`: whole numbers from 0 to ``MAX_WINDOW``), ``"none"`` -> None,
    ``"recipe"`` -> ``RECIPE_WINDOW``. ValueError naming what to write otherwise."""
    word = text.strip().lower()
    if word in ("none", RECIPE_WINDOW):
        return None if word == "none" else RECIPE_WINDOW
    try:
        window = check_window(tuple(int(v) for v in text.split(",")))
        if window is None or window[1] < 1:  # decoding never moves past its first token
            raise ValueError(text)
        return window
    except ValueError:
        raise ValueError(
            f"expected BACK,FRONT, two whole numbers from 0 to {MAX_WINDOW}, FRONT 1 at least "
            f"(e.g. 0,2), none or recipe, got {text!r}"
        ) from None


def window_words(window: tuple[int, int] | None) -> str:
    """How a report names a monotonic window: ``window 0,2`` or ``no window``."""
    return "no window" if window is None else f"window {window[0]},{window[1]}"


def unused_window(asked: tuple[int, int] | str | None, used: tuple[int, int] | None) -> list[str]:
    """A warning where a window was asked of a model that decodes without one (a duration
    model: its durations place every frame), so it is not silently dropped."""
    if isinstance(asked, tuple) and used is None:
        return [
            f"--window {asked[0]},{asked[1]}: this model has no attention (its durations "
            "place every frame); the window is not used"
        ]
    return []


class InferenceError(ValueError):
    """A checkpoint or an input cannot be used; the message says what to do."""


AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".mp3")  # audio files, read or named


def check_audio_out(out: Path, many: bool, inputs: str) -> None:
    """InferenceError where `out` is not the kind of path its inputs ask for: one input
    writes one audio file, named with its suffix (``--out conv/`` for one file wrote a
    WAV file called ``conv``); several (`inputs`: what they are) write into a folder,
    not one named like an audio file (``--out all.wav`` made a folder ``all.wav``)."""
    suffix = out.suffix.lower()
    if many and suffix in AUDIO_SUFFIXES and not out.is_dir():
        raise InferenceError(f"--out {out} names an audio file; give a folder for {inputs}")
    if not many and not out.is_dir() and not suffix:
        raise InferenceError(
            f"--out {out} has no suffix: name the audio file to write (OUT.wav; also .flac, "
            f".ogg), or give a folder for {inputs}"
        )


def safe_name(item_id: object) -> str:
    """A file name for an item id that stays inside the output folder: every character
    but letters, digits, ``-``, ``_`` and ``.`` becomes ``_`` (so ``../x`` and ``/abs/x``
    cannot leave it), without leading dots (no hidden files, no ``..``)."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(item_id))
    return name.lstrip(".") or "item"


def output_names(ids: list[object], source: str) -> list[str]:
    """`safe_name` of each id; InferenceError (naming both ids) when two of them would
    write the same files (equal names, also when they differ only in case, as on
    case-insensitive file systems)."""
    names = [safe_name(i) for i in ids]
    seen: dict[str, object] = {}
    for item_id, name in zip(ids, names):
        key = name.casefold()
        if key in seen:
            raise InferenceError(
                f"{source}: items {seen[key]!r} and {item_id!r} would both be written as "
                f"{name!r}; give them distinct ids (letters, digits, - _ .)"
            )
        seen[key] = item_id
    return names


def check_output_folder(out: Path, force: bool) -> None:
    """`out` may take a command's files: InferenceError when it is a file, or when it holds
    files and not `force` (nothing is overwritten without --force)."""
    if out.exists() and not out.is_dir():
        raise InferenceError(f"--out {out} is a file; give a folder")
    if out.exists() and any(out.iterdir()) and not force:
        raise InferenceError(f"{out} is not empty; pass --force to overwrite its files")


def read_text_file(path: Path, option: str = "--in") -> str:
    """The UTF-8 text of a file to read aloud; InferenceError (one line) for a missing,
    binary or non-UTF-8 file, naming the line and how to convert it."""
    if not path.is_file():
        raise InferenceError(f"{option} {path} does not exist")
    data = path.read_bytes()
    if looks_utf16(data):
        raise InferenceError(
            f"{option} {path} is UTF-16; save it as UTF-8 (e.g. iconv -f utf-16 -t utf-8)"
        )
    if b"\x00" in data:
        raise InferenceError(f"{option} {path} is a binary file, not text")
    try:
        return read_utf8(path)
    except NotUtf8Error as err:
        raise InferenceError(
            f"{option} {path}: line {err.line} is not UTF-8 (byte {err.byte:#x}); "
            "convert it, e.g. iconv -f latin1 -t utf-8"
        ) from None


def guessed_words(speech: object) -> list[str]:
    """The words `speech`'s tokenizer said by rules rather than from its dictionary (an
    ARPAbet model's ``oov: espeak``), sorted; empty for any other tokenizer."""
    return sorted(getattr(getattr(speech, "tokenizer", None), "guessed", ()))


def guessed_line(words: list[str]) -> str:
    """One line naming `words` (`guessed_words`), at most 20 of them."""
    shown = ", ".join(words[:20]) + (" ..." if len(words) > 20 else "")
    return (
        f"{len(words)} word(s) not in the pronunciation dictionary, said by eSpeak NG's "
        f"rules (check them): {shown}"
    )
