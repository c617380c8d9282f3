#!/usr/bin/env bash
# The alignment model on the second reference corpus: natural English sentences spoken by
# Festival's voices (Debian: festival festlex-cmu festvox-us-slt-hts festvox-kallpc16k
# festvox-kdlpc16k fortunes), scored against Festival's own word and segment times. The
# same recipe as on eSpeak NG (egs/espeak/align1); ARPAbet tokens by default, the phones of
# Festival's lexicon, so that phone boundaries pair with the reference.
#
#   ./run.sh [--stage N] [--stop-stage M] [--utterances U] [--voices "V1 V2"]
#            [--tokenizer arpabet|phonemes] [--recipe YAML] [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=10"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare  aligner prepare festival    -> data/{train,valid,test}.jsonl, textgrids/
#   1 train    aligner train (task align)  -> $exp/checkpoints/*.pt, $exp/tb
#   3 align    aligner align (test split)  -> $exp/align/: ID.durations.json, ID.TextGrid, ...
#   4 score    aligner score-alignment     -> $exp/score/alignment.json (ms against Festival)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
voices="cmu_us_slt_arctic_hts kal_diphone ked_diphone"
tokenizer=arpabet
recipe="$root"/recipes/align/aligner.yaml
data=data
exp=exp/aligner_festival
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"
train_args="--set data.tokenizer=$tokenizer $train_args"

if run 0; then
  echo "stage 0: prepare the Festival corpus ($utterances utterances: $voices)"
  voice_args=()
  for v in $voices; do voice_args+=(--voices "$v"); done
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare festival "$data" --utterances "$utterances" "${voice_args[@]}"
  fi
fi

if run 1; then train_stage; fi

if run 3; then align_stage; fi

if run 4; then score_alignment_stage; fi
