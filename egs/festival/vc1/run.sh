#!/usr/bin/env bash
# Voice conversion between two of Festival's voices (Debian: festival
# festlex-cmu festvox-us-slt-hts festvox-kallpc16k festvox-kdlpc16k fortunes) reading the
# same natural sentences, scored against both voices' own word and segment times: a second
# pair beside egs/espeak/vc1, of other synthesizers (slt: HTS, a female US voice; kal: a
# diphone male US voice) and sample rates (48 and 16 kHz, read at the recipe's).
#
#   ./run.sh [--voices "SRC TGT"] [--model fastvc|tacotron] [--minutes 30] [--average 5] [--stage N]
#            [--stop-stage M] [--utterances U] [--tokenizer arpabet|phonemes] [--vocoder V]
#            [--recipe YAML] [--data DIR] [--exp DIR] [--train-args "--set ..."]
#            [--guide durations|diagonal] [--align-args ARGS] [--baseline-args ARGS]
#            [--vocoder-recipe YAML] [--vocoder-args "--set train.max_minutes=15"]
#            [--judge-args ARGS] [--pretrain none|tts] [--pretrain-minutes 15]
#
# Run it from its folder (data/ and exp/MODEL_RECIPE/ are written under the current folder).
# Stages: 0 prepare (aligner prepare festival --parallel SRC TGT), then those of
# egs/espeak/vc1 (1 the alignment model on both voices, ARPAbet tokens by default, and its
# durations; 2 train; 3 vocoder; 4 convert with the mean of the last --average checkpoints;
# 5 align: mapping_ms against both voices' Festival timings; 6 score; 7 baseline; 8 judge:
# the phone recognizer, ARPAbet too; 9 evaluate), with its options (--model, --minutes,
# --average, ...). Minutes: in the default 30 the recipe's FastVC is below the frame-wise
# baseline on slt -> kal (RESULTS.md); more minutes: --minutes.
# Environment: as egs/espeak/vc1 (ALIGNER, PYTHON, ALIGNER_TRAIN_ARGS, ALIGNER_ALIGN_ARGS,
# ALIGNER_VOCODER_ARGS, ALIGNER_BASELINE_ARGS, ALIGNER_JUDGE_ARGS, ALIGNER_PRETRAIN_ARGS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
utterances=1000
voices="cmu_us_slt_arctic_hts kal_diphone"
tokenizer=arpabet
data=data
exp=""  # empty: exp/RECIPE (fastvc_small, seq2seq_vc_lsa_small)
. "$root/egs/tools/vc_defaults.sh"
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
. "$root/egs/tools/vc_stages.sh"
no_arguments "$@"

read -r -a pair <<< "$voices"
[ ${#pair[@]} -eq 2 ] || { echo "run.sh: --voices \"$voices\": give two voices, \"SRC TGT\"" >&2; exit 2; }
vc_model_option small exp
align_args="--set data.tokenizer=$tokenizer $align_args"
judge_args="--set data.tokenizer=$tokenizer $judge_args"
pretrain_args="--set data.tokenizer=$tokenizer $pretrain_args"

if run 0; then
  echo "stage 0: prepare the parallel Festival corpus ($voices; $utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare festival "$data" --utterances "$utterances" --parallel "${pair[@]}"
  fi
fi

vc_stages
