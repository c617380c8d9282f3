"""Validate the audio files of a corpus: each bad file goes to the report, each good one
gets its duration; a clip that is silent, or far too long for its text, is kept with a
warning.

Thresholds: silent = peak below ``SILENT_PEAK`` (-60 dBFS); too long = more than
``MAX_SECONDS_PER_CHAR`` seconds per character of text (read English is about 0.06-0.08
s per character: LJSpeech 0.07, ARCTIC 0.06; 0.25 leaves room for slow or paused
speech, while a clip four times too long usually holds other speech or the wrong file)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from aligner.audio.io import AudioError, load_audio
from aligner.data.prepare.common import PrepareSummary, check_outputs, split_items, write_corpus
from aligner.data.report import BadItemReport

AUDIO_KEYS = ("audio", "target_audio")
SILENT_PEAK = 1e-3
MAX_SECONDS_PER_CHAR = 0.25


def audio_duration(path: str) -> float:
    """Seconds of audio in ``path``; raises ``AudioError`` naming the file and the reason."""
    return audio_stats(path)[0]


def audio_stats(path: str) -> tuple[float, float]:
    """(seconds, peak absolute sample) of ``path``; ``AudioError`` when it cannot be used."""
    wav, sr = load_audio(path)
    return wav.numel() / sr, float(wav.abs().max())


def clip_warnings(item: dict[str, Any], key: str, seconds: float, peak: float) -> list[str]:
    """Why the clip `item[key]` looks wrong for its text (silent, far too long), if it does."""
    where = f"{item[key]} (item {item.get('id')})"
    out = []
    if peak < SILENT_PEAK:
        out.append(f"{where}: silent (peak {peak:.1e}, below -60 dBFS)")
    text = item.get("text")
    if isinstance(text, str) and text.strip():
        per_char = seconds / len(text.strip())
        if per_char > MAX_SECONDS_PER_CHAR:
            out.append(
                f"{where}: {seconds:.1f} s for {len(text.strip())} characters "
                f"({per_char:.2f} s/char > {MAX_SECONDS_PER_CHAR}): wrong clip or text?"
            )
    return out


def check_audio(
    items: Iterable[dict[str, Any]],
    report: BadItemReport,
    progress: Callable[[int], object] | None = None,
    warnings: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Keep the items whose audio files all load; add ``duration`` (and
    ``target_duration``); report every other item with its file and reason; append
    `clip_warnings` to `warnings` when given."""
    good = []
    for item in items:
        try:
            stats = {key: audio_stats(item[key]) for key in AUDIO_KEYS if key in item}
        except AudioError as err:
            report.add(err.path, f"{err.reason} (item {item.get('id')})")
        else:
            durations = {key: seconds for key, (seconds, _) in stats.items()}
            for key, (seconds, peak) in stats.items():
                if warnings is not None:
                    warnings += clip_warnings(item, key, seconds, peak)
            item["duration"] = round(durations["audio"], 4)
            if "target_audio" in durations:
                item["target_duration"] = round(durations["target_audio"], 4)
            good.append(item)
        if progress is not None:
            progress(1)
    return good


def prepare_recordings(
    name: str,
    out_dir: Path,
    read: Callable[[BadItemReport], list[dict[str, Any]]],
    seed: int = 0,
    skip_bad: bool = False,
    force: bool = False,
    progress: Callable[[int], object] | None = None,
    figures: dict[str, Any] | None = None,
) -> PrepareSummary:
    """A corpus of recordings read from disk, as every such preparer does it: refuse
    `out_dir`'s files without `force`, ``read(report)`` the items (bad lines to the
    report), check every recording (`check_audio`), stop on bad items unless `skip_bad`,
    split with `seed` and write; the summary holds the hours and `figures`."""
    out_dir = Path(out_dir)
    check_outputs(out_dir, force)
    report = BadItemReport()
    warnings: list[str] = []
    items = check_audio(read(report), report, progress, warnings)
    report.check(skip_bad)
    summary = PrepareSummary(name, out_dir, bad=report, warnings=warnings)
    summary.figures = {
        **(figures or {}),
        "hours": round(sum(i["duration"] for i in items) / 3600, 4),
    }
    return write_corpus(out_dir, split_items(items, seed=seed), summary)
