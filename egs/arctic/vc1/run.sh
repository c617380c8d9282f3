#!/usr/bin/env bash
# Sequence-to-sequence voice conversion on CMU ARCTIC (local speaker folders, bdl -> slt).
#
#   ./run.sh DATA_DIR [--stage N] [--stop-stage M] [--source bdl] [--target slt] [--recipe YAML] [--vocoder V]
#            [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--baseline-args "--max-minutes 10"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare arctic      -> data/{train,valid,test}.jsonl
#   1 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#   2 convert     aligner convert (test split) -> $exp/converted/*.wav
#   3 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
#   4 score       aligner score --task vc     -> $exp/score/test.txt (MCD dB, F0, duration)
#   5 baseline    scripts/vc_baseline.py      -> $exp/baseline/model.pt, converted/ (the
#                                                frame-wise regression, source timing kept)
#   6 evaluate    scripts/eval_vc.py          -> $exp/score/vc.md (source, baseline, seq2seq)
# Environment: ALIGNER (the command, default aligner), PYTHON (runs scripts/, default
# python), ALIGNER_TRAIN_ARGS (extra `aligner train` arguments, e.g. "--set
# train.max_steps=2"), ALIGNER_BASELINE_ARGS (extra `vc_baseline.py train` arguments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
source=bdl
target=slt
recipe="$root"/recipes/vc/seq2seq_vc_lsa.yaml
data=data
exp=exp/seq2seq_vc_lsa
train_args=${ALIGNER_TRAIN_ARGS:-}
baseline_args=${ALIGNER_BASELINE_ARGS:-}
python=${PYTHON:-python}
aligner=${ALIGNER:-aligner}
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
. "$root/egs/tools/vc_stages.sh"
corpus=${1:-}
[ -n "$corpus" ] || { echo "run.sh: give the CMU ARCTIC folder: ./run.sh DATA_DIR" >&2; exit 2; }
shift; no_arguments "$@"

if run 0; then
  echo "stage 0: prepare CMU ARCTIC $source -> $target from $corpus"
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare arctic "$corpus" "$data" --source "$source" --target "$target"
  fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: convert the test split"
  if needed "$exp"/converted/manifest.jsonl "$exp"/converted; then
    $aligner convert --checkpoint "$exp" --vocoder "$vocoder" --in "$data"/test.jsonl --out "$exp"/converted
  fi
fi

if run 3; then align_stage; fi
if run 4; then vc_score_stage; fi
if run 5; then vc_baseline_stage; fi
if run 6; then vc_evaluate_stage; fi
