"""egs/*/run.sh: stage selection, resumability and arguments (with a recording stand-in for
the `aligner` command), and the LJSpeech and ARCTIC scripts end to end on tiny fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = {
    "espeak_tts": ROOT / "egs/espeak/tts1/run.sh",
    "espeak_vc": ROOT / "egs/espeak/vc1/run.sh",
    "espeak_align": ROOT / "egs/espeak/align1/run.sh",
    "festival_align": ROOT / "egs/festival/align1/run.sh",
    "festival_tts": ROOT / "egs/festival/tts1/run.sh",
    "festival_vc": ROOT / "egs/festival/vc1/run.sh",
    "ljspeech": ROOT / "egs/ljspeech/tts1/run.sh",
    "arctic": ROOT / "egs/arctic/vc1/run.sh",
}
NEEDS_CORPUS = {"ljspeech", "arctic"}
FASTPITCH = "recipes/tts/fastpitch_small.yaml"

# Records each call in $CALLS and creates the output the next stage looks for.
FAKE_ALIGNER = r"""#!/usr/bin/env bash
echo "$*" >> "$CALLS"
case $1 in
  prepare) out=$3; [ "$2" = espeak ] || [ "$2" = cmudict ] || [ "$2" = festival ] || out=$4
           mkdir -p "$out" && touch "$out/train.jsonl" "$out/valid.jsonl" "$out/test.jsonl" ;;
  train) while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
         mkdir -p "$out/checkpoints" && touch "$out/checkpoints/ckpt-00000002.pt" ;;
  average|score-alignment)
         while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
         mkdir -p "$(dirname "$out")"; touch "$out" ;;
  synthesize|convert|align)
         while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
         case $out in *.wav) mkdir -p "$(dirname "$out")"; touch "$out" ;;
                      *) mkdir -p "$out"; touch "$out/summary.json" "$out/manifest.jsonl" ;; esac ;;
esac
"""
FAKE_PYTHON = r"""#!/usr/bin/env bash
echo "python $*" >> "$CALLS"
while [ $# -gt 0 ]; do
  if [ "$1" = --out ]; then
    case $2 in */converted|*/vocoded) mkdir -p "$2"; touch "$2/manifest.jsonl" ;;
               *) mkdir -p "$(dirname "$2")"; touch "$2" ;; esac
  fi
  shift
