"""Phone start errors of an alignment against reference timings, per class of phones
(the classes' phones given by label, stress marks ignored), or with ``--by-position`` per
place of the boundary in the reference (inside a word, a word's start, after a pause, and
the phone ends before a pause or the utterance's end), as `aligner score-alignment` pairs
them (items whose phone counts differ are left out and counted).

    python scripts/boundary_errors_by_class.py --reference data/valid.jsonl \
        --predicted ali/ --class stops=p,t,k,b,d,g
    python scripts/boundary_errors_by_class.py --reference data/valid.jsonl \
        --predicted ali/ --by-position
    python scripts/boundary_errors_by_class.py --reference data/test.jsonl \
        --predicted ali/ --words --speaker kal_diphone

``--words``: the word boundaries instead (each word's start and end, by whether a pause or
the utterance's edge lies beside it), items paired by their word counts. ``--speaker``:
only the reference items of that speaker. Every row also gives the share more than 50 ms
off (gross errors).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from aligner.data.manifest import manifest_items
from aligner.evaluation.alignment import predicted_timings, reference_timings

STRESS = "ˈˌ"


def start_errors(reference: Path, predicted: Path, classes: dict[str, set[str]]):
    """``({class: [signed start errors in ms]}, unpaired items)``; phones in no class go
    to ``other``."""
    out: dict[str, list[float]] = {name: [] for name in [*classes, "other"]}
    unpaired = 0
    for uid, ref in reference_timings(reference).items():
        pred = (predicted_timings(predicted, uid) or {}).get("phones")
        if pred is None or len(pred) != len(ref["phones"]):
            unpaired += 1
            continue
        for r, p in zip(ref["phones"], pred):
            label = r.label.strip(STRESS)
            name = next((c for c, members in classes.items() if label in members), "other")
            out[name].append(1000 * (p.start - r.start))
    return out, unpaired


def position_errors(reference: Path, predicted: Path):
    """``({place: [signed errors in ms]}, unpaired items)`` of every phone start, and of
    the phone ends that no phone starts at (before a pause or the utterance's end)."""
    out: dict[str, list[float]] = {
        n: [] for n in ("inside", "word start", "after pause", "before pause")
    }
    unpaired = 0
    for uid, ref in reference_timings(reference).items():
        pred = (predicted_timings(predicted, uid) or {}).get("phones")
        phones = ref["phones"]
        if pred is None or len(pred) != len(phones):
            unpaired += 1
            continue
        word_starts = {round(w.start, 5) for w in ref["words"]}
        ends = {round(r.end, 5) for r in phones}
        starts = {round(r.start, 5) for r in phones}
        for r, p in zip(phones, pred):
            place = "inside" if round(r.start, 5) not in word_starts else "word start"
            if place == "word start" and round(r.start, 5) not in ends and r.start > 0:
                place = "after pause"
            out[place].append(1000 * (p.start - r.start))
            if round(r.end, 5) not in starts:
                out["before pause"].append(1000 * (p.end - r.end))
    return out, unpaired


WORD_PLACES = ("start after pause", "start, words meet", "end before pause", "end, words meet")


def word_errors(reference: Path, predicted: Path, speaker: str | None = None):
    """``({place: [signed errors in ms]}, unpaired items)`` of every word's start and end,
    by whether a pause (or the utterance's edge) lies before the start or after the end in
    the reference; `speaker`: only the reference items of that speaker."""
    out: dict[str, list[float]] = {n: [] for n in WORD_PLACES}
    unpaired = 0
    for uid, ref in _references(reference, speaker).items():
        pred = (predicted_timings(predicted, uid) or {}).get("words")
        words = ref["words"]
        if pred is None or len(pred) != len(words):
            unpaired += 1
            continue
        for i, (r, p) in enumerate(zip(words, pred)):
            pause_before = i == 0 or words[i - 1].end < r.start - 1e-4
            pause_after = i == len(words) - 1 or words[i + 1].start > r.end + 1e-4
            out[WORD_PLACES[0 if pause_before else 1]].append(1000 * (p.start - r.start))
            out[WORD_PLACES[2 if pause_after else 3]].append(1000 * (p.end - r.end))
    return out, unpaired


def _references(reference: Path, speaker: str | None):
    """The reference tiers by id, of `speaker`'s items only when given (the manifest read
    once)."""
    if speaker is None:
        return reference_timings(reference)
    items = [it for it in manifest_items(reference, "--reference") if it.get("speaker") == speaker]
    if not items:
        raise SystemExit(f"{reference}: no item of speaker {speaker!r}")
    return reference_timings(reference, items=items)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--predicted", type=Path, required=True)
    parser.add_argument(
        "--class",
        dest="classes",
        action="append",
        default=[],
        help="NAME=PHONE,PHONE,... (repeatable)",
    )
    parser.add_argument(
        "--by-position",
        action="store_true",
        help="Group the boundaries by their place in the words, not by class.",
    )
    parser.add_argument(
        "--words", action="store_true", help="Group the word boundaries by the pauses beside them."
    )
    parser.add_argument("--speaker", help="Only the reference items of this speaker (--words).")
    args = parser.parse_args(argv)
    classes = {c.split("=")[0]: set(c.split("=")[1].split(",")) for c in args.classes}
    if args.words:
        errors, unpaired = word_errors(args.reference, args.predicted, args.speaker)
    elif args.by_position:
        errors, unpaired = position_errors(args.reference, args.predicted)
    else:
        errors, unpaired = start_errors(args.reference, args.predicted, classes)
    head = f"{'group':<18} {'n':>6} {'mean':>6} {'bias':>6} {'<=20ms':>7} {'>50ms':>6}"
    print(f"{head}  ({unpaired} unpaired)")
    for name, values in errors.items():
        v = np.array(values)
        if len(v):
            within, gross = 100 * (np.abs(v) <= 20).mean(), 100 * (np.abs(v) > 50).mean()
            print(
                f"{name:<18} {len(v):6d} {np.abs(v).mean():6.1f} {v.mean():6.1f} "
                f"{within:6.1f}% {gross:5.1f}%"
            )


if __name__ == "__main__":
    main()
