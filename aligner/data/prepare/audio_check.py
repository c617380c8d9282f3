"""Validate the audio files of a corpus: each bad file goes to the report, each good one
gets its duration."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from aligner.data.report import BadItemReport

AUDIO_KEYS = ("audio", "target_audio")


def audio_duration(path: str) -> float:
    """Seconds of audio in ``path``; raises ``AudioError`` naming the file and the reason."""
    from aligner.audio.io import load_audio

    wav, sr = load_audio(path)
    return wav.numel() / sr


def check_audio(
    items: Iterable[dict[str, Any]],
    report: BadItemReport,
    progress: Callable[[int], object] | None = None,
) -> list[dict[str, Any]]:
    """Keep the items whose audio files all load; add ``duration`` (and
    ``target_duration``); report every other item with its file and reason."""
    from aligner.audio.io import AudioError

    good = []
    for item in items:
        try:
            durations = {key: audio_duration(item[key]) for key in AUDIO_KEYS if key in item}
        except AudioError as err:
            report.add(err.path, err.reason)
        else:
            item["duration"] = round(durations["audio"], 4)
            if "target_audio" in durations:
                item["target_duration"] = round(durations["target_audio"], 4)
            good.append(item)
        if progress is not None:
            progress(1)
    return good