done
echo "MCD 1.0 dB"
"""


def fake_env(tmp: Path) -> dict[str, str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in (("aligner", FAKE_ALIGNER), ("python", FAKE_PYTHON)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return {
        **os.environ,
        "ALIGNER": str(bin_dir / "aligner"),
        "PYTHON": str(bin_dir / "python"),
        "CALLS": str(tmp / "calls.txt"),
    }


def run(name: str, tmp: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    extra = [str(tmp / "corpus")] if name in NEEDS_CORPUS else []
    cmd = ["bash", str(SCRIPTS[name]), *extra, "--data", "data", "--exp", "exp", *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)


def calls(tmp: Path) -> list[str]:
    path = tmp / "calls.txt"
    return [line.split()[0] for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_all_stages_then_resume_skips_everything(name, tmp_path):
    env = fake_env(tmp_path)
    first = run(name, tmp_path, env)
    assert first.returncode == 0, first.stderr
    expected = [
        "prepare",
        "train",
        "convert" if "vc" in name or name == "arctic" else "synthesize",
        "align",
    ]
    if expected[2] == "convert":
        expected.insert(2, "train")  # the vocoder, on the target voice (--vocoder train)
        expected.insert(3, "average")  # the last 5 checkpoints, which convert and align use
        expected.append("score")  # aligner score --task vc
        expected += ["python"] * 3  # baseline train, convert, vocode
        expected += ["train", "python"]  # the phone recognizer; scripts/eval_vc.py
    if name.endswith("_align"):  # an alignment model does not synthesize
        expected.remove("synthesize")
    if name.endswith("_tts"):  # the alignment model and its durations of train and valid
        expected[1:1] = ["train", "align", "align"]
    if name == "festival_tts":  # the test split's texts for synthesize
        expected.insert(5, "python")
    if expected[2] == "train":  # VC: the alignment model, durations of both voices' splits
        expected[1:1] = ["train"] + ["align"] * 4
    if name in ("espeak_tts", "espeak_align", "festival_align", "festival_tts"):
        expected.append("score-alignment")  # against the corpus's reference timings
    assert calls(tmp_path) == expected
    again = run(name, tmp_path, env)
    assert again.returncode == 0, again.stderr
    assert calls(tmp_path) == expected  # nothing ran twice
    assert again.stdout.count("skipped") == len(expected) - expected.count("python") * (
        name == "festival_tts"
    )


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_folders_with_spaces(name, tmp_path):
    """Every variable is quoted: a data or experiment folder with spaces stays one folder."""
    env = fake_env(tmp_path)
    extra = [str(tmp_path / "the corpus")] if name in NEEDS_CORPUS else []
    cmd = ["bash", str(SCRIPTS[name]), *extra, "--data", "my data", "--exp", "my exp"]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "my data" / "test.jsonl").exists()
    assert (tmp_path / "my exp" / "checkpoints").is_dir() and (tmp_path / "my exp/.done").exists()
    assert not (tmp_path / "my").exists() and not (tmp_path / "data").exists()


def test_stage_range_and_train_arguments(tmp_path):
    env = {**fake_env(tmp_path), "ALIGNER_TRAIN_ARGS": "--set train.max_steps=2"}
    (tmp_path / "exp/checkpoints").mkdir(parents=True)
    (tmp_path / "exp/checkpoints/ckpt-00000001.pt").touch()  # an interrupted run
    r = run("espeak_tts", tmp_path, env, "--stage", "2", "--stop-stage", "2")
    assert r.returncode == 0, r.stderr
    line = (tmp_path / "calls.txt").read_text().strip()
    assert line.startswith("train ") and line.endswith("--set train.max_steps=2")
    from aligner.pipeline.demo import RECIPES

    # the egs train the recipe the demo trains
    assert f"{RECIPES['durations'].name} --data data --out exp" in line


def test_tts_durations_stage_and_the_diagonal_guide(tmp_path):
    """--guide durations (default): the alignment model trains, then aligns train and valid
    into data/durations/; --guide diagonal skips it and guides with the diagonal."""
    env = {**fake_env(tmp_path), "ALIGNER_ALIGN_ARGS": "--set train.max_minutes=3"}
    r = run("espeak_tts", tmp_path, env, "--stop-stage", "2", "--align-exp", "exp/al")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert (
        lines[1].startswith("train ")
        and "recipes/align/aligner.yaml --data data --out exp/al" in lines[1]
    )
    assert lines[1].endswith("--resume --set train.max_minutes=3")
    assert (
        lines[2]
        == "align --checkpoint exp/al --in data/train.jsonl --out data/durations/train --no-png --force"
    )
    assert lines[3].startswith(
        "align --checkpoint exp/al --in data/valid.jsonl --out data/durations/valid"
    )
    assert "tacotron_forward_small_guided.yaml --data data" in lines[4]
    r = run("espeak_tts", tmp_path, env, "--guide", "diagonal", "--exp", "e2", "--stop-stage", "2")
    assert r.returncode == 0 and "--guide diagonal: no alignment model needed" in r.stdout
    last = (tmp_path / "calls.txt").read_text().splitlines()[len(lines) :]
    assert len(last) == 1 and "tacotron_forward_small.yaml --data" in last[0]
    assert "--out e2" in last[0]
    bad = run("espeak_tts", tmp_path, env, "--guide", "prior")
    assert bad.returncode == 2 and "use durations or diagonal" in bad.stderr


def test_festival_tts_voice_model_and_tokenizer(tmp_path):
    """egs/festival/tts1: one voice's corpus, the alignment model and the FastPitch (or the
    Tacotron) trained with the tokenizer asked for; a voice of another language with
    eSpeak NG's phonemes of its code; bad values refused before anything runs."""
    env = fake_env(tmp_path)
    args = ["--voice", "czech_dita", "--text", "cs.txt", "--tokenizer", "phonemes"]
    r = run("festival_tts", tmp_path, env, *args, "--language", "cs", "--stop-stage", "2")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert lines[0] == ("prepare festival data --voices czech_dita --utterances 1000 --text cs.txt")
    tokens = "--set data.tokenizer=phonemes --set data.tokenizer_opts.language=cs"
    assert "recipes/align/aligner.yaml --data data --out exp/aligner" in lines[1]
    assert lines[1].endswith(tokens) and lines[4].endswith(tokens)
    assert "recipes/tts/fastpitch_small.yaml --data data --out exp" in lines[4]
    r = run("festival_tts", tmp_path, env, "--model", "tacotron", "--exp", "t", "--stage", "2")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()[5:]
    assert "tacotron_forward_small_guided.yaml --data data --out t" in lines[0]
    assert lines[0].endswith("--set data.tokenizer=arpabet")
    assert lines[2].startswith(
        "synthesize --checkpoint t --vocoder griffin-lim --in t/synth/test.txt"
    )
    for bad, message in (
        (["--model", "glowtts"], "use fastpitch or tacotron"),
        (["--tokenizer", "chars"], "use arpabet or phonemes"),
        (["--language", "cs"], "needs --tokenizer phonemes"),
    ):
        r = run("festival_tts", tmp_path, env, *bad)
        assert r.returncode == 2 and message in r.stderr, r.stderr


