#!/usr/bin/env bash
# Tacotron TTS on LJSpeech-1.1 read from a local folder (metadata.csv + wavs/).
#
#   ./run.sh DATA_DIR [--stage N] [--stop-stage M] [--recipe YAML]
#            [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare ljspeech    -> data/{train,valid,test}.jsonl
#   1 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#   2 synthesize  aligner synthesize          -> $exp/synth/sentences.wav (+ alignment PNG)
#   3 score       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2"), PYTHON (for scripts/, default python).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
corpus=
recipe=$root/recipes/tts/tacotron_lsa.yaml
data=data
exp=exp/tacotron_lsa
train_args=${ALIGNER_TRAIN_ARGS:-}
aligner=${ALIGNER:-aligner}

while [ $# -gt 0 ]; do
  case $1 in
    --stage) stage=$2; shift 2 ;;
    --stop-stage) stop_stage=$2; shift 2 ;;
    --recipe) recipe=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --exp) exp=$2; shift 2 ;;
    --train-args) train_args=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$here/run.sh"; exit 0 ;;
    -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) corpus=$1; shift ;;
  esac
done
[ -n "$corpus" ] || { echo "run.sh: give the LJSpeech-1.1 folder: ./run.sh DATA_DIR" >&2; exit 2; }
run() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }
# best.pt (lowest validation loss) when validation ran, else the latest checkpoint
checkpoint() {
  if [ -f $exp/checkpoints/best.pt ]; then echo $exp/checkpoints/best.pt
  else ls $exp/checkpoints/ckpt-*.pt | tail -n 1; fi
}

if run 0; then
  echo "stage 0: prepare LJSpeech from $corpus"
  if [ -f $data/test.jsonl ]; then echo "  $data exists, skipped"
  else $aligner prepare ljspeech "$corpus" $data; fi
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
  echo "stage 2: synthesize ../../espeak/tts1/sentences.txt"
  out=$exp/synth/sentences.wav
  if [ -f $out ]; then echo "  $out exists, skipped"
  else $aligner synthesize --checkpoint "$(checkpoint)" --text-file $root/egs/espeak/tts1/sentences.txt --out $out \
         --alignment $exp/synth/sentences.png; fi
fi

if run 3; then
  echo "stage 3: score the alignments of the test split"
  if [ -f $exp/align/summary.json ]; then echo "  $exp/align exists, skipped"
  else $aligner align --checkpoint "$(checkpoint)" --manifest $data/test.jsonl --out $exp/align; fi
fi
