"""Voice conversion scored as VC papers score it (`aligner.audio.distortion`): MCD in dB,
F0 RMSE and correlation, V/UV error, duration difference and ratio, per item and in
total, for the source itself (no conversion) and for every system given, against the
target voice; and where the corpus has reference timings of both voices, the error of
the source-to-target time mapping (`mapping_ms`).

    table = score_systems({"seq2seq": Path("exp/vc/converted/manifest.jsonl")})
    table.totals["source"]["mcd"], table.totals["seq2seq"]["duration_ratio"]

Each manifest is the ``manifest.jsonl`` that `aligner convert --in MANIFEST --out DIR`
(or `scripts/vc_baseline.py convert`) writes: items with the converted ``audio``, the
``source_audio`` and the ``target_audio``. Every file is analysed at the target's sample
rate; each target and source once, however many systems share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from aligner.alignment.intervals import Timings
from aligner.audio.distortion import compare
from aligner.audio.world import WorldUnavailable, analyze_file
from aligner.data.manifest import manifest_items
from aligner.evaluation import EvaluationError

KEYS = ("audio", "source_audio", "target_audio")
TOTALS = ("mcd", "f0_rmse_hz", "f0_rmse_cents", "f0_corr", "vuv_error")


@dataclass
class VcTable:
    """Per-item scores and totals of each system (``source`` first)."""

    items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    totals: dict[str, dict[str, float]] = field(default_factory=dict)
    sources: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # manifest items


def identity_mapping_ms(item: dict[str, Any]) -> float | None:
    """Mean absolute distance (ms) between the source's and the target's reference
    boundaries (phones, or words when the voices' phones differ in number): the mapping
    error of a conversion that keeps the source's timing. None without timings."""
    if not (item.get("timings") and item.get("target_timings")):
        return None
    source, target = Timings.from_dict(item["timings"]), Timings.from_dict(item["target_timings"])
    for tier in ("phones", "words"):
        src, tgt = source.tier(tier), target.tier(tier)
        if src and len(src) == len(tgt):
            errors = [a - b for s, t in zip(src, tgt) for a, b in zip(s[:2], t[:2])]
            return 1000.0 * float(np.mean(np.abs(errors)))
    return None


def _totals(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Means over items (NaN-free ones for F0), ``mcd_std``, the mean absolute duration
    difference and the mean duration ratio; ``mapping_ms`` where the items have it; the
    phone error rate ``per`` (%: edits over reference phones, summed over the items
    `set_per` scored)."""

    def mean(key: str) -> float:
        values = np.array([r[key] for r in rows if r.get(key) is not None], dtype=float)
        values = values[np.isfinite(values)]
        return float(values.mean()) if len(values) else float("nan")

    out = {key: mean(key) for key in TOTALS}
    out["mcd_std"] = float(np.std([r["mcd"] for r in rows]))
    out["duration_abs_diff"] = float(np.mean([abs(r["duration_diff"]) for r in rows]))
    out["duration_ratio"] = mean("duration_ratio")
    out["mapping_ms"] = mean("mapping_ms")
    scored = [r for r in rows if r.get("phones")]
    out["per"] = (
        100.0 * sum(r["phone_edits"] for r in scored) / sum(r["phones"] for r in scored)
        if scored
        else float("nan")
    )
    out["items"] = len(rows)
    return out


def _read(manifest: Path, name: str) -> list[dict[str, Any]]:
    items = manifest_items(manifest, name, KEYS, "give the manifest.jsonl of aligner convert")
    if not items:
        raise EvaluationError(f"{manifest} holds no items")
    return items


class _Analyses:
    """WORLD features of each file, made once (targets and sources are shared)."""

    def __init__(self, cfg: Any) -> None:
        self.cfg, self.cache, self.rates = cfg, {}, {}

    def target(self, path: str) -> Any:
        if path not in self.cache:
            self.cache[path], self.rates[path] = analyze_file(path, None, self.cfg)
        return self.cache[path], self.rates[path]

    def other(self, path: str, sr: int) -> Any:
        if (path, sr) not in self.cache:
            self.cache[(path, sr)] = analyze_file(path, sr, self.cfg)[0]
        return self.cache[(path, sr)]


def _score(analyses: _Analyses, item: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """One item's scores of ``item[key]`` against ``item["target_audio"]``."""
    try:
        target, sr = analyses.target(item["target_audio"])
        row = compare(analyses.other(item[key], sr), target)
    except WorldUnavailable as err:
        raise EvaluationError(str(err)) from None
    except ValueError as err:  # AudioError: names the file
        raise EvaluationError(f"{where} item {item['id']}: {str(err).splitlines()[0]}") from None
    mapping = identity_mapping_ms(item) if key == "source_audio" else None
    return {"id": str(item["id"]), **row, "mapping_ms": mapping}


def score_systems(
    manifests: dict[str, Path], cfg: Any = None, limit: int = 0, progress: Any = None
) -> VcTable:
    """Scores of the ``source`` (from the first manifest's ``source_audio``) and of each
    named system's converted ``audio`` against the targets, on the first `limit` items
    (0 = all) of each manifest. The source's ``mapping_ms`` is that of its own timing; a
    system's comes from `set_mapping`.
    `cfg`: `aligner.audio.world.WorldConfig`; `progress(done, total)` is called per item."""
    if not manifests:
        raise EvaluationError("give at least one converted manifest")
    systems = {name: _read(Path(m), str(m))[: limit or None] for name, m in manifests.items()}
    first_name, first = next(iter(systems.items()))
    jobs = [("source", it, "source_audio", str(manifests[first_name])) for it in first]
    jobs += [(n, it, "audio", str(manifests[n])) for n, items in systems.items() for it in items]
    analyses, table = _Analyses(cfg), VcTable(sources={"source": first, **systems})
    for done, (name, item, key, where) in enumerate(jobs, 1):
        table.items.setdefault(name, []).append(_score(analyses, item, key, where))
        if progress is not None:
            progress(done, len(jobs))
    table.totals = {name: _totals(rows) for name, rows in table.items.items()}
    return table


def set_mapping(table: VcTable, name: str, alignment: str | Path) -> None:
    """Fill system `name`'s ``mapping_ms`` per item: from the ``summary.json`` of `aligner
    align` on the same items (its teacher-forced alignment against the reference timings),
    or, given the word ``source``, the source's own (a system that keeps the source's
    timing, such as the frame-wise baseline)."""
    import json

    if name not in table.items:
        raise EvaluationError(f"--alignment {name}=...: no system named {name!r}")
    if str(alignment) == "source":
        by_id = {r["id"]: r["mapping_ms"] for r in table.items["source"]}
    else:
        path = Path(alignment)
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
            by_id = {str(u["id"]): u.get("mapping_ms") for u in summary["items"]}
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise EvaluationError(
                f"--alignment {path}: not the summary.json of aligner align ({err})"
            ) from None
    for row in table.items[name]:
        row["mapping_ms"] = by_id.get(row["id"])
    table.totals[name] = _totals(table.items[name])


def set_per(table: VcTable, name: str, scored: dict[str, tuple[int, int, Any]]) -> None:
    """Fill system `name`'s phone error rate per item (``phone_edits``, ``phones``) from
    `scored`: item id -> (edits, reference phones, hypothesis), the ``scored`` of
    `aligner.inference.recognizer.phone_error_rate` on its audio (the source row: its source
    audio, the items of ``table.sources[name]``). An item not scored is left out of the rate."""
    if name not in table.items:
        raise EvaluationError(f"no system named {name!r}")
    for row in table.items[name]:
        edits, phones, _ = scored.get(row["id"], (None, None, None))
        row["phone_edits"], row["phones"] = edits, phones
    table.totals[name] = _totals(table.items[name])


COLUMNS = (
    ("MCD dB", "mcd", "{:.2f}"),
    ("F0 RMSE Hz", "f0_rmse_hz", "{:.1f}"),
    ("F0 corr", "f0_corr", "{:.3f}"),
    ("V/UV err", "vuv_error", "{:.3f}"),
    ("abs dur diff s", "duration_abs_diff", "{:.3f}"),
    ("dur ratio", "duration_ratio", "{:.3f}"),
    ("mapping ms", "mapping_ms", "{:.1f}"),
    ("PER %", "per", "{:.2f}"),
)


def markdown(table: VcTable) -> str:
    """The totals as a Markdown table, one row per system (``-`` where not measured)."""
    lines = [
        "| system | items | " + " | ".join(c[0] for c in COLUMNS) + " |",
        "| --- " * (len(COLUMNS) + 2) + "|",
    ]
    for name, total in table.totals.items():
        cells = [
            fmt.format(total[key]) if np.isfinite(total[key]) else "-" for _, key, fmt in COLUMNS
        ]
        lines.append(f"| {name} | {total['items']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