def test_ljspeech_trains_fastpitch_after_the_alignment_model(tmp_path):
    """LJSpeech --model fastpitch: the alignment model and its durations of train and valid
    (stage 1, which the Tacotron passes over), then the full-size FastPitch on them."""
    env = fake_env(tmp_path)
    (tmp_path / "corpus").mkdir()
    r = run("ljspeech", tmp_path, env, "--model", "fastpitch", "--exp", "exp/fastpitch")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert lines[0].startswith("prepare ljspeech")
    assert "recipes/align/aligner.yaml --data data --out exp/aligner" in lines[1]
    assert lines[2].startswith("align --checkpoint exp/aligner --in data/train.jsonl")
    assert lines[3].startswith("align --checkpoint exp/aligner --in data/valid.jsonl")
    assert "recipes/tts/fastpitch.yaml --data data --out exp/fastpitch" in lines[4]
    assert lines[5].startswith("synthesize --checkpoint exp/fastpitch")
    assert lines[6].startswith("align --checkpoint exp/fastpitch --in data/test.jsonl")
    (tmp_path / "calls.txt").unlink()
    r = run("ljspeech", tmp_path, env, "--exp", "exp/taco", "--stop-stage", "2")
    assert r.returncode == 0 and "no alignment model needed" in r.stdout, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert (
        len(lines) == 1 and "recipes/tts/tacotron_lsa.yaml --data data --out exp/taco" in lines[0]
    )
    r = run("ljspeech", tmp_path, env, "--model", "glowtts")
    assert r.returncode == 2 and "use tacotron or fastpitch" in r.stderr


