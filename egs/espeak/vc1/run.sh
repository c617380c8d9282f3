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
#   3 score       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
#                 scripts/eval_vc.py          -> $exp/mcd.txt (mel-cepstral distortion, dB)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2"), PYTHON (for scripts/, default python).
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

while [ $# -gt 0 ]; do
  case $1 in
    --stage) stage=$2; shift 2 ;;
    --stop-stage) stop_stage=$2; shift 2 ;;
    --utterances) utterances=$2; shift 2 ;;
    --voices) voices=$2; shift 2 ;;
    --recipe) recipe=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --exp) exp=$2; shift 2 ;;
    --train-args) train_args=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$here/run.sh"; exit 0 ;;
    *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
run() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }
# best.pt (lowest validation loss) when validation ran, else the latest checkpoint
checkpoint() {
  if [ -f $exp/checkpoints/best.pt ]; then echo $exp/checkpoints/best.pt
  else ls $exp/checkpoints/ckpt-*.pt | tail -n 1; fi
}

if run 0; then
  echo "stage 0: prepare the parallel eSpeak NG corpus ($utterances utterances)"
  if [ -f $data/test.jsonl ]; then echo "  $data exists, skipped"
  else
    # shellcheck disable=SC2086
    $aligner prepare espeak $data --utterances "$utterances" --parallel $voices
  fi
fi

if run 1; then
  echo "stage 1: train $recipe"
  if [ -f $exp/.done ]; then echo "  $exp is trained, skipped (delete $exp/.done to train on)"
  else
    resume=""; [ -n "$(ls $exp/checkpoints/ckpt-*.pt 2>/dev/null)" ] && resume=--resume
    # shellcheck disable=SC2086
    $aligner train "$recipe" --data $data --out $exp $resume $train_args
    touch $exp/.done
  fi
fi

if run 2; then
  echo "stage 2: convert the test split"
  if [ -f $exp/converted/manifest.jsonl ]; then echo "  $exp/converted exists, skipped"
  else $aligner convert --checkpoint "$(checkpoint)" --in $data/test.jsonl --out $exp/converted; fi
fi

if run 3; then
  echo "stage 3: score the alignments of the test split"
  if [ -f $exp/align/summary.json ]; then echo "  $exp/align exists, skipped"
  else $aligner align --checkpoint "$(checkpoint)" --manifest $data/test.jsonl --out $exp/align; fi
  if [ -f $exp/mcd.txt ]; then echo "  $exp/mcd.txt exists, skipped"
  else ${PYTHON:-python} $root/scripts/eval_vc.py --checkpoint "$(checkpoint)" --data $data --manifest test.jsonl > $exp/mcd.txt.tmp
    mv $exp/mcd.txt.tmp $exp/mcd.txt; cat $exp/mcd.txt; fi
fi
