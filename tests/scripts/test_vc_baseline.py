"""scripts/vc_baseline.py and scripts/vc_baseline_model.py: the frame-wise baseline converts
a fixture pair; scripts/eval_vc.py scores converted audio against the target (MCD, F0,
duration) and the mapping against reference timings; bad input is one line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner

from tests.tasks.speech_corpus import MEL, make_corpus

pytest.importorskip("pyworld")
pytest.importorskip("pysptk")

ROOT = Path(__file__).parents[2]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(corpus, converted manifest) of a baseline trained two epochs on the fixture."""
    from vc_baseline_model import BaselineConfig, convert_baseline, train_baseline

    root = make_corpus(tmp_path_factory.mktemp("vc_eval"), parallel=True)
    cfg = BaselineConfig(epochs=2, hidden=16, context=2)
    summary = train_baseline(root, root / "base.pt", mel=MEL, cfg=cfg, log=lambda _: None)
    assert summary["epochs"] == 2 and summary["pairs"] > 0
    return root, convert_baseline(root / "base.pt", root / "valid.jsonl", root / "conv")


def test_baseline_converts_a_fixture_pair_keeping_the_source_timing(baseline):
    from aligner.data.manifest import read_manifest

    _, manifest = baseline
    items = read_manifest(manifest)
    assert [it["id"] for it in items] == ["u4", "u5"]
    for it in items:
        out, src = sf.info(it["audio"]), sf.info(it["source_audio"])
        assert out.samplerate == MEL["sample_rate"]
        assert abs(out.frames - src.frames) <= MEL["hop_length"]  # the source's length
        assert np.abs(sf.read(it["audio"])[0]).max() > 0
        assert it["target_audio"].endswith(f"t{it['id'][1:]}.wav")


def test_vocoded_targets_keep_the_target_timing(baseline, tmp_path):
    """The vocoder's floor: each target through the baseline's log-mel and Griffin-Lim."""
    from vc_baseline_model import vocode_targets

    from aligner.data.manifest import read_manifest
    from aligner.inference.common import InferenceError

    root, _ = baseline
    items = read_manifest(vocode_targets(root / "base.pt", root / "valid.jsonl", tmp_path / "v"))
    assert [it["id"] for it in items] == ["u4", "u5"]
    for it in items:
        out, tgt = sf.info(it["audio"]), sf.info(it["target_audio"])
        assert abs(out.frames - tgt.frames) <= MEL["hop_length"]  # the target's length
        assert np.abs(sf.read(it["audio"])[0]).max() > 0
    with pytest.raises(InferenceError, match="exists; pass --force"):
        vocode_targets(root / "base.pt", root / "valid.jsonl", tmp_path / "v")


def test_baseline_refuses_to_overwrite_and_names_a_bad_model(baseline, tmp_path):
    from vc_baseline_model import convert_baseline, train_baseline

    from aligner.inference.common import InferenceError

    root, _ = baseline
    with pytest.raises(InferenceError, match="exists; pass --force"):
        train_baseline(root, root / "base.pt", mel=MEL)
    (tmp_path / "junk.pt").write_bytes(b"not a model")
    with pytest.raises(InferenceError, match="junk.pt is not a frame-wise baseline model"):
        convert_baseline(tmp_path / "junk.pt", root / "valid.jsonl", tmp_path / "out")
    result = CliRunner().invoke(
        _script("vc_baseline").main,
        ["train", "--data", str(tmp_path), "--out", str(tmp_path / "m")],
    )
    assert result.exit_code == 1 and "train.jsonl does not exist" in result.output


def test_eval_vc_table_with_source_and_mapping(baseline, tmp_path):
    _, manifest = baseline
    timings = {"duration": 1.0, "words": [[0.0, 0.3, "a"], [0.3, 0.5, "b"]], "phones": []}
    target = {**timings, "words": [[0.0, 0.2, "a"], [0.2, 0.4, "b"]]}
    from aligner.data.manifest import read_manifest, write_manifest

    items = read_manifest(manifest)  # paths resolved
    items[0].update(timings=timings, target_timings=target)  # one item with timings
    timed = write_manifest(tmp_path / "manifest.jsonl", items)
    out = tmp_path / "table.json"
    args = ["--system", f"baseline={timed}", "--alignment", "baseline=source", "--json", str(out)]
    result = CliRunner().invoke(_script("eval_vc").main, [*args, "--verbose"])
    assert result.exit_code == 0, result.output
    assert "| source | 2 |" in result.output and "| baseline | 2 |" in result.output
    data = json.loads(out.read_text())
    # the source keeps its own timing: boundaries 0, .3 | .3, .5 against 0, .2 | .2, .4
    assert data["totals"]["source"]["mapping_ms"] == pytest.approx(75.0)
    assert data["totals"]["baseline"]["mapping_ms"] == pytest.approx(75.0)
    assert data["totals"]["baseline"]["items"] == 2 and data["totals"]["source"]["mcd"] > 0
    bad = CliRunner().invoke(_script("eval_vc").main, ["--system", str(timed)])
    assert bad.exit_code == 1 and "write NAME=PATH" in bad.output
    items[1]["target_audio"] = str(tmp_path / "gone.wav")  # a target that is not there
    gone = write_manifest(tmp_path / "gone.jsonl", items)
    missing = CliRunner().invoke(_script("eval_vc").main, ["--system", f"b={gone}"])
    assert missing.exit_code == 1 and "gone.wav" in missing.output
    assert missing.exception is None or isinstance(missing.exception, SystemExit)