def test_bad_arguments(tmp_path):
    env = fake_env(tmp_path)
    r = subprocess.run(
        ["bash", str(SCRIPTS["ljspeech"])], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert r.returncode == 2 and "give the LJSpeech-1.1 folder" in r.stderr
    r = run("espeak_tts", tmp_path, env, "--bogus")
    assert r.returncode == 2 and "unknown option --bogus" in r.stderr
    assert not (tmp_path / "calls.txt").exists()


def test_espeak_vc_pairs_and_the_evaluation_stage(tmp_path):
    """--pair picks the voices (accent: an RP target), the default data/exp folders are
    per pair and model, the model and the baseline train for the same --minutes, the judge
    trains on both voices, and stage 9 scores both systems with the mapping of each."""
    env = fake_env(tmp_path)
    cmd = ["bash", str(SCRIPTS["espeak_vc"]), "--pair", "accent"]

    def run_vc(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*cmd, *args], cwd=tmp_path, env=env, capture_output=True, text=True)

    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert lines[0].startswith("prepare espeak data/accent --utterances 1000 --parallel ")
    assert lines[0].endswith("en-us+m3,rate=150,pitch=35 en-gb-x-rp+f2,rate=210,pitch=70")
    exp = "exp/accent/fastvc_small"
    # stage 1: the alignment model on both voices, then the durations of each voice's train
    # and valid splits
    assert f"--out {exp}/aligner --resume --set data.audio_keys=[audio,target_audio]" in lines[1]
    assert (
        lines[2] == f"align --checkpoint {exp}/aligner --in data/accent/train.jsonl --out "
        "data/accent/durations/source/train --audio-key audio --no-png --force"
    )
    assert lines[5].endswith(
        "--out data/accent/durations/target/valid --audio-key target_audio --no-png --force"
    )
    assert lines[6].startswith("train ") and "recipes/vc/fastvc_small.yaml" in lines[6]
    assert f"--out {exp} --resume --set train.max_minutes=30 " in lines[6]
    assert (
        "--set data.durations=durations/target --set data.source_durations=durations/source"
        in lines[6]
    )
    assert "guided" not in lines[6]  # a fastvc has no attention to guide
    assert f"--out {exp}/vocoder --resume --set data.audio_keys=[target_audio]" in lines[7]
    # stages 4 and 5 use the mean of the run's last 5 checkpoints
    assert lines[8] == f"average {exp} --last 5 --out {exp}/avg.pt"
    assert lines[9].startswith(f"convert --checkpoint {exp}/avg.pt --vocoder {exp}/vocoder ")
    assert lines[10].startswith(f"align --checkpoint {exp}/avg.pt --in data/accent/test.jsonl")
    assert "vc_baseline.py train --data data/accent" in lines[12]
    assert lines[12].endswith("--max-minutes 30 --epochs 100000")  # the model's minutes
    assert (
        f"vc_baseline.py convert --model {exp}/baseline/model.pt --vocoder {exp}/vocoder"
        in lines[13]
    )
    assert (
        f"vc_baseline.py vocode --model {exp}/baseline/model.pt --vocoder {exp}/vocoder"
        in lines[14]
    )
    assert lines[15].startswith("train ") and "recipes/recognize/ctc_small.yaml" in lines[15]
    assert (
        f"--out {exp}/recognizer --resume --set data.audio_keys=[audio,target_audio]" in (lines[15])
    )
    assert f"--system fastvc={exp}/converted/manifest.jsonl" in lines[16]
    assert "--system vocoded-target=" in lines[16]
    assert lines[16].endswith(
        f"--alignment fastvc={exp}/align/summary.json --alignment baseline=source "
        f"--recognizer {exp}/recognizer --json {exp}/score/vc.json"
    )
    assert (tmp_path / f"{exp}/score/vc.md").exists()
    tacotron = run_vc("--model", "tacotron", "--minutes", "20", "--stage", "2", "--stop-stage", "2")
    assert tacotron.returncode == 0, tacotron.stderr
    line = (tmp_path / "calls.txt").read_text().splitlines()[-1]
    assert "recipes/vc/seq2seq_vc_lsa_small.yaml" in line
    assert "--out exp/accent/seq2seq_vc_lsa_small --resume --set train.max_minutes=20 " in line
    assert "--set model.loss.guided.source=durations" in line
    diagonal = run_vc("--model", "tacotron", "--guide", "diagonal", "--exp", "g")
    assert diagonal.returncode == 0, diagonal.stderr
    assert "--guide diagonal: no alignment model needed" in diagonal.stdout
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    new = lines[lines.index(line) + 1 :]
    assert new[0].startswith("train ") and "--out g " in new[0]
    assert "durations" not in new[0] and not any(
        line.startswith("align --checkpoint g/aligner") for line in new
    )
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    given = run_vc("--vocoder", "griffin-lim", "--exp", "gl")
    assert given.returncode == 0 and "--vocoder griffin-lim given, training skipped" in given.stdout
    later = (tmp_path / "calls.txt").read_text().splitlines()[len(lines) :]
    assert not any("vocoder --resume" in line for line in later)
    assert any(
        line.startswith("convert --checkpoint gl/avg.pt --vocoder griffin-lim ") for line in later
    )
    one = run_vc("--average", "1", "--exp", "one", "--stage", "4", "--stop-stage", "5")
    assert one.returncode == 0, one.stderr
    later = (tmp_path / "calls.txt").read_text().splitlines()[-2:]  # best.pt: no average
    assert later[0].startswith("convert --checkpoint one --vocoder one/vocoder ")
    assert later[1].startswith("align --checkpoint one --in data/accent/test.jsonl")
    for args, message in (
        (["--pair", "hard"], "use easy or accent"),
        (["--model", "glow"], "use fastvc or tacotron"),
        (["--guide", "diagonal"], "--model fastvc learns from durations"),
        (["--average", "0"], "--average 0: give a count of checkpoints >= 1"),
        (["--average", "last"], "--average last: give a count"),
    ):
        bad = subprocess.run(
            [*cmd[:2], *args], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert bad.returncode == 2 and message in bad.stderr


def test_festival_vc_pair_and_its_tokenizer(tmp_path):
    """The Festival pair: both voices speak every sentence, the alignment model reads
    ARPAbet (Festival's lexicon) unless told otherwise, and a pair is two voices."""
    env = fake_env(tmp_path)
    r = run(
        "festival_vc", tmp_path, env, "--stop-stage", "2", "--voices", "kal_diphone ked_diphone"
    )
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert lines[0] == "prepare festival data --utterances 1000 --parallel kal_diphone ked_diphone"
    assert "--set data.audio_keys=[audio,target_audio] --set data.tokenizer=arpabet" in lines[1]
    assert "--set data.source_durations=durations/source" in lines[-1]
    r = run("festival_vc", tmp_path, env, "--stage", "8", "--stop-stage", "8")
    assert r.returncode == 0, r.stderr
    judge = (tmp_path / "calls.txt").read_text().splitlines()[-1]
    assert "ctc_small.yaml --data data --out exp/recognizer " in judge
    assert judge.endswith("--set data.audio_keys=[audio,target_audio] --set data.tokenizer=arpabet")
    bad = run("festival_vc", tmp_path, env, "--voices", "kal_diphone")
    assert bad.returncode == 2 and "give two voices" in bad.stderr


def run_g2p(tmp: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    cmd = ["bash", str(ROOT / "egs/cmudict/g2p1/run.sh"), "--data", "data", "--exp", "exp", *args]
    return subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)


def test_g2p_single_run_averages_then_decodes_and_scores(tmp_path):
    env = fake_env(tmp_path)
    first = run_g2p(tmp_path, env)
    assert first.returncode == 0, first.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls(tmp_path) == ["prepare", "train", "average", "g2p", "g2p", "g2p", "score"]
    assert lines[1].startswith("train ") and "--out exp " in lines[1] + " "
    assert lines[2] == "average exp --last 3 --out exp/avg.pt"
    assert lines[3].startswith("g2p --checkpoint exp/avg.pt --beam 5 --in ")
    assert lines[5] == "g2p --checkpoint exp/avg.pt --beam 5 --in data/test.jsonl"
    assert lines[6] == "score --task g2p --hyp exp/decode/test.txt --ref data/test.jsonl"
    again = run_g2p(tmp_path, env)
    assert again.returncode == 0, again.stderr
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == len(lines)  # all skipped


def test_g2p_seeds_train_one_run_each_and_decode_an_ensemble(tmp_path):
    env = fake_env(tmp_path)
    r = run_g2p(tmp_path, env, "--seeds", "1 2", "--average", "1", "--beam", "3")
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls(tmp_path) == [
        "prepare",
        "train",
        "train",
        "g2p",
        "g2p",
        "g2p",
        "score",
    ]  # no average
    assert "--out exp/seed1" in lines[1] and lines[1].endswith("--set train.seed=1")
    assert "--out exp/seed2" in lines[2] and lines[2].endswith("--set train.seed=2")
    both = "--checkpoint exp/seed1 --checkpoint exp/seed2 "  # the CLI resolves the folders
    assert lines[3].startswith(f"g2p {both}")
    assert lines[5].startswith(f"g2p {both}") and lines[5].endswith("--in data/test.jsonl")
    for bad in (["--seeds", "1 x"], ["--average", "0"]):
        r = run_g2p(tmp_path, env, *bad)
        assert r.returncode == 2 and "run.sh:" in r.stderr


def test_g2p_training_in_stages_as_the_readme_reproduces_its_best_row(tmp_path):
    """--stop-stage 1, delete .done, run again with more steps: both runs resume."""
    env = fake_env(tmp_path)
    r = run_g2p(tmp_path, env, "--seeds", "2 3", "--stop-stage", "1")
    assert r.returncode == 0, r.stderr
    assert calls(tmp_path) == ["prepare", "train", "train"]
    assert not any((tmp_path / f"exp/seed{s}/avg.pt").exists() for s in (2, 3))
    for s in (2, 3):
        (tmp_path / f"exp/seed{s}/.done").unlink()
    more = "--set train.max_steps=16000 --set train.decay_steps=4000"
    r = run_g2p(tmp_path, env, "--seeds", "2 3", "--train-args", more)
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls(tmp_path)[3:] == [
        "train",
        "train",
        "average",
        "average",
        "g2p",
        "g2p",
        "g2p",
        "score",
    ]
    for line, s in zip(lines[3:5], (2, 3)):
        assert f"--out exp/seed{s} --resume {more} --set train.seed={s}" in line
    assert "--checkpoint exp/seed2/avg.pt --checkpoint exp/seed3/avg.pt" in lines[-2]


def test_g2p_right_to_left_runs_rerank_the_ensemble(tmp_path):
    env = fake_env(tmp_path)
    r = run_g2p(
        tmp_path,
        env,
        "--seeds",
        "1 2",
        "--r2l-seeds",
        "11",
        "--r2l-weight",
        "0.4",
        "--train-args",
        "--set train.max_steps=9",
        "--r2l-train-args",
        "--set train.lr=1e-3",
    )
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls(tmp_path) == ["prepare", *["train"] * 3, *["average"] * 3, *["g2p"] * 3, "score"]
    assert "--out exp/r2l_seed11 " in lines[3] and lines[3].endswith(
        "--set train.max_steps=9 --set data.reverse_target=true --set train.lr=1e-3 "
        "--set train.seed=11"
    )
    assert lines[6] == "average exp/r2l_seed11 --last 3 --out exp/r2l_seed11/avg.pt"
    rerank = "--r2l exp/r2l_seed11/avg.pt --r2l-weight 0.4"
    assert f"--checkpoint exp/seed2/avg.pt {rerank} --beam 5 --in " in lines[7]
    assert f"--checkpoint exp/seed2/avg.pt {rerank} --beam 5 --in data/test.jsonl" in lines[9]
    for bad in (["--r2l-seeds", "x"], ["--r2l-weight", "0.3 0.5"], ["--r2l-weight", "2"]):
        r = run_g2p(tmp_path, env, *bad)
        assert r.returncode == 2 and bad[0] in r.stderr
    r = run_g2p(tmp_path, env, "--stage", "3", "--seeds", "1 2", "--r2l-seeds", "11 13")
    assert r.returncode == 2 and "'11 13' has no model; train it" in r.stderr


# ------------------------------------------------------------------ end to end
def _tone(path: Path, seconds: float, f0: float, sr: int = 22050) -> None:
    t = np.arange(int(seconds * sr)) / sr
    sf.write(path, (0.3 * np.sin(2 * np.pi * f0 * t)).astype(np.float32), sr)


def ljspeech_fixture(root: Path, n: int = 12) -> Path:
    """LJSpeech-1.1 layout: metadata.csv (id|text|normalized text) + wavs/ID.wav."""
    (root / "wavs").mkdir(parents=True)
    lines = []
    for i in range(n):
        uid, text = f"LJ001-{i:04d}", f"The quick brown fox jumps over the lazy dog, {i}."
        _tone(root / "wavs" / f"{uid}.wav", 0.4 + 0.02 * i, 150 + 10 * i)
        lines.append(f"{uid}|{text}|{text}")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    return root


def arctic_fixture(root: Path, n: int = 12) -> Path:
    """CMU ARCTIC layout: cmu_us_SPK_arctic/{wav/arctic_aNNNN.wav, etc/txt.done.data}."""
    for spk, f0 in (("bdl", 120), ("slt", 220)):
        base = root / f"cmu_us_{spk}_arctic"
        (base / "wav").mkdir(parents=True)
        (base / "etc").mkdir()
        lines = []
        for i in range(n):
            uid = f"arctic_a{i + 1:04d}"
            _tone(base / "wav" / f"{uid}.wav", 0.4 + 0.02 * i, f0 + 5 * i)
            lines.append(f'( {uid} "The quick brown fox jumps over the lazy dog, {i}." )')
        (base / "etc" / "txt.done.data").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ljspeech", "arctic"])
def test_real_scripts_on_tiny_fixtures(name, tmp_path):
    from aligner.cli import COMMANDS

    prepare_module = COMMANDS["prepare"].split(":")[0]
    if not (ROOT / (prepare_module.replace(".", "/") + ".py")).exists():
        pytest.skip("aligner prepare is not in this checkout yet")
    (ljspeech_fixture if name == "ljspeech" else arctic_fixture)(tmp_path / "corpus")
    small = {
        "ljspeech": "recipes/tts/tacotron_lsa_small.yaml",
        "arctic": "recipes/vc/fastvc_small.yaml",
    }[name]
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "ALIGNER": str(bin_dir / "aligner"),
        "PYTHON": sys.executable,
        "ALIGNER_TRAIN_ARGS": "--set train.max_steps=2 --set train.batch_size=2 "
        "--set train.eval_every=2 --set train.checkpoint_every=2 --set train.progress=false",
        "ALIGNER_BASELINE_ARGS": "--epochs 1",
        "ALIGNER_VOCODER_ARGS": "--set train.max_steps=2 --set train.batch_size=2 "
        "--set train.eval_every=2 --set train.checkpoint_every=2 --set train.progress=false "
        "--set model.dim=16 --set model.intermediate=32 --set model.layers=1",
        # VC's stage 1 (--guide durations): the alignment model on both voices; two of the
        # fixture's items per voice are shorter than their tokens and are left out
        "ALIGNER_ALIGN_ARGS": "--set train.max_steps=2 --set train.batch_size=2 "
        "--set train.eval_every=2 --set train.checkpoint_every=2 --set train.progress=false",
        # the judge (stage 8): a phone recognizer on both voices, two steps
        "ALIGNER_JUDGE_ARGS": "--set train.max_steps=2 --set train.batch_size=2 "
        "--set train.eval_every=2 --set train.checkpoint_every=2 --set train.progress=false "
        "--set model.channels=16 --set model.conv_layers=1",
    }
    # VC: the decoder started from two steps of the target voice's FastPitch (--pretrain tts)
    env["ALIGNER_PRETRAIN_ARGS"] = env["ALIGNER_ALIGN_ARGS"]
    extra = ["--pretrain", "tts"] if name == "arctic" else []
    r = run(name, tmp_path, env, "--recipe", str(ROOT / small), *extra)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    summary = json.loads((tmp_path / "exp/align/summary.json").read_text())
    if name == "ljspeech":  # and FastPitch on the alignment model's durations
        fast = ["--model", "fastpitch", "--exp", "exp_fp", "--recipe", str(ROOT / FASTPITCH)]
        r = run(name, tmp_path, env, *fast)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
        assert sf.info(tmp_path / "exp_fp/synth/sentences.wav").frames > 0
        assert json.loads((tmp_path / "exp_fp/align/summary.json").read_text())["utterances"]
    assert summary["utterances"] == len((tmp_path / "data/test.jsonl").read_text().splitlines())
    if name == "ljspeech":
        assert sf.info(tmp_path / "exp/synth/sentences.wav").frames > 0
    else:
        assert (tmp_path / "exp/converted/manifest.jsonl").exists()
        score = (tmp_path / "exp/score/test.txt").read_text()
        assert "MCD converted vs target" in score and "source vs target" in score
        table = (tmp_path / "exp/score/vc.md").read_text()  # the same metrics, four rows
        for row in ("| source |", "| fastvc |", "| baseline |", "| vocoded-target |"):
            assert row in table
        assert "PER %" in table and "The target's recordings: PER" in table
        assert (tmp_path / "exp/vocoder/.done").exists()  # every sound through it
        assert (tmp_path / "exp/target_tts/.done").exists()
        assert "initialized 38 of" in r.stdout  # the FastVC's decoder and projection


