"""The truth curve's references: timings by id and the pauses of each item's audio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from aligner.audio.features import MelConfig
from aligner.tasks.truth import References

SR, HOP = 22050, 256


def _item(tmp: Path, uid: str, wav: np.ndarray | None) -> dict:
    path = tmp / f"{uid}.wav"
    if wav is not None:
        sf.write(path, wav, SR)
    timings = {"duration": 1.0, "words": [[0.0, 1.0, "a"]], "phones": [[0.0, 1.0, "a"]]}
    return {"id": uid, "audio": str(path), "text": "a", "timings": timings}


def test_pauses_are_read_once_per_item_and_only_when_the_frames_agree(tmp_path: Path) -> None:
    sound = 0.5 * np.sin(2 * np.pi * 220 * np.arange(SR // 4) / SR)
    wav = np.concatenate([sound, np.zeros(SR // 4), sound]).astype(np.float32)
    items = [_item(tmp_path, "u1", wav), _item(tmp_path, "gone", None), {"id": "plain"}]
    cfg = MelConfig(sample_rate=SR, hop_length=HOP)
    refs = References(items, cfg)
    assert "u1" in refs and "gone" in refs and "plain" not in refs
    n = cfg.num_frames(wav.size)
    pauses = refs.pauses("u1", n)
    assert pauses.shape == (n,) and 15 <= pauses.sum() <= 22  # 250 ms of silence
    (tmp_path / "u1.wav").unlink()
    assert refs.pauses("u1", n) is pauses  # computed once
    assert refs.pauses("u1", n - 3) is None  # features of other audio (trimmed): no pauses
    assert refs.pauses("gone", 10) is None  # unreadable audio: the plain rule
    assert refs.get("u1").tier("words")[0].label == "a"
