"""The off-the-shelf peer aligner: PocketSphinx 5 forced alignment (its en-us acoustic model and
CMU dictionary) of a manifest's items, written as Praat TextGrids with `words` and `phones` tiers.

    python scripts/pocketsphinx_align.py --in data/test.jsonl --out exp/pocketsphinx [--force]
    aligner score-alignment --reference data/test.jsonl --predicted exp/pocketsphinx

PocketSphinx is an optional dependency, so this runs in an environment of its own and imports
no `aligner` module (see INSTALL). Audio of any rate is mixed to mono and resampled to 16 kHz;
the text is lower-cased and split into words of letters and apostrophes. Silences and fillers
(`<sil>`, `SIL`, `[NOISE]`, `+NSN+`) are dropped, left as empty intervals. An item that cannot
be aligned is skipped with one line on stderr; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from math import gcd
from pathlib import Path

INSTALL = (
    "python3 -m venv /work/psvenv && "
    "/work/psvenv/bin/pip install pocketsphinx==5.1.1 soundfile numpy praatio scipy"
)
RATE = 16000  # Hz, the acoustic model's sample rate
FRAME = 0.01  # s, one PocketSphinx frame (frate 100)
MIN_SECONDS = 0.1  # shorter audio is skipped (PocketSphinx needs a few frames)
Interval = tuple[float, float, str]  # start s, end s, label

_decoder = None  # one per process, made on first use


class Skip(Exception):
    """An item that cannot be aligned; the message is the reason."""


def words_of(text: str) -> list[str]:
    """Lower-case words of letters and apostrophes; anything else separates words."""
    return [w for w in re.findall(r"(?:[^\W\d_]|')+", text.lower()) if w.strip("'")]


def load_pcm(path: Path) -> tuple[bytes, float]:
    """The audio as 16 kHz mono 16-bit little-endian PCM bytes, and its duration in s."""
    import numpy as np
    import soundfile as sf
    from scipy.signal import resample_poly

    if not path.is_file():
        raise Skip(f"no audio file {path}")
    try:
        audio, rate = sf.read(str(path), dtype="float32", always_2d=True)  # (samples, channels)
    except (OSError, RuntimeError) as err:
        raise Skip(f"cannot read {path}: {str(err).splitlines()[0]}") from None
    duration = len(audio) / rate
    if duration < MIN_SECONDS:
        raise Skip(f"{path} is too short ({duration:.3f} s)")
    mono = audio.mean(axis=1)  # (samples,)
    if rate != RATE:
        g = gcd(RATE, rate)
        mono = resample_poly(mono, RATE // g, rate // g)
    pcm = np.clip(np.round(mono * 32767), -32768, 32767).astype("<i2")
    return pcm.tobytes(), duration


def decoder():
    """This process's PocketSphinx decoder (no language model: alignment only)."""
    global _decoder
    if _decoder is None:
        from pocketsphinx import Decoder

        _decoder = Decoder(lm=None, loglevel="FATAL")
    return _decoder


def spellings(words: list[str]) -> list[str]:
    """The dictionary spelling of each word (apostrophes at its ends dropped if need be)."""
    out = []
    for word in words:
        found = [w for w in (word, word.strip("'")) if decoder().lookup_word(w)]
        if not found:
            raise Skip(f"'{word}' is not in the PocketSphinx dictionary")
        out.append(found[0])
    return out


def _decode(pcm: bytes) -> None:
    d = decoder()
    d.start_utt()
    d.process_raw(pcm, full_utt=True)
    d.end_utt()


def align(words: list[str], pcm: bytes):
    """Two passes: word-level alignment of `words`, then the phone-level one. Returns the
    `pocketsphinx.Alignment` (words holding phones; start and duration in 10 ms frames)."""
    d = decoder()
    try:
        d.set_align_text(" ".join(words))
        _decode(pcm)
        if d.hyp() is None:
            raise Skip("alignment failed (no hypothesis)")
        d.set_alignment()
        _decode(pcm)
        alignment = d.get_alignment()
    except (RuntimeError, IndexError) as err:
        raise Skip(f"alignment failed ({err})") from None
    if alignment is None:
        raise Skip("alignment failed (no phone alignment)")
    return alignment


def is_filler(name: str) -> bool:
    """PocketSphinx's silence and noise words and phones: <sil>, [NOISE], SIL, +NSN+."""
    return name[:1] in "<[+" or name.upper() == "SIL"


def seconds(entry, duration: float) -> tuple[float, float]:
    """An alignment entry's (start, end) in s, clipped to 0..duration."""
    start = min(entry.start * FRAME, duration)
    return start, min((entry.start + entry.duration) * FRAME, duration)


