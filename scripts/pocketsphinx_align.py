"""The off-the-shelf peer aligner: PocketSphinx 5 forced alignment (its en-us acoustic model and
CMU dictionary) of a manifest's items, written as Praat TextGrids with `words` and `phones` tiers.

    python scripts/pocketsphinx_align.py --in data/test.jsonl --out exp/pocketsphinx [--force]
    aligner score-alignment --reference data/test.jsonl --predicted exp/pocketsphinx

PocketSphinx is an optional dependency, so it lives in an environment of its own and this
script imports no `aligner` module: `make peers` creates that environment inside the checkout
(`.peers/pocketsphinx`, ignored by git). Run from any interpreter that lacks pocketsphinx, the
script starts itself again under `$POCKETSPHINX_PYTHON` if set, else under that environment's
Python. Audio of any rate is mixed to mono and resampled to 16 kHz;
the text is lower-cased and split into words of letters and apostrophes. Silences and fillers
(`<sil>`, `SIL`, `[NOISE]`, `+NSN+`) are dropped, left as empty intervals. An item that cannot
be aligned is skipped with one line on stderr; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from math import gcd
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEER_PYTHON = ROOT / ".peers" / "pocketsphinx" / "bin" / "python"  # made by `make peers`
INSTALL = "make peers (or set POCKETSPHINX_PYTHON to a Python that has pocketsphinx==5.1.1)"
RATE = 16000  # Hz, the acoustic model's sample rate
FRAME = 0.01  # s, one PocketSphinx frame (frate 100)
MIN_SECONDS = 0.1  # shorter audio is skipped (PocketSphinx needs a few frames)
Interval = tuple[float, float, str]  # start s, end s, label

# Decoder settings, tried in turn until one aligns all the words. PocketSphinx's defaults
# aligned 24 of the 50 eSpeak NG test items (no path through the words' graph for the rest);
# with dither (load_pcm: for the digital silence of synthetic speech) and no bestpath
# rescoring 44; the rest align without the optional silences and alternate pronunciations.
SETTINGS = ({"bestpath": False}, {"fsgusefiller": False, "fsgusealtpron": False})
ALT_PRON = re.compile(r"\(\d+\)$")  # a dictionary word's alternate pronunciation: the(2)
_decoders: list = []  # this process's decoders, one per SETTINGS entry


class Skip(Exception):
    """An item that cannot be aligned; the message is the reason."""


def words_of(text: str) -> list[str]:
    """Lower-case words of letters and apostrophes; anything else separates words."""
    return [w for w in re.findall(r"(?:[^\W\d_]|')+", text.lower()) if w.strip("'")]


def load_pcm(path: Path) -> tuple[bytes, float]:
    """The audio as 16 kHz mono 16-bit little-endian PCM bytes with +-1 LSB of seeded noise
    (dither), and its duration in s."""
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
    noise = np.random.default_rng(0).uniform(-1, 1, len(mono))  # dither: see SETTINGS
    pcm = np.clip(np.round(mono * 32767 + noise), -32768, 32767).astype("<i2")
    return pcm.tobytes(), duration


def decoders() -> list:
    """This process's PocketSphinx decoders (no language model: alignment only), one per
    entry of SETTINGS, made on first use."""
    if not _decoders:
        from pocketsphinx import Decoder

        _decoders.extend(Decoder(lm=None, loglevel="FATAL", **kw) for kw in SETTINGS)
    return _decoders


def spellings(words: list[str]) -> list[str]:
    """The dictionary spelling of each word (apostrophes at its ends dropped if need be)."""
    out = []
    for word in words:
        found = [w for w in (word, word.strip("'")) if decoders()[0].lookup_word(w)]
        if not found:
            raise Skip(f"'{word}' is not in the PocketSphinx dictionary")
        out.append(found[0])
    return out


def _decode(d, pcm: bytes) -> None:
    d.start_utt()
    d.process_raw(pcm, full_utt=True)
    d.end_utt()


def align_with(d, words: list[str], pcm: bytes):
    """Two passes of decoder `d`: word-level alignment of `words`, then the phone-level one.
    Returns the `pocketsphinx.Alignment` (words holding phones; start, duration in frames).
    The feature extraction is reset first (its state otherwise carries over from the items
    decoded before, which changed some results with the order of the items)."""
    try:
        d.reinit_feat()
        d.set_align_text(" ".join(words))
        _decode(d, pcm)
        if d.hyp() is None:
            raise Skip("alignment failed (no hypothesis)")
        d.set_alignment()
        _decode(d, pcm)
        alignment = d.get_alignment()
    except (RuntimeError, IndexError) as err:
        raise Skip(f"alignment failed ({err})") from None
    got = [ALT_PRON.sub("", w.name) for w in alignment or [] if not is_filler(w.name)]
    if got != words:
        raise Skip(f"alignment failed ({len(got)} of {len(words)} words aligned)")
    return alignment


def align(words: list[str], pcm: bytes) -> tuple[object, int]:
    """The alignment of the first of SETTINGS that aligns all the words, and its index."""
    for index, d in enumerate(decoders()):
        try:
            return align_with(d, words, pcm), index
        except Skip as err:
            failure = err
    raise failure


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
        out["words"].append((*seconds(word, duration), ALT_PRON.sub("", word.name)))
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


def align_item(job: tuple[dict, str, str]) -> tuple[str, str | None, int | None]:
    """Align one manifest item (item, manifest folder, out folder); returns its id, the
    reason it was skipped (or None) and the index of the SETTINGS that aligned it."""
    item, base, out = job
    uid = str(item.get("id", "?"))
    try:
        if "bad" in item:
            raise Skip(item["bad"])
        if not uid.strip(".") or "/" in uid or "\\" in uid:
            raise Skip("the id is not a file name")
        if not isinstance(item.get("audio"), str) or not isinstance(item.get("text"), str):
            raise Skip("the item needs 'id', 'audio' and 'text'")
        words = words_of(item["text"])
        if not words:
            raise Skip("the text has no words")
        pcm, duration = load_pcm(Path(base) / item["audio"])
        alignment, setting = align(spellings(words), pcm)
        write_grid(Path(out) / f"{uid}.TextGrid", tiers(alignment, duration), duration)
    except Skip as err:
        return uid, str(err), None
    except (OSError, ValueError) as err:
        return uid, f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", None
    return uid, None, setting


def read_manifest(path: Path) -> list[dict]:
    """The manifest's items (a line that is not a JSON object with an id becomes a `bad`
    item, skipped later with its line number as id)."""
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        ok = isinstance(item, dict) and "id" in item
        items.append(item if ok else {"id": f"line {n}", "bad": "not a JSON object with an id"})
    return items


def run(items: list[dict], base: Path, out: Path, workers: int) -> dict[str, list]:
    """Align every item (audio relative to `base`) into `out`; returns the skipped items
    (id and reason) and the ids aligned by the fallback SETTINGS."""
    jobs = [(item, str(base), str(out)) for item in items]
    if workers == 1:
        return _collect(map(align_item, jobs))
    from multiprocessing import Pool

    with Pool(workers) as pool:
        return _collect(pool.imap(align_item, jobs))


def _collect(results) -> dict[str, list]:
    out: dict[str, list] = {"skipped": [], "fallback": []}
    for uid, reason, setting in results:
        if reason is not None:
            print(f"skipped {uid}: {reason}", file=sys.stderr, flush=True)
            out["skipped"].append({"id": uid, "reason": reason})
        elif setting:
            out["fallback"].append(uid)
    return out


def peer_python() -> Path | None:
    """The interpreter of the peer's environment ($POCKETSPHINX_PYTHON, else the one `make
    peers` made), when it exists and is not this one."""
    path = Path(os.environ.get("POCKETSPHINX_PYTHON") or PEER_PYTHON)
    if not path.is_file() or path.absolute() == Path(sys.executable).absolute():
        return None
    return path


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
        peer = peer_python()
        if peer is not None and argv is None:
            os.execv(str(peer), [str(peer), __file__, *sys.argv[1:]])
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
    """Align, print the totals, write OUT/summary.json; the exit status (1: some skipped)."""
    items = read_manifest(args.manifest)
    result = run(items, args.manifest.parent, args.out, max(1, args.workers))
    secs = time.perf_counter() - start
    skipped = len(result["skipped"])
    aligned = len(items) - skipped
    print(f"aligned {aligned} of {len(items)} items in {secs:.1f} s ({skipped} skipped)")
    summary = {
        "manifest": str(args.manifest),
        "items": len(items),
        "aligned": aligned,
        "seconds": round(secs, 2),
        "settings": SETTINGS,
        **result,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
