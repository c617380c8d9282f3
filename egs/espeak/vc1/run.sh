#!/usr/bin/env bash
# Sequence-to-sequence voice conversion on a parallel eSpeak NG voice pair (built in).
#
#   ./run.sh [--stage N] [--stop-stage M] [--utterances U] [--voices "SRC TGT"] [--recipe YAML]
#            [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak --parallel SRC TGT -> data/{train,valid,test}.jsonl
#   1 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#   2 convert     aligner convert (test split) -> $exp/converted/*.wav
#   3 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
#   4 score       aligner score --task vc     -> $exp/score/test.txt (mel-cepstral distortion, dB)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
voices="en-us+m3,rate=150,pitch=35 en-gb+f2,rate=210,pitch=70"  # SRC TGT: pitch, timbre, rate differ
recipe=$root/recipes/vc/seq2seq_vc_lsa_small.yaml
data=data
exp=exp/seq2seq_vc_lsa_small
train_args=${ALIGNER_TRAIN_ARGS:-}
aligner=${ALIGNER:-aligner}
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"

if run 0; then
  echo "stage 0: prepare the parallel eSpeak NG corpus ($utterances utterances)"
  if needed $data/test.jsonl $data; then
    # shellcheck disable=SC2086
    $aligner prepare espeak $data --utterances "$utterances" --parallel $voices
  fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: convert the test split"
  if needed $exp/converted/manifest.jsonl $exp/converted; then
    $aligner convert --checkpoint "$(checkpoint)" --in $data/test.jsonl --out $exp/converted
  fi
fi

if run 3; then align_stage; fi
if run 4; then vc_score_stage; fi