def tiers(alignment, duration: float) -> dict[str, list[Interval]]:
    """The labelled word and phone intervals (fillers dropped, alternate pronunciations'
    `(2)` suffixes removed, empty intervals after clipping dropped)."""
    out: dict[str, list[Interval]] = {"words": [], "phones": []}
    for word in alignment:
        if is_filler(word.name):
            continue
        out["words"].append((*seconds(word, duration), re.sub(r"\(\d+\)$", "", word.name)))
        for phone in word:
            if not is_filler(phone.name):
                out["phones"].append((*seconds(phone, duration), phone.name.lower()))
    return {name: [iv for iv in ivs if iv[1] > iv[0]] for name, ivs in out.items()}


def write_grid(path: Path, grid: dict[str, list[Interval]], duration: float) -> None:
    """A long Praat TextGrid over 0..duration s; the gaps become empty intervals."""
    from praatio import textgrid

    tg = textgrid.Textgrid()
    for name, intervals in grid.items():
        tg.addTier(textgrid.IntervalTier(name, intervals, 0.0, duration))
    tg.save(str(path), format="long_textgrid", includeBlankSpaces=True)


def align_item(job: tuple[dict, str, str]) -> tuple[str, str | None]:
    """Align one manifest item (item, manifest folder, out folder); returns (id, reason it
    was skipped or None)."""
    item, base, out = job
    uid = str(item.get("id", "?"))
    try:
        if "bad" in item:
            raise Skip(item["bad"])
        if not isinstance(item.get("audio"), str) or not isinstance(item.get("text"), str):
            raise Skip("the item needs 'id', 'audio' and 'text'")
        words = words_of(item["text"])
        if not words:
            raise Skip("the text has no words")
        pcm, duration = load_pcm(Path(base) / item["audio"])
        grid = tiers(align(spellings(words), pcm), duration)
        write_grid(Path(out) / f"{uid}.TextGrid", grid, duration)
    except Skip as err:
        return uid, str(err)
    except (OSError, ValueError) as err:
        return uid, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
    return uid, None


def read_manifest(path: Path) -> list[dict]:
    """The manifest's items (a line that is not a JSON object with an id becomes a `bad`
    item, skipped later with its line number as id)."""
    items = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict) or "id" not in item:
            item = {"id": f"line {n}", "bad": "not a JSON object with an 'id'"}
        items.append(item)
    return items


def run(items: list[dict], base: Path, out: Path, workers: int) -> list[tuple[str, str]]:
    """Align every item (audio relative to `base`) into `out`; returns the skipped
    (id, reason) pairs."""
    jobs = [(item, str(base), str(out)) for item in items]
    if workers > 1:
        from multiprocessing import Pool

        with Pool(workers) as pool:
            results = pool.imap(align_item, jobs)
            return _report(results)
    return _report(map(align_item, jobs))


def _report(results) -> list[tuple[str, str]]:
    skipped = []
    for uid, reason in results:
        if reason is not None:
            print(f"skipped {uid}: {reason}", file=sys.stderr, flush=True)
            skipped.append((uid, reason))
    return skipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="manifest", type=Path, required=True, help="JSONL manifest")
    parser.add_argument("--out", type=Path, required=True, help="folder for ID.TextGrid")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--force", action="store_true", help="overwrite existing TextGrids")
    args = parser.parse_args(argv)
    try:
        import pocketsphinx  # noqa: F401
    except ImportError:
        print(f"pocketsphinx is not installed; make its environment: {INSTALL}", file=sys.stderr)
        return 2
    if not args.manifest.is_file():
        print(f"--in {args.manifest} is not a file", file=sys.stderr)
        return 2
    if args.out.is_dir() and any(args.out.glob("*.TextGrid")) and not args.force:
        print(f"{args.out} already has .TextGrid files (use --force)", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        return _finish(args, time.perf_counter())
    except (OSError, UnicodeDecodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _finish(args: argparse.Namespace, start: float) -> int:
    items = read_manifest(args.manifest)
    total = len(items)
    skipped = run(items, args.manifest.parent, args.out, max(1, args.workers))
    secs = time.perf_counter() - start
    aligned = total - len(skipped)
    print(f"aligned {aligned} of {total} items in {secs:.1f} s ({len(skipped)} skipped)")
    summary = {
        "manifest": str(args.manifest), "items": total, "aligned": aligned,
        "skipped": [{"id": uid, "reason": why} for uid, why in skipped], "seconds": round(secs, 2),
    }  # fmt: skip
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
