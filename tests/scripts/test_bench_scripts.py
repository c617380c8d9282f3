"""The benchmark and analysis scripts run on tiny inputs: bench_train_step, alignment_curve,
boundary_errors_by_class, bench_tacotron (with its fast and static paths)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_train_step_times_a_recipe(capsys):
    recipe = ROOT / "recipes/tts/tacotron_dca_small.yaml"
    load("bench_train_step").main(
        [str(recipe), "--batch", "2", "--tokens", "6", "--frames", "16", "--repeats", "2"]
    )
    line = capsys.readouterr().out.strip()
    assert line.startswith("tacotron_dca_small.yaml: batch 2, 6 tokens, 16 frames")
    assert float(line.split("median ")[1].split(" s")[0]) > 0


def test_bench_train_step_refuses_a_non_tts_recipe():
    with pytest.raises(SystemExit, match="a tts recipe is needed"):
        load("bench_train_step").main([str(ROOT / "recipes/g2p/bigru_bahdanau_small.yaml")])


def test_alignment_curve_prints_the_truth_columns_when_logged(tmp_path, capsys):
    from aligner.train.tensorboard import Logger

    logger = Logger(tmp_path / "exp" / "tb")
    for step, (focus, words) in enumerate([(0.2, 80.0), (0.5, 31.5)], 1):
        logger.scalars(
            {
                "focus_rate": focus,
                "items_with_skips": 0.0,
                "items_with_repeats": 0.0,
                "word_boundary_ms": words,
            },
            100 * step,
            prefix="valid",
        )
    logger.close()
    curve = load("alignment_curve")
    rows = curve.read_curve(tmp_path / "exp")
    assert [r["word_boundary_ms"] for r in rows] == [80.0, 31.5]
    curve.print_curve(tmp_path / "exp", rows)
    out = capsys.readouterr().out.splitlines()
    assert "word_boundary_ms" in out[1] and "phone_boundary_ms" not in out[1]
    assert out[3].split()[:2] == ["*", "200"] and float(out[3].split()[-1]) == 31.5


def test_alignment_curve_says_from_when_free_running_stays_clean(tmp_path, capsys):
    from aligner.train.tensorboard import Logger

    logger = Logger(tmp_path / "exp" / "tb")
    # clean at 200, not at 300 (a repeat), clean again from 400 on; at 100 every sentence
    # stopped without a skip or repeat, but the attention is a blur (focus 0.2)
    for step, (stopped, repeats, focus) in enumerate(
        [(1.0, 0.0, 0.2), (1.0, 0.0, 0.6), (1.0, 0.5, 0.6), (1.0, 0.0, 0.6), (1.0, 0.0, 0.7)], 1
    ):
        logger.scalars({"focus_rate": 0.5}, 100 * step, prefix="valid")
        free = {"stopped": stopped, "items_with_skips": 0.0, "items_with_repeats": repeats}
        free["focus_rate"] = focus
        logger.scalars(free, 100 * step, prefix="infer")
    logger.close()
    curve = load("alignment_curve")
    rows = curve.read_curve(tmp_path / "exp")
    assert curve.clean_from(rows)["step"] == 400
    curve.print_curve(tmp_path / "exp", rows)
    out = capsys.readouterr().out
    assert "infer_stopped" in out and "free-running clean from step 400" in out
    assert curve.clean_from(rows[:3]) is None
    assert not curve.clean(rows[0]) and curve.clean(rows[1])


def test_boundary_errors_by_class_splits_the_phone_starts(tmp_path, capsys):
    """Stops predicted 30 ms early, other phones 10 ms late: each class gets its own bias."""
    import json

    phones = [[0.0, 0.1, "ˈa"], [0.1, 0.2, "t"], [0.2, 0.3, "s"]]
    item = {
        "id": "u1",
        "audio": "u1.wav",
        "text": "at s",
        "timings": {"duration": 0.3, "words": [[0.0, 0.3, "ats"]], "phones": phones},
    }
    (tmp_path / "ref.jsonl").write_text(json.dumps(item) + "\n")
    shift = {"t": -0.03}
    pred = [[a + shift.get(lab, 0.01), b, lab] for a, b, lab in phones]
    (tmp_path / "pred").mkdir()
    (tmp_path / "pred/u1.durations.json").write_text(json.dumps({"phones": pred}))
    script = load("boundary_errors_by_class")
    errors, unpaired = script.start_errors(
        tmp_path / "ref.jsonl", tmp_path / "pred", {"stops": {"t", "k"}}
    )
    assert unpaired == 0
    assert errors["stops"] == pytest.approx([-30.0])
    assert errors["other"] == pytest.approx([10.0, 10.0])


def test_boundary_errors_by_position_finds_pauses(tmp_path):
    """Two words with a pause between them: each boundary in its place, ends before the
    pause and the utterance's end counted as such."""
    import json

    phones = [[0.0, 0.1, "a"], [0.1, 0.2, "t"], [0.3, 0.4, "s"], [0.4, 0.5, "o"]]
    words = [[0.0, 0.2, "at"], [0.3, 0.5, "so"]]
    item = {
        "id": "u1",
        "audio": "u1.wav",
        "text": "at so",
        "timings": {"duration": 0.5, "words": words, "phones": phones},
    }
    (tmp_path / "ref.jsonl").write_text(json.dumps(item) + "\n")
    pred = [[a + 0.01, b + 0.02, lab] for a, b, lab in phones]
    (tmp_path / "pred").mkdir()
    (tmp_path / "pred/u1.durations.json").write_text(json.dumps({"phones": pred}))
    errors, unpaired = load("boundary_errors_by_class").position_errors(
        tmp_path / "ref.jsonl", tmp_path / "pred"
    )
    assert unpaired == 0
    assert errors["word start"] == pytest.approx([10.0])  # the first phone
    assert errors["inside"] == pytest.approx([10.0, 10.0])
    assert errors["after pause"] == pytest.approx([10.0])
    assert errors["before pause"] == pytest.approx([20.0, 20.0])  # "t" and the last "o"


