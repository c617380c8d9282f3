"""scripts/pocketsphinx_align.py, the PocketSphinx peer aligner, run as a subprocess by the
interpreter of its own environment ($POCKETSPHINX_PYTHON, default `.peers/pocketsphinx`, which
`make peers` creates) on speech synthesized by Festival's text2wave or eSpeak NG; skipped when
either is missing (CI runs `make peers` first)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "pocketsphinx_align.py"
PYTHON = os.environ.get("POCKETSPHINX_PYTHON") or str(ROOT / ".peers/pocketsphinx/bin/python")
SENTENCES = {
    "fox": "The quick brown fox jumps over the lazy dog.",
    "shells": "She sells sea shells by the sea shore, every day.",
}


def _has_pocketsphinx() -> bool:
    if not Path(PYTHON).is_file():
        return False
    found = subprocess.run([PYTHON, "-c", "import pocketsphinx"], capture_output=True)
    return found.returncode == 0


if not _has_pocketsphinx():
    pytest.skip(f"{PYTHON} cannot import pocketsphinx (run `make peers`)", allow_module_level=True)


def synthesize(text: str, path: Path, rate: int) -> None:
    """Speech of `text` written to `path` (Festival at `rate` Hz, else eSpeak NG's own rate)."""
    if shutil.which("text2wave"):
        cmd = ["text2wave", "-F", str(rate), "-o", str(path)]
        subprocess.run(cmd, input=text.encode(), check=True, capture_output=True)
    elif shutil.which("espeak-ng"):
        subprocess.run(["espeak-ng", "-w", str(path), text], check=True, capture_output=True)
    else:
        pytest.skip("no speech synthesizer (text2wave or espeak-ng) on PATH")


def resample(src: Path, dst: Path, rate: int) -> None:
    import soundfile as sf
    from scipy.signal import resample_poly

    audio, old = sf.read(str(src), dtype="float32")
    g = np.gcd(rate, old)
    sf.write(str(dst), resample_poly(audio, rate // g, old // g), rate, subtype="PCM_16")


def write_manifest(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    return path


def align(manifest: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [PYTHON, str(SCRIPT), "--in", str(manifest), "--out", str(out), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def tiers(path: Path) -> dict[str, list[tuple[float, float, str]]]:
    """Every interval (empty ones too) of each tier of a TextGrid, by tier name."""
    from praatio import textgrid

    grid = textgrid.openTextgrid(str(path), includeEmptyIntervals=True)
    return {name: [tuple(e) for e in grid.getTier(name).entries] for name in grid.tierNames}


def words(tier: list[tuple[float, float, str]]) -> list[tuple[float, float, str]]:
    return [iv for iv in tier if iv[2]]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """fox.wav at 22,050 Hz, shells.wav at 16 kHz and shells48.wav, its 48 kHz copy."""
    folder = tmp_path_factory.mktemp("ps_corpus")
    synthesize(SENTENCES["fox"], folder / "fox.wav", 22050)
    synthesize(SENTENCES["shells"], folder / "shells.wav", 16000)
    resample(folder / "shells.wav", folder / "shells48.wav", 48000)
    return folder


@pytest.fixture(scope="module")
def run(corpus: Path):
    """The first run: the two good items and one whose audio file is missing."""
    items = [
        {"id": uid, "audio": f"{uid}.wav", "text": text, "speaker": "s"}
        for uid, text in SENTENCES.items()
    ]
    items.append({"id": "gone", "audio": "gone.wav", "text": "hello", "speaker": "s"})
    manifest = write_manifest(corpus / "test.jsonl", items)
    out = corpus / "ali"
    return manifest, out, align(manifest, out)


def test_a_missing_audio_file_is_skipped_and_the_rest_aligned(run):
    _, out, done = run
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "skipped gone: no audio file " + str(out.parent / "gone.wav")
    ]
    assert done.stdout.startswith("aligned 2 of 3 items in ") and "(1 skipped)" in done.stdout
    assert "Traceback" not in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["items"], summary["aligned"]) == (3, 2)
    assert [s["id"] for s in summary["skipped"]] == ["gone"]
    assert sorted(p.name for p in out.glob("*.TextGrid")) == ["fox.TextGrid", "shells.TextGrid"]


@pytest.mark.parametrize("uid", list(SENTENCES))
def test_the_textgrid_has_the_words_in_order_within_the_audio(run, corpus, uid):
    import soundfile as sf

    grid = tiers(run[1] / f"{uid}.TextGrid")
    assert list(grid) == ["words", "phones"]
    duration = sf.info(str(corpus / f"{uid}.wav")).duration
    expected = SENTENCES[uid].lower().replace(",", "").rstrip(".").split()
    labelled = words(grid["words"])
    assert [w[2] for w in labelled] == expected
    for tier in grid.values():  # each tier covers 0..duration, its intervals in order
        assert tier[0][0] == 0 and abs(tier[-1][1] - duration) < 1e-6
        assert all(a[1] <= b[0] + 1e-9 and a[0] < a[1] for a, b in zip(tier, tier[1:]))
    phones = words(grid["phones"])
    assert len(phones) >= len(expected)
    assert not {p[2] for p in phones} & {"sil", "+nsn+", "+spn+"}


def test_a_48khz_copy_gives_the_same_word_boundaries(run, corpus):
    manifest = write_manifest(
        corpus / "hi.jsonl",
        [{"id": "shells", "audio": "shells48.wav", "text": SENTENCES["shells"], "speaker": "s"}],
    )
    done = align(manifest, corpus / "ali48")
    assert done.returncode == 0, done.stderr
    low = words(tiers(run[1] / "shells.TextGrid")["words"])
    high = words(tiers(corpus / "ali48" / "shells.TextGrid")["words"])
    assert [w[2] for w in high] == [w[2] for w in low]
    assert np.abs(np.array([w[:2] for w in high]) - np.array([w[:2] for w in low])).max() <= 0.02


def test_rerunning_into_a_folder_of_textgrids_needs_force(run):
    manifest, out, _ = run
    done = align(manifest, out)
    assert done.returncode == 2
    assert len(done.stderr.splitlines()) == 1 and "--force" in done.stderr
    assert align(manifest, out, "--force").returncode == 1  # overwritten; "gone" still skipped


def test_a_word_missing_from_the_dictionary_is_skipped(corpus):
    manifest = write_manifest(
        corpus / "oov.jsonl",
        [{"id": "oov", "audio": "fox.wav", "text": "The quick brown zzxqvw.", "speaker": "s"}],
    )
    done = align(manifest, corpus / "ali_oov")
    assert done.returncode == 1
    assert done.stderr.strip() == "skipped oov: 'zzxqvw' is not in the PocketSphinx dictionary"


def test_run_from_the_projects_python_it_restarts_under_the_peers(corpus):
    """The project's interpreter has no pocketsphinx: the script runs itself again under the
    peer's ($POCKETSPHINX_PYTHON, or the environment `make peers` made) and aligns."""
    import sys

    manifest = write_manifest(
        corpus / "one.jsonl",
        [{"id": "fox", "audio": "fox.wav", "text": SENTENCES["fox"], "speaker": "s"}],
    )
    cmd = [sys.executable, str(SCRIPT), "--in", str(manifest), "--out", str(corpus / "ali_re")]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "POCKETSPHINX_PYTHON": PYTHON}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (corpus / "ali_re" / "fox.TextGrid").is_file()
