#!/usr/bin/env bash
# Tacotron TTS on the built-in eSpeak NG corpus (generated offline, no download).
#
#   ./run.sh [--stage N] [--stop-stage M] [--utterances U] [--recipe YAML] [--vocoder V]
#            [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak      -> data/{train,valid,test}.jsonl
#   1 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#   2 synthesize  aligner synthesize          -> $exp/synth/sentences.wav (+ alignment PNG)
#   3 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
#   4 score       aligner score-alignment     -> $exp/score/alignment.json (word and phone
#                                                boundary errors in ms against eSpeak's timings)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
recipe="$root"/recipes/tts/tacotron_dca_small.yaml
data=data
exp=exp/tacotron_dca_small
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"

if run 0; then
  echo "stage 0: prepare the eSpeak NG corpus ($utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare espeak "$data" --utterances "$utterances"; fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: synthesize sentences.txt"
  out="$exp"/synth/sentences.wav
  if needed "$out"; then
    $aligner synthesize --checkpoint "$exp" --vocoder "$vocoder" --in "$here"/sentences.txt --out "$out" \
      --alignment "$exp"/synth/sentences.png
  fi
fi

if run 3; then align_stage; fi

if run 4; then score_alignment_stage; fi
