"""On-disk feature cache: each utterance's log-mel is computed once per feature setting.

Layout: ``cache_dir/<MelConfig.key()>/<hash of the audio path>.npy`` plus a
``config.json`` with the settings. The file name also hashes the audio file's size
and modification time, so an edited file is recomputed, and a change of any mel
setting selects another folder. Writes go to a unique temporary file followed by
``os.replace``, so concurrent DataLoader workers never read a partial file (two
workers computing the same item both write identical data; the last rename wins).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from pathlib import Path

import numpy as np
import torch

from aligner.audio.features import MelConfig, log_mel
from aligner.audio.io import AudioError, load_audio
from aligner.audio.trim import trim_silence


class FeatureCache:
    """Log-mels ``(T, n_mels)`` of audio files, computed on first use and stored.

    Args:
        cache_dir: root folder (created when missing).
        cfg: the mel settings; their ``key()`` names the sub-folder.
        trim_db: trim leading/trailing silence (``top_db``) before the features;
            ``None`` keeps the audio as is. Part of the cache key.
    """

    def __init__(self, cache_dir: str | os.PathLike, cfg: MelConfig, trim_db: float | None = None):
        self.cfg = cfg
        self.trim_db = trim_db
        key = cfg.key() if trim_db is None else f"{cfg.key()}-trim{trim_db:g}"
        self.dir = Path(cache_dir) / key
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write_config()

    def _write_config(self) -> None:
        path = self.dir / "config.json"
        if not path.exists():
            data = {"mel": self.cfg.to_dict(), "trim_db": self.trim_db}
            _atomic_write(path, json.dumps(data, indent=2).encode())

    def path_for(self, audio: str | os.PathLike) -> Path:
        """Cache file of ``audio`` (depends on its absolute path, size and mtime)."""
        audio = Path(audio).resolve()
        st = audio.stat()
        blob = f"{audio}\0{st.st_size}\0{st.st_mtime_ns}".encode()
        return self.dir / f"{hashlib.sha1(blob).hexdigest()[:20]}.npy"

    def compute(self, audio: str | os.PathLike) -> torch.Tensor:
        """Log-mel of ``audio`` without the cache (raises AudioError for bad files)."""
        wav, _ = load_audio(audio, self.cfg.sample_rate, min_samples=self.cfg.win_length)
        if self.trim_db is not None:
            wav = trim_silence(wav, self.cfg.sample_rate, top_db=self.trim_db)
            if wav.numel() < self.cfg.win_length:
                raise AudioError(
                    audio,
                    f"silent: under one frame left after trimming at "
                    f"{self.trim_db:g} dB; remove it from the manifest",
                )
        return log_mel(wav, self.cfg)

    def get(self, audio: str | os.PathLike) -> torch.Tensor:
        """Cached log-mel ``(T, n_mels)`` float32 of ``audio``; computed and stored on a miss."""
        path = self.path_for(audio)
        try:
            mel = np.load(path, allow_pickle=False)
            if mel.ndim == 2 and mel.shape[1] == self.cfg.n_mels:
                return torch.from_numpy(mel)
        except (FileNotFoundError, ValueError, OSError, EOFError):
            pass  # miss or unreadable (e.g. a disk-full leftover): recompute below
        mel = self.compute(audio).numpy().astype(np.float32)
        buf = _npy_bytes(mel)
        _atomic_write(path, buf)
        return torch.from_numpy(mel)


def _npy_bytes(arr: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, arr, allow_pickle=False)
    return out.getvalue()


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to a unique temporary file beside ``path``, then rename over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
