#!/usr/bin/env bash
# Tacotron TTS on LJSpeech-1.1 read from a local folder (metadata.csv + wavs/).
#
#   ./run.sh DATA_DIR [--stage N] [--stop-stage M] [--recipe YAML] [--vocoder V]
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
# train` arguments, e.g. "--set train.max_steps=2").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
recipe="$root"/recipes/tts/tacotron_lsa.yaml
data=data
exp=exp/tacotron_lsa
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
corpus="${1:-}"
[ -n "$corpus" ] || { echo "run.sh: give the LJSpeech-1.1 folder: ./run.sh DATA_DIR" >&2; exit 2; }
shift; no_arguments "$@"

if run 0; then
  echo "stage 0: prepare LJSpeech from $corpus"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare ljspeech "$corpus" "$data"; fi
fi

if run 1; then train_stage; fi

if run 2; then
  echo "stage 2: synthesize ../../espeak/tts1/sentences.txt"
  out="$exp"/synth/sentences.wav
  if needed "$out"; then
    $aligner synthesize --checkpoint "$exp" --vocoder "$vocoder" --in "$root"/egs/espeak/tts1/sentences.txt \
      --out "$out" --alignment "$exp"/synth/sentences.png
  fi
fi

if run 3; then align_stage; fi
