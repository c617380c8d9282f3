#!/usr/bin/env bash
# The alignment model (forward-sum + prior + binarization, hard durations by monotonic
# alignment search) on the built-in eSpeak NG corpus, scored against eSpeak's own timings.
#
#   ./run.sh [--stage N] [--stop-stage M] [--utterances U] [--recipe YAML]
#            [--data DIR] [--exp DIR] [--train-args "--set train.max_minutes=10"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare  aligner prepare espeak      -> data/{train,valid,test}.jsonl
#   1 train    aligner train (task align)  -> $exp/checkpoints/*.pt, $exp/tb
#   3 align    aligner align (test split)  -> $exp/align/: ID.durations.json, ID.TextGrid,
#                                             durations/ID.npy (FastSpeech-style), summary.json
#   4 score    aligner score-alignment     -> $exp/score/alignment.json (word and phone
#                                             boundary errors in ms against eSpeak's timings)
# (No stage 2: an alignment model does not synthesize.)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
recipe="$root"/recipes/align/aligner.yaml
data=data
exp=exp/aligner_espeak
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"

if run 0; then
  echo "stage 0: prepare the eSpeak NG corpus ($utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare espeak "$data" --utterances "$utterances"; fi
fi

if run 1; then train_stage; fi

if run 3; then align_stage; fi

if run 4; then score_alignment_stage; fi
