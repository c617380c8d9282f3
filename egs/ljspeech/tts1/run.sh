#!/usr/bin/env bash
# TTS on LJSpeech-1.1 read from a local folder (metadata.csv + wavs/): Tacotron 2 (the
# default) or FastPitch on the durations of the toolkit's alignment model (--model
# fastpitch), both at their full, GPU sizes.
#
#   ./run.sh DATA_DIR [--stage N] [--stop-stage M] [--model tacotron|fastpitch]
#            [--recipe YAML] [--vocoder V] [--data DIR] [--exp DIR] [--align-exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--align-args "--set train.max_steps=3000"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare ljspeech    -> data/{train,valid,test}.jsonl
#   1 durations   aligner train $align_recipe -> $align_exp (the alignment model), then
#                 aligner align (train, valid) -> data/durations/{train,valid}/ (--model
#                                                fastpitch only: the Tacotron learns its own
#                                                alignment)
#   2 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#                                                (recipes/tts/tacotron_lsa.yaml, exp/tacotron_lsa;
#                                                or recipes/tts/fastpitch.yaml, exp/fastpitch)
#   3 synthesize  aligner synthesize          -> $exp/synth/sentences.wav (+ alignment PNG)
#   4 align       aligner align (test split)  -> $exp/align/summary.json (the Tacotron's
#                                                focus, skips, repeats; FastPitch's own timing)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2"), ALIGNER_ALIGN_ARGS (the same for the
# alignment model).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
model=tacotron   # or fastpitch: a duration model trained on the durations of stage 1
recipe=
data=data
exp=
align_recipe="$root"/recipes/align/aligner.yaml
align_exp=exp/aligner
align_args="${ALIGNER_ALIGN_ARGS:-}"
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
corpus="${1:-}"
[ -n "$corpus" ] || { echo "run.sh: give the LJSpeech-1.1 folder: ./run.sh DATA_DIR" >&2; exit 2; }
shift; no_arguments "$@"
case $model in
  tacotron) recipe=${recipe:-"$root"/recipes/tts/tacotron_lsa.yaml}; exp=${exp:-exp/tacotron_lsa} ;;
  fastpitch) recipe=${recipe:-"$root"/recipes/tts/fastpitch.yaml}; exp=${exp:-exp/fastpitch} ;;
  *) echo "run.sh: --model $model: use tacotron or fastpitch" >&2; exit 2 ;;
esac

if run 0; then
  echo "stage 0: prepare LJSpeech from $corpus"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare ljspeech "$corpus" "$data"; fi
fi

if run 1; then
  if [ "$model" = fastpitch ]; then durations_stage 1
  else echo "stage 1: the Tacotron learns its own alignment: no alignment model needed"; fi
fi

if run 2; then train_stage 2; fi

if run 3; then synthesize_stage 3 "$root"/egs/espeak/tts1/sentences.txt; fi

if run 4; then align_stage 4; fi