def tiny_training_env(train_extra: str = "") -> dict[str, str]:
    """The environment of an egs run with the real `aligner` and two-step trainings (the
    TTS training's arguments followed by `train_extra`)."""
    tiny = (
        "--set train.max_steps=2 --set train.batch_size=2 --set train.eval_every=2 "
        "--set train.checkpoint_every=2 --set train.progress=false"
    )
    return {
        **os.environ,
        "ALIGNER": str(Path(sys.executable).parent / "aligner"),
        "ALIGNER_TRAIN_ARGS": tiny + train_extra,
        "ALIGNER_ALIGN_ARGS": tiny,
    }


@pytest.mark.slow
def test_espeak_tts_with_the_durations_guide_end_to_end(tmp_path):
    """The real egs/espeak/tts1 on 12 utterances: the alignment model, its durations of
    train and valid, a Tacotron guided by them, synthesis, alignment and its score."""
    env = tiny_training_env(" --set data.log.infer_items=0")
    r = run("espeak_tts", tmp_path, env, "--utterances", "12")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    valid = (tmp_path / "data/valid.jsonl").read_text().splitlines()
    records = list((tmp_path / "data/durations/valid").glob("*.durations.json"))
    assert len(records) == len(valid) > 0
    import yaml

    cfg = yaml.safe_load((tmp_path / "exp/config.yaml").read_text())
    assert cfg["model"]["loss"]["guided"]["source"] == "durations"
    assert cfg["data"]["durations"] == "durations"
    assert sf.info(tmp_path / "exp/synth/sentences.wav").frames > 0
    assert (tmp_path / "exp/score/alignment.json").exists()


