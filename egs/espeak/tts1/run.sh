#!/usr/bin/env bash
# Tacotron TTS on the built-in eSpeak NG corpus (generated offline, no download).
#
#   ./run.sh [--stage N] [--stop-stage M] [--utterances U] [--recipe YAML] [--vocoder V]
#            [--guide durations|diagonal] [--model tacotron|fastpitch] [--data DIR] [--exp DIR]
#            [--align-exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--align-args "--set train.max_minutes=5"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak      -> data/{train,valid,test}.jsonl
#   1 durations   aligner train $align_recipe -> $align_exp (the alignment model), then
#                 aligner align (train, valid) -> data/durations/{train,valid}/ (only with
#                                                --guide durations, the default)
#   2 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb; with --guide
#                                                durations the attention is guided by the
#                                                durations of stage 1, else by the diagonal;
#                                                --model fastpitch trains a FastPitch on them
#                                                instead (recipes/tts/fastpitch_small.yaml,
#                                                exp/fastpitch_small), stages 3-5 the same
#   3 synthesize  aligner synthesize          -> $exp/synth/sentences.wav (+ alignment PNG)
#   4 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, repeats)
#   5 score       aligner score-alignment     -> $exp/score/alignment.json (word and phone
#                                                boundary errors in ms against eSpeak's timings)
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments, e.g. "--set train.max_steps=2"), ALIGNER_ALIGN_ARGS (the same for the
# alignment model).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
recipe=   # default: the guide's recipe, as `aligner demo` trains it
data=data
exp=      # default: exp/tacotron_forward_small, or exp/fastpitch_small
guide=durations   # or diagonal (the guided attention loss's own band, no alignment model)
model=tacotron    # or fastpitch: a duration model trained on the durations of stage 1
align_recipe="$root"/recipes/align/aligner.yaml
align_exp=exp/aligner
align_args="${ALIGNER_ALIGN_ARGS:-}"
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"
case $model in
  tacotron) exp=${exp:-exp/tacotron_forward_small} ;;
  fastpitch)
    [ "$guide" = durations ] || { echo "run.sh: --model fastpitch learns from durations: use --guide durations" >&2; exit 2; }
    recipe=${recipe:-"$root"/recipes/tts/fastpitch_small.yaml}; exp=${exp:-exp/fastpitch_small} ;;
  *) echo "run.sh: --model $model: use tacotron or fastpitch" >&2; exit 2 ;;
esac
case $guide in
  durations) recipe=${recipe:-"$root"/recipes/tts/tacotron_forward_small_guided.yaml} ;;
  diagonal) recipe=${recipe:-"$root"/recipes/tts/tacotron_forward_small.yaml} ;;
  *) echo "run.sh: --guide $guide: use durations or diagonal" >&2; exit 2 ;;
esac

if run 0; then
  echo "stage 0: prepare the eSpeak NG corpus ($utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare espeak "$data" --utterances "$utterances"; fi
fi

if run 1; then
  if [ "$guide" = durations ]; then durations_stage 1
  else echo "stage 1: --guide diagonal: no alignment model needed"; fi
fi

if run 2; then train_stage 2; fi

if run 3; then synthesize_stage 3 "$here"/sentences.txt; fi

if run 4; then align_stage 4; fi

if run 5; then score_alignment_stage 5; fi
