"""``aligner score-alignment``: word and phone boundaries of any alignment against reference
timings, in milliseconds.

The reference is a manifest whose items carry ``timings`` (the built-in eSpeak NG corpus:
`aligner.data.prepare.espeak`) or a folder of TextGrids. The prediction is a folder of
TextGrids from any tool (tiers found by name, ``words`` and ``phones``, in any order and
case, also ``word``/``phone`` and the Montreal Forced Aligner's ``speaker - words``; other
tiers ignored; `aligner.alignment.textgrid.tier_key`) or of ``ID.durations.json`` from
`aligner align`; files are matched to reference items by name (``ID.TextGrid``, in the
folder or a subfolder of it, such as MFA's folder per speaker). The pairing of boundaries
is `aligner.alignment.scoring`'s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aligner.alignment.intervals import TIERS, Tiers, Timings
from aligner.alignment.reading import predicted_tiers
from aligner.alignment.record import RECORD_SUFFIX
from aligner.alignment.scoring import TierScore
from aligner.alignment.textgrid import read_textgrid, textgrid_files
from aligner.data.manifest import BadLine, manifest_items
from aligner.evaluation import EvaluationError
from aligner.files import write_atomic


def reference_timings(
    reference: Path, key: str = "timings", items: list[dict[str, Any]] | None = None
) -> dict[str, Tiers]:
    """Item id -> tiers of a manifest's ``key`` timings (`items`: the manifest's items when
    already read), or of a folder's TextGrids."""
    if reference.is_dir():
        grids = _grid_files(reference, "--reference")
        if not grids:
            raise EvaluationError(f"--reference {reference} holds no .TextGrid files")
        return {uid: _read_grid(p) for uid, p in grids.items()}
    if items is None:
        items = manifest_items(reference, "--reference")
    found = {str(it["id"]): it[key] for it in items if it.get(key)}
    if not found:
        raise EvaluationError(
            f"{reference} has no item with '{key}': give a manifest of `aligner prepare "
            "espeak` or `prepare festival` (or a folder of reference TextGrids)"
        )
    out = {}
    for uid, data in found.items():
        try:
            t = Timings.from_dict(data)
        except ValueError as err:
            raise EvaluationError(f"{reference} item {uid}: {err}") from None
        out[uid] = {"words": t.words, "phones": t.phones}
    return out


def _read_grid(path: Path) -> Tiers:
    try:
        return read_textgrid(path)
    except ValueError as err:
        raise EvaluationError(str(err)) from None


def _grid_files(folder: Path, option: str) -> dict[str, Path]:
    try:
        return textgrid_files(folder)
    except ValueError as err:
        raise EvaluationError(f"{option} {folder}: {err}") from None


def predicted_timings(folder: Path, uid: str, grids: dict[str, Path] | None = None) -> Tiers | None:
    """The tiers predicted for `uid` in `folder` (its TextGrid, else its durations JSON;
    `grids`: the folder's TextGrids, `aligner.alignment.textgrid.textgrid_files`)."""
    try:
        return predicted_tiers(folder, uid, grids)
    except ValueError as err:
        raise EvaluationError(str(err)) from None


