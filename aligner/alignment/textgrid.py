"""Praat TextGrids (praatio), the one writer and the one reader of the toolkit: reference
timings (`aligner prepare`), `aligner align`'s output, and any other tool's files scored
by `aligner score-alignment`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from aligner.alignment.intervals import SILENCE_LABELS, Interval, Tiers
from aligner.files import save_by_name


def write_textgrid(
    tiers: Mapping[str, Sequence[Interval]], duration: float, path: str | Path
) -> None:
    """A TextGrid of ``duration`` seconds with one interval tier per entry of `tiers`, in
    their order; zero-length intervals are left out and the gaps between intervals
    (pauses) are empty intervals. Written atomically (a full disk is one line)."""
    from praatio import textgrid

    grid = textgrid.Textgrid(0.0, duration)
    for name, intervals in tiers.items():
        entries = [(a[0], a[1], a[2]) for a in intervals if a[1] > a[0]]
        grid.addTier(textgrid.IntervalTier(name, entries, 0.0, duration))
    save_by_name(
        path,
        lambda tmp: grid.save(
            str(tmp), format="long_textgrid", includeBlankSpaces=True, reportingMode="error"
        ),
    )


TIER_NAMES = {
    "word": "words",
    "words": "words",
    "phone": "phones",
    "phones": "phones",
    "phoneme": "phones",
    "phonemes": "phones",
    "segment": "phones",
    "segments": "phones",
    "ort": "words",  # WebMAUS (BAS): orthographic words and MAUS's segments
    "ort-mau": "words",
    "mau": "phones",
}


def tier_key(name: str) -> str:
    """The toolkit's name of another tool's tier: lower-cased, the speaker of a
    multi-speaker file dropped (the Montreal Forced Aligner's ``spk1 - words``), and the
    usual spellings (``Word``, ``phone``, ``phonemes``, ``segments``; WebMAUS's ``ORT-MAU``
    and ``MAU``) made ``words`` or ``phones``; any other name is kept, lower-cased."""
    key = name.strip().lower().rsplit(" - ", 1)[-1].strip()
    return TIER_NAMES.get(key, key)


def textgrid_files(folder: str | Path) -> dict[str, Path]:
    """Item id -> TextGrid file of every ``*.TextGrid`` (any case of the suffix) in `folder`,
    by file name without the suffix; where `folder` holds none, those of its subfolders
    (the Montreal Forced Aligner writes a folder per speaker). ValueError naming both files
    when two subfolders hold the same name."""

    def grids(paths):
        return [p for p in sorted(paths) if p.suffix.lower() == ".textgrid" and p.is_file()]

    top = grids(Path(folder).iterdir()) if Path(folder).is_dir() else []
    if top:
        return {path.stem: path for path in top}
    found: dict[str, Path] = {}
    for path in grids(Path(folder).rglob("*")):
        if path.stem in found:
            raise ValueError(
                f"{found[path.stem]} and {path} are both item {path.stem!r}: keep one of them"
            )
        found[path.stem] = path
    return found


def read_textgrid(path: str | Path) -> Tiers:
    """The labelled (non-silent) intervals of every interval tier of a TextGrid written by
    any tool, by `tier_key` (the tiers of several speakers that share a name, as MFA writes
    a conversation, merged in time order); ValueError naming the file when it cannot be
    read."""
    from praatio import textgrid

    try:
        grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=False)
    except Exception as err:  # praatio raises many types for a foreign or broken file
        first = " ".join(str(err).split())[:160] if str(err) else type(err).__name__
        raise ValueError(f"{path} is not a readable TextGrid ({first})") from None
    tiers: Tiers = {}
    for name in grid.tierNames:
        tier = grid.getTier(name)
        if not isinstance(tier, textgrid.IntervalTier):
            continue
        key = tier_key(name)
        intervals = [
            Interval(float(s), float(e), str(label).strip())
            for s, e, label in tier.entries
            if str(label).strip().lower() not in SILENCE_LABELS
        ]
        tiers[key] = sorted(tiers.get(key, []) + intervals, key=lambda i: (i.start, i.end))
    return tiers
