#!/usr/bin/env bash
# Voice conversion on CMU ARCTIC (local speaker folders, bdl -> slt), full-size recipes
# (for a GPU).
#
#   ./run.sh DATA_DIR [--model fastvc|tacotron] [--minutes 0] [--average 5] [--stage N] [--stop-stage M]
#            [--source bdl] [--target slt] [--recipe YAML] [--vocoder V]
#            [--guide durations|diagonal] [--vocoder-recipe YAML] [--vocoder-args ARGS]
#            [--data DIR] [--exp DIR] [--train-args "--set train.max_minutes=20"]
#            [--baseline-args "--max-minutes 10"] [--judge-args ARGS]
#            [--pretrain none|tts] [--pretrain-minutes 15] [--pretrain-args ARGS]
#
# Run it from its folder (data/ and exp/MODEL_RECIPE/ are written under the current folder).
# Models: fastvc (default; recipes/vc/fastvc.yaml) or tacotron (recipes/vc/seq2seq_vc_lsa.yaml).
# --minutes: the minutes of stage 2 and of the baseline (0, the default here: the recipe's
# steps and the baseline's 30 epochs). --average K: stages 4 and 5 use the mean of the run's
# last K checkpoints, $exp/avg.pt (5; 1: its best.pt by the validation loss).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare arctic      -> data/{train,valid,test}.jsonl
#   1 durations   aligner train $align_recipe on both voices -> $align_exp, then aligner
#                 align of each voice (train, valid) -> $data/durations/{source,target}/
#                 (--guide diagonal, tacotron only: skipped)
#   2 train       aligner train $recipe        -> $exp/checkpoints/*.pt, $exp/tb (with
#                 --pretrain tts first a FastPitch of the target voice at the FastVC's
#                 sizes, --pretrain-minutes -> $exp/target_tts, whose decoder, projection
#                 and postnet start the FastVC; scripts/voice_manifest.py writes its
#                 $data/target_{train,valid}.jsonl)
#   3 vocoder     aligner train $vocoder_recipe on the target voice -> $exp/vocoder (only
#                 with --vocoder train, the default; it takes 30 minutes on 2 CPU cores)
#   4 convert     aligner average (the last --average checkpoints) -> $exp/avg.pt, then
#                 aligner convert (test split) -> $exp/converted/*.wav
#   5 align       aligner align (test split)  -> $exp/align/summary.json (mapping_ms)
#   6 score       aligner score --task vc     -> $exp/score/test.txt (MCD dB, F0, duration)
#   7 baseline    scripts/vc_baseline.py      -> $exp/baseline/model.pt, converted/ (the
#                                                frame-wise regression, source timing kept),
#                                                vocoded/ (the target's own mel: the floor)
#   8 judge       aligner train $judge_recipe on both voices -> $exp/recognizer
#   9 evaluate    scripts/eval_vc.py          -> $exp/score/vc.md (source, baseline, model,
#                                                vocoded target: MCD, F0, duration, PER)
# Every sound goes through one vocoder: --vocoder train (default), griffin-lim, hifigan:DIR,
# or a vocoder experiment folder or checkpoint.
# Environment: ALIGNER (the command, default aligner), PYTHON (runs scripts/, default
# python), ALIGNER_TRAIN_ARGS (extra `aligner train` arguments, e.g. "--set
# train.max_steps=2"), ALIGNER_BASELINE_ARGS (extra `vc_baseline.py train` arguments),
# ALIGNER_VOCODER_ARGS, ALIGNER_ALIGN_ARGS, ALIGNER_JUDGE_ARGS and ALIGNER_PRETRAIN_ARGS
# (extra `aligner train` arguments of the vocoder, the alignment model, the recognizer and
# the target voice's FastPitch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
source=bdl
target=slt
data=data
exp=""  # empty: exp/RECIPE (fastvc, seq2seq_vc_lsa)
. "$root/egs/tools/vc_defaults.sh"
minutes=0  # a GPU recipe: its own steps
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
. "$root/egs/tools/vc_stages.sh"
corpus=${1:-}
[ -n "$corpus" ] || { echo "run.sh: give the CMU ARCTIC folder: ./run.sh DATA_DIR" >&2; exit 2; }
shift; no_arguments "$@"
vc_model_option full exp

if run 0; then
  echo "stage 0: prepare CMU ARCTIC $source -> $target from $corpus"
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare arctic "$corpus" "$data" --source "$source" --target "$target"
  fi
fi

vc_stages
