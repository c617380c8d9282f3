#!/usr/bin/env bash
# Sentence translation from a tab-separated file of pairs (source<TAB>target[<TAB>...]),
# e.g. a Tatoeba/manythings.org file such as fra.txt, read from a local path.
#
#   ./run.sh DATA_FILE [--stage N] [--stop-stage M] [--recipe YAML] [--data DIR]
#            [--exp DIR] [--beam K] [--train-args "--set train.max_minutes=30"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare  aligner prepare parallel-text -> data/{train,valid,test}.jsonl
#   1 train    aligner train                 -> $exp/checkpoints/*.pt, $exp/tb
#   2 decode   aligner translate (test)      -> $exp/decode/test.hyp (+ alignment PNG)
#   3 score    aligner score (BLEU, chrF)    -> $exp/score/test.txt
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
corpus=
recipe="$root"/recipes/nmt/bigru_luong.yaml
data=data
exp=exp/bigru_luong
beam=5
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"

. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
corpus="${1:-$corpus}"
[ $# -eq 0 ] || shift
no_arguments "$@"

if run 0; then
  echo "stage 0: prepare sentence pairs from ${corpus:-?}"
  if needed "$data"/test.jsonl "$data"; then
    [ -n "$corpus" ] || { echo "run.sh: give the tab-separated file: ./run.sh DATA_FILE" >&2; exit 2; }
    $aligner prepare parallel-text "$corpus" "$data"
  fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: translate the test split"
  out="$exp"/decode/test.hyp
  if needed "$out"; then
    mkdir -p "$exp"/decode
    $aligner translate --checkpoint "$exp" --beam "$beam" --in "$data"/test.jsonl > "$out".tmp
    mv "$out".tmp "$out"
    head -n 1 "$data"/test.jsonl > "$exp"/decode/first.jsonl
    $aligner translate --checkpoint "$exp" --beam "$beam" --in "$exp"/decode/first.jsonl \
      --alignment "$exp"/decode/first.png --force > /dev/null
  fi
fi

if run 3; then
  echo "stage 3: score (sacrebleu)"
  out="$exp"/score/test.txt
  if needed "$out"; then
    mkdir -p "$exp"/score
    $aligner score --task nmt --hyp "$exp"/decode/test.hyp --ref "$data"/test.jsonl > "$out".tmp
    mv "$out".tmp "$out"
  fi
  cat "$out"
fi
