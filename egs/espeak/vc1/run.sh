#!/usr/bin/env bash
# Sequence-to-sequence voice conversion on a parallel eSpeak NG voice pair (built in), scored
# as VC papers score it beside the source and a frame-wise baseline.
#
#   ./run.sh [--pair easy|accent] [--stage N] [--stop-stage M] [--utterances U] [--vocoder V]
#            [--voices "SRC TGT"] [--recipe YAML] [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--baseline-args "--max-minutes 10"]
#
# Pairs (the source is the same low, slow male voice; --voices overrides both):
#   easy    en-us+m3,rate=150,pitch=35 -> en-us+f2,rate=210,pitch=70: rate, pitch, timbre
#   accent  en-us+m3,rate=150,pitch=35 -> en-gb-x-rp+f2,rate=210,pitch=70: the same and a
#           British (RP) accent: other vowels, no rhotic r (about 14% of phones differ)
# Run it from its folder (data/PAIR/ and exp/PAIR/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak --parallel SRC TGT -> $data/{train,valid,test}.jsonl
#   1 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb
#   2 vocoder     aligner train $vocoder_recipe on the target voice -> $exp/vocoder (only
#                 with --vocoder train, the default; it takes 30 minutes on 2 CPU cores)
#   3 convert     aligner convert (test split) -> $exp/converted/*.wav
#   4 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, and
#                                                mapping_ms against both voices' timings)
#   5 score       aligner score --task vc     -> $exp/score/test.txt (MCD dB, F0, duration)
#   6 baseline    scripts/vc_baseline.py      -> $exp/baseline/model.pt, converted/ (the
#                                                frame-wise regression, source timing kept),
#                                                vocoded/ (the target's own mel: the floor)
#   7 evaluate    scripts/eval_vc.py          -> $exp/score/vc.md (source, baseline, seq2seq,
#                                                vocoded target)
# Every sound goes through one vocoder: --vocoder train (default), griffin-lim, hifigan:DIR,
# or a vocoder experiment folder or checkpoint.
# Environment: ALIGNER (the command, default aligner), PYTHON (runs scripts/, default
# python), ALIGNER_TRAIN_ARGS (extra `aligner train` arguments, e.g. "--set
# train.max_steps=2"), ALIGNER_BASELINE_ARGS (extra `vc_baseline.py train` arguments),
# ALIGNER_VOCODER_ARGS (extra `aligner train` arguments of the vocoder).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
pair=easy
utterances=1000
voices=""  # "SRC TGT"; empty: the pair's
recipe="$root"/recipes/vc/seq2seq_vc_lsa_small.yaml
data=""  # empty: data/$pair
exp=""   # empty: exp/$pair/seq2seq_vc_lsa_small
train_args="${ALIGNER_TRAIN_ARGS:-}"
baseline_args="${ALIGNER_BASELINE_ARGS:-}"
aligner="${ALIGNER:-aligner}"
vocoder=train   # train: $vocoder_recipe on the target voice (stage 2); or griffin-lim,
                # hifigan:DIR, or a vocoder experiment folder or checkpoint
vocoder_recipe="$root"/recipes/vocoder/vocos_small.yaml
vocoder_args="${ALIGNER_VOCODER_ARGS:-}"
python="${PYTHON:-python}"
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
. "$root/egs/tools/vc_stages.sh"
no_arguments "$@"

case $pair in
  easy) pair_voices="en-us+m3,rate=150,pitch=35 en-us+f2,rate=210,pitch=70" ;;
  accent) pair_voices="en-us+m3,rate=150,pitch=35 en-gb-x-rp+f2,rate=210,pitch=70" ;;
  *) echo "run.sh: --pair $pair: use easy or accent" >&2; exit 2 ;;
esac
voices=${voices:-$pair_voices}
data=${data:-data/$pair}
exp=${exp:-exp/$pair/seq2seq_vc_lsa_small}

if run 0; then
  echo "stage 0: prepare the parallel eSpeak NG corpus ($pair: $voices; $utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then
    # shellcheck disable=SC2086
    $aligner prepare espeak "$data" --utterances "$utterances" --parallel $voices
  fi
fi

if run 1; then train_stage; fi

if run 2; then vocoder_stage 2; fi
if run 3; then vc_convert_stage 3; fi
if run 4; then align_stage 4; fi
if run 5; then vc_score_stage 5; fi
if run 6; then vc_baseline_stage 6; fi
if run 7; then vc_evaluate_stage 7; fi
