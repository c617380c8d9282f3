"""Word boundaries at pauses against the audio's own onset and offset: where a reference
(and any alignment) puts a word that starts after a pause or ends before one, measured
from where the sound itself starts or stops.

At a pause the audio tells the truth without a convention: the word starts where the
level rises out of the pause and ends where it falls into it. Only boundaries the level
can tell are used: a pause of at least ``--min-pause`` seconds on the reference, and a
word whose first (last) phone is not a stop, affricate or /h/ (a stop's closure is silent,
an /h/ too weak). The onset is the end of the last 2 ms window at or below the threshold
before the reference boundary + 30 ms; the offset the first such window after the
boundary - 30 ms; the threshold is 15 dB above the pause's median level and no more than
50 dB below the recording's loudest (99th percentile) window. An event the search cannot
reach (the level still quiet at the boundary + 30 ms, or already quiet at - 30 ms) is
left out and counted, not measured as 30 ms. Two references of the same
kind of event can then be compared through the audio, and an aligner's lateness told from
a reference's convention.

    python scripts/pause_edges.py --reference data/festival/test.jsonl \
        --predicted exp/fD/ali_test exp/ps_festival [--by-speaker]

Prints, per source (the reference, then each folder of TextGrids or durations JSON) and
speaker: for word starts after a pause and word ends before one, how many, the median
signed time minus the audio's event (ms; negative: before it) and the mean absolute one.
A prediction is used where it has as many words as the reference.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np
import soundfile as sf

from aligner.data.manifest import manifest_items
from aligner.evaluation.alignment import predicted_timings, reference_timings
from aligner.inference.common import InferenceError

WINDOW = 0.002  # seconds per level window
REACH = 0.03  # seconds past the reference boundary the search for the event starts
MIN_WINDOWS = 5  # a recording of fewer windows than twice this is not measured
UNTOLD = {  # first / last phones whose edge the level cannot tell (IPA and ARPAbet)
    *"p t k b d g ɡ c ɟ q ʔ h ɦ".split(),
    *"tʃ dʒ ts dz ch jh hh".split(),
}


def bare(phone: str) -> str:
    """A phone label without its stress: IPA marks before it, ARPAbet digits after it."""
    return phone.lstrip("ˈˌ").rstrip("012")


def levels(path: str) -> tuple[np.ndarray, float]:
    """dB level of every window of about 2 ms of the recording (mixed to mono), and the
    window's length in seconds (a whole number of samples: 44 at 22,050 Hz)."""
    wav, rate = sf.read(path, dtype="float64", always_2d=True)
    wav = wav.mean(1)
    n = max(1, round(rate * WINDOW))
    frames = wav[: len(wav) // n * n].reshape(-1, n)
    return 20 * np.log10(np.sqrt((frames**2).mean(1)) + 1e-9), n / rate


def threshold(level: np.ndarray, pause: slice) -> float:
    """15 dB above the pause's median level, and no more than 50 dB below the loudest."""
    quiet = level[pause]
    floor = float(np.median(quiet)) if quiet.size else float(level.min())
    return max(floor + 15.0, float(np.percentile(level, 99)) - 50.0)


def events(
    level: np.ndarray, step: float, words, phones, min_pause: float
) -> tuple[list[tuple[str, int, float]], list[str]]:
    """``(kind, word index, time of the audio's event)`` for the words that start after
    a pause ("start") or end before one ("end") and whose edge phone the level can tell
    (`level` (W,) dB per window of `step` seconds), and the kinds of the events left out
    because the level stays quiet (or loud) to the end of the search: beyond its reach,
    not measured."""
    starts = {round(p.start, 4): p.label for p in phones}
    ends = {round(p.end, 4): p.label for p in phones}
    last = len(level) * step
    out, beyond = [], []
    for i, w in enumerate(words):
        if w.end <= w.start:
            continue
        before = words[i - 1].end if i else 0.0
        after = words[i + 1].start if i + 1 < len(words) else last
        edge = bare(starts.get(round(w.start, 4), ""))
        if w.start - before >= min_pause and edge and edge not in UNTOLD:
            a, b = int(before / step), int(w.start / step)
            c = min(int((w.start + REACH) / step), len(level))
            quiet = np.flatnonzero(level[a:c] <= threshold(level, slice(a, b)))
            if quiet.size and a + quiet[-1] + 1 < c:
                out.append(("start", i, (a + quiet[-1] + 1) * step))
            elif quiet.size:
                beyond.append("start")
        edge = bare(ends.get(round(w.end, 4), ""))
        if after - w.end >= min_pause and edge and edge not in UNTOLD:
            a, b = int(w.end / step), min(int(after / step), len(level))
            c = max(int((w.end - REACH) / step), 0)
            quiet = np.flatnonzero(level[c:b] <= threshold(level, slice(a, b)))
            if quiet.size and quiet[0] > 0:
                out.append(("end", i, (c + quiet[0]) * step))
            elif quiet.size:
                beyond.append("end")
    return out, beyond


def measure(reference: Path, predicted: list[Path], min_pause: float, by_speaker: bool):
    """``{(source, speaker, kind): [signed ms]}`` over the reference's items, and
    ``{(speaker, kind): events beyond the search's reach}`` (left out)."""
    items = manifest_items(reference, "--reference", keys=("audio", "timings"))
    tiers = reference_timings(reference, items=items)
    for folder in predicted:
        if not folder.is_dir():
            raise InferenceError(f"--predicted {folder} is not a folder of TextGrids or durations")
    out: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    censored: dict[tuple[str, str], int] = defaultdict(int)
    for item in items:
        uid = str(item["id"])
        words, phones = tiers[uid]["words"], tiers[uid]["phones"]
        speaker = str(item.get("speaker", "-")) if by_speaker else "all"
        try:
            level, step = levels(item["audio"])
        except (OSError, RuntimeError, ValueError) as err:  # soundfile's errors included
            print(f"{reference} item {uid}: cannot read {item['audio']} ({err}); left out")
            continue
        if len(level) < 2 * MIN_WINDOWS:
            print(f"{reference} item {uid}: {item['audio']} is too short to measure; left out")
            continue
        found, beyond = events(level, step, words, phones, min_pause)
        for kind in beyond:
            censored[(speaker, kind)] += 1
        sources = {"reference": words}
        for folder in predicted:
            pred = (predicted_timings(folder, uid) or {}).get("words")
            if pred is not None and len(pred) == len(words):
                sources[str(folder)] = pred
        for kind, i, at in found:
            for name, tier in sources.items():
                time = tier[i].start if kind == "start" else tier[i].end
                out[(name, speaker, kind)].append(1000 * (time - at))
    return out, censored


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", type=Path, required=True, help="manifest with timings")
    ap.add_argument("--predicted", type=Path, nargs="*", default=[], help="alignment folders")
    ap.add_argument("--min-pause", type=float, default=0.1, help="seconds (default 0.1)")
    ap.add_argument("--by-speaker", action="store_true", help="one row per speaker")
    args = ap.parse_args(argv)
    if args.min_pause <= 0:
        raise SystemExit(f"pause_edges.py: --min-pause must be above 0 s, got {args.min_pause}")
    try:
        found, censored = measure(args.reference, args.predicted, args.min_pause, args.by_speaker)
    except InferenceError as err:
        raise SystemExit(f"pause_edges.py: {err}") from None
    print(
        f"{'source':<40} {'speaker':<24} {'edge':<6} {'n':>5} {'median ms':>10} {'mean |ms|':>10}"
    )
    for (name, speaker, kind), values in sorted(found.items()):
        v = np.asarray(values)
        print(
            f"{name[-40:]:<40} {speaker[:24]:<24} {kind:<6} {len(v):5d} "
            f"{np.median(v):+10.1f} {np.abs(v).mean():10.1f}"
        )
    for (speaker, kind), n in sorted(censored.items()):
        print(
            f"left out: {n} word {kind}s of {speaker} whose event lies beyond the search "
            f"({1000 * REACH:.0f} ms past the reference's boundary)"
        )


if __name__ == "__main__":
    main()