def score_alignments(
    reference: Path,
    predicted: Path,
    key: str = "timings",
    by_speaker: bool = False,
    out: Path | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Per tier (``words``, ``phones``): mean, median and signed mean (bias) of the absolute
    boundary errors in ms, % within 10, 20 and 50 ms, the worst items and the unmatched
    ones (see the module docstring); `by_speaker`: the same per speaker of the reference
    manifest under ``speakers``. `out`: the report is also written there as JSON
    (atomically; an existing file only with `force`)."""
    if out is not None and out.exists() and not force:
        raise EvaluationError(f"{out} exists; pass --force to overwrite it")
    if not predicted.is_dir():
        raise EvaluationError(f"--predicted {predicted} is not a folder of TextGrids or durations")
    lines: list[BadLine] = []  # the reference's lines that are no item: named, the rest scored
    items = None if reference.is_dir() else manifest_items(reference, "--reference", bad=lines)
    if by_speaker and items is None:
        raise EvaluationError(
            f"--by-speaker needs a manifest as --reference (its items' speaker), not the "
            f"folder {reference}"
        )
    refs = reference_timings(reference, key, items)
    grids = _grid_files(predicted, "--predicted")
    if not grids and not any(predicted.glob(f"*{RECORD_SUFFIX}")):
        raise EvaluationError(
            f"--predicted {predicted} holds no .TextGrid or {RECORD_SUFFIX} files: give the "
            "folder an aligner wrote (aligner align --out, or another tool's TextGrids)"
        )
    speakers = {
        str(it["id"]): str(it["speaker"]) for it in items or [] if it.get("speaker") is not None
    }
    groups: dict[str, dict[str, TierScore]] = {}
    scores = {name: TierScore() for name in TIERS}
    for uid, ref_tiers in refs.items():
        try:
            pred, missing = predicted_timings(predicted, uid, grids), "no prediction"
        except EvaluationError as err:  # an unreadable file: this item unmatched, not all
            pred, missing = None, str(err)
        group = groups.setdefault(speakers.get(uid, "?"), {n: TierScore() for n in TIERS})
        for name, score in scores.items():
            for target in (score, group[name]) if by_speaker else (score,):
                target.add(uid, ref_tiers.get(name), pred, name, missing)
    result: dict[str, Any] = {
        "reference": str(reference),
        "predicted": str(predicted),
        "items": len(refs),
    }
    if lines:
        result["bad_reference_lines"] = [f"{line.where}: {line.reason}" for line in lines]
    result.update({name: score.summary() for name, score in scores.items()})
    if by_speaker:
        result["speakers"] = {
            spk: {name: sc.summary(worst=0) for name, sc in tiers.items()}
            for spk, tiers in sorted(groups.items())
        }
    if out is not None:
        text = json.dumps(result, indent=1) + "\n"
        write_atomic(out, lambda fh: fh.write(text), "w", encoding="utf-8")
    return result


def table(result: dict[str, Any]) -> str:
    """A plain-text report of `score_alignments`: a line per tier, then unmatched items."""
    lines = [f"{result['items']} reference items"]
    head = f"{'tier':<7}{'items':>6}{'bounds':>8}{'mean':>8}{'median':>8}{'bias':>8}"
    lines.append(head + f"{'<=10ms':>8}{'<=20ms':>8}{'<=50ms':>8}")
    for name in TIERS:
        lines.append(_row(name, result[name]))
    for speaker, tiers in result.get("speakers", {}).items():
        lines.append(f"speaker {speaker}")
        lines += [_row(name, tiers[name]) for name in TIERS]
    lines += [f"skipped reference line {bad}" for bad in result.get("bad_reference_lines", [])]
    for name in TIERS:
        relabelled = result[name].get("relabelled", [])
        if relabelled:
            first = relabelled[0]
            lines.append(
                f"note: {len(relabelled)} item(s) scored with {name} that differ from the "
                f"reference's (first: {first['id']}: {first['first']}): are the predictions of "
                "these texts?"
            )
        for bad in result[name]["unmatched"][:10]:
            lines.append(f"unmatched {name}: {bad['id']}: {bad['reason']}")
        more = len(result[name]["unmatched"]) - 10
        if more > 0:
            lines.append(f"unmatched {name}: ... and {more} more (--out FILE.json lists all)")
    return "\n".join(lines)


def _row(name: str, s: dict[str, Any]) -> str:
    if "mean_ms" not in s:
        return f"{name:<7}{s['items']:>6}{s['boundaries']:>8}  (nothing matched)"
    return (
        f"{name:<7}{s['items']:>6}{s['boundaries']:>8}{s['mean_ms']:>8.1f}"
        f"{s['median_ms']:>8.1f}{s['bias_ms']:>8.1f}{s['within_10ms']:>7.1f}%"
        f"{s['within_20ms']:>7.1f}%{s['within_50ms']:>7.1f}%"
    )