def test_bench_tacotron_runs_both_models(capsys):
    """The comparison with torchaudio's Tacotron2 builds both models and times them (tiny)."""
    args = ["--batch", "2", "--text-len", "5", "--mel-len", "8", "--steps", "3", "--repeats", "1"]
    load("bench_tacotron").main(args)
    out = capsys.readouterr().out
    assert "train step (s)" in out and "infer b=2 (frames/s)" in out
    assert "training throughput (batch 2, 14 mel frames a step): aligner " in out


def test_bench_tacotron_fast_paths(capsys):
    """--fast adds the fused fp32, fp16 and int8 rows and their distance from plain fp32,
    --limits the bandwidth lines, --sentences the batch against one by one (tiny sizes)."""
    args = ["--batch", "2", "--text-len", "5", "--mel-len", "8", "--steps", "3", "--repeats", "1"]
    load("bench_tacotron").main(
        [*args, "--fast", "--limits", "--bandwidth-mb", "64", "--sentences", "2"]
    )
    out = capsys.readouterr().out
    for path in ("fp32 fused", "fp16", "int8"):
        assert f"infer b=1 {path} (frames/s)" in out and f"{path} against fp32" in out
    assert out.count("same lengths True") == 3
    fused = out.split("fp32 fused against fp32")[1]
    assert float(fused.split("mean ")[1].split(",")[0]) < 1e-5  # the fp32 fast paths' bound
    assert "memory bandwidth of this machine: read" in out
    limits = [ln.split(":")[0] for ln in out.splitlines() if "step time / limit" in ln]
    assert limits == ["aligner fp32", "aligner fp32 fused", "aligner fp16", "aligner int8"]
    assert out.count("2 sentences (") == 4 and "speed-up" in out


def test_bench_tacotron_static_rows(capsys):
    """--static adds fixed-shape decoding at batch 1 and 4 and its distance from the plain
    decode (on a CPU without graphs: the same frames within 1e-5, the same lengths)."""
    args = ["--batch", "2", "--text-len", "5", "--mel-len", "8", "--steps", "3", "--repeats", "1"]
    load("bench_tacotron").main([*args, "--static"])
    out = capsys.readouterr().out
    assert "infer b=1 static (frames/s)" in out and "infer b=4 static (frames/s)" in out
    line = out.split("static against plain")[1].splitlines()[0]
    assert float(line.split("mean ")[1].split(",")[0]) < 1e-5 and "same lengths True" in line


def test_boundary_errors_of_words_by_the_pauses_beside_them(tmp_path, capsys):
    """Two speakers; the second word of "at so" follows a pause. Each start and end in its
    place, the gross share printed, and --speaker keeps one speaker's items."""
    import json

    words = [[0.0, 0.2, "at"], [0.3, 0.5, "so"], [0.5, 0.7, "me"]]
    items = [
        {"id": f"u{k}", "audio": "u.wav", "text": "at so me", "speaker": spk,
         "timings": {"duration": 0.7, "words": words, "phones": []}}
        for k, spk in ((1, "a"), (2, "b"))
    ]  # fmt: skip
    (tmp_path / "ref.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    (tmp_path / "pred").mkdir()
    for k, late in ((1, 0.01), (2, 0.06)):  # u2: every boundary 60 ms late
        pred = [[a + late, b + late, lab] for a, b, lab in words]
        (tmp_path / f"pred/u{k}.durations.json").write_text(json.dumps({"words": pred}))
    script = load("boundary_errors_by_class")
    errors, unpaired = script.word_errors(tmp_path / "ref.jsonl", tmp_path / "pred", "a")
    assert unpaired == 0
    assert errors["start after pause"] == pytest.approx([10.0, 10.0])  # "at" and "so"
    assert errors["start, words meet"] == pytest.approx([10.0])  # "me"
    assert errors["end before pause"] == pytest.approx([10.0, 10.0])  # "at" and the last
    assert errors["end, words meet"] == pytest.approx([10.0])  # "so"
    script.main(["--reference", str(tmp_path / "ref.jsonl"), "--predicted",
                 str(tmp_path / "pred"), "--words"])  # fmt: skip
    out = capsys.readouterr().out
    assert "start after pause       4   35.0   35.0   50.0%  50.0%" in out
    with pytest.raises(SystemExit, match="no item of speaker 'c'"):
        script.word_errors(tmp_path / "ref.jsonl", tmp_path / "pred", "c")