def calls_text(tmp: Path) -> list[str]:
    """Every call the fake aligner and python recorded, whole."""
    return (tmp / "calls.txt").read_text().splitlines()


def test_vc_pretraining_on_the_target_voice_starts_the_fastvc(tmp_path):
    """--pretrain tts: the target voice's recordings as a TTS manifest, a FastPitch of it at
    the FastVC's sizes for --pretrain-minutes, then the FastVC starts its decoder from it;
    the Festival pair's FastPitch reads its alignment model's tokens (ARPAbet)."""
    env = fake_env(tmp_path)
    cmd = ["bash", str(SCRIPTS["espeak_vc"]), "--pair", "accent", "--stage", "2"]
    r = subprocess.run(
        [*cmd, "--stop-stage", "2", "--pretrain", "tts", "--pretrain-minutes", "7"],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = calls_text(tmp_path)
    exp = "exp/accent/fastvc_small"
    for line, split in zip(lines[:2], ("train", "valid")):
        assert line.startswith("python ") and line.endswith(
            f"scripts/voice_manifest.py --in data/accent/{split}.jsonl "
            f"--out data/accent/target_{split}.jsonl --key target_audio"
        )
    assert lines[2].startswith("train ") and "recipes/vc/fastvc_small_tts.yaml" in lines[2]
    assert f"--data data/accent --out {exp}/target_tts --resume" in lines[2]
    assert lines[2].endswith("--set train.max_minutes=7")
    assert "recipes/vc/fastvc_small.yaml" in lines[3]
    assert (
        f"--set train.init_from={exp}/target_tts --set train.init_modules=[decoder,proj]"
        in lines[3]  # the recipe's FastPitch has no postnet
    )
    assert len(lines) == 4
    for args, message in (
        (["--pretrain", "tts", "--model", "tacotron"], "--pretrain tts starts a FastVC's decoder"),
        (["--pretrain", "vae"], "use tts or none"),
        (
            ["--pretrain", "tts", "--recipe", "mine.yaml"],
            "no mine_tts.yaml; give --pretrain-recipe",
        ),
    ):
        bad = subprocess.run([*cmd, *args], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert bad.returncode == 2 and message in bad.stderr
    r = run("festival_vc", tmp_path, env, "--stage", "2", "--stop-stage", "2", "--pretrain", "tts")
    assert r.returncode == 0, r.stderr
    tts = [line for line in calls_text(tmp_path) if "_tts.yaml" in line]
    assert tts[-1].endswith("--set train.max_minutes=15 --set data.tokenizer=arpabet")
    r = run("festival_vc", tmp_path, env, "--stage", "2", "--stop-stage", "2", "--exp", "e2",
            "--pretrain", "tts", "--pretrain-minutes", "0")  # fmt: skip
    assert r.returncode == 0, r.stderr
    tts = [line for line in calls_text(tmp_path) if "_tts.yaml" in line]
    assert "max_minutes" not in tts[-1] and "--out e2/target_tts --resume --set" in tts[-1]
