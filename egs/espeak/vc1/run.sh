#!/usr/bin/env bash
# Sequence-to-sequence voice conversion on a parallel eSpeak NG voice pair (built in), scored
# as VC papers score it beside the source and a frame-wise baseline.
#
#   ./run.sh [--pair easy|accent] [--stage N] [--stop-stage M] [--utterances U] [--vocoder V]
#            [--voices "SRC TGT"] [--recipe YAML] [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--baseline-args "--max-minutes 10"]
#            [--guide diagonal|durations] [--align-args ARGS] [--vocoder-recipe YAML]
#            [--vocoder-args "--set train.max_minutes=15"]
#
# Pairs (the source is the same low, slow male voice; --voices overrides both):
#   easy    en-us+m3,rate=150,pitch=35 -> en-us+f2,rate=210,pitch=70: rate, pitch, timbre
#   accent  en-us+m3,rate=150,pitch=35 -> en-gb-x-rp+f2,rate=210,pitch=70: the same and a
#           British (RP) accent: other vowels, no rhotic r (about 14% of phones differ)
# Run it from its folder (data/PAIR/ and exp/PAIR/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak --parallel SRC TGT -> $data/{train,valid,test}.jsonl
#   1 durations   aligner train $align_recipe on both voices -> $align_exp, then aligner
#                 align of each voice (train, valid) -> $data/durations/{source,target}/
#                 (with --guide durations, the default; --guide diagonal skips it)
#   2 train       aligner train               -> $exp/checkpoints/*.pt, $exp/tb; with --guide
#                                                durations the attention is guided by stage 1
#   3 vocoder     aligner train $vocoder_recipe on the target voice -> $exp/vocoder (only
#                 with --vocoder train, the default; it takes 30 minutes on 2 CPU cores)
#   4 convert     aligner convert (test split) -> $exp/converted/*.wav
#   5 align       aligner align (test split)  -> $exp/align/summary.json (focus, skips, and
#                                                mapping_ms against both voices' timings)
#   6 score       aligner score --task vc     -> $exp/score/test.txt (MCD dB, F0, duration)
#   7 baseline    scripts/vc_baseline.py      -> $exp/baseline/model.pt, converted/ (the
#                                                frame-wise regression, source timing kept),
#                                                vocoded/ (the target's own mel: the floor)
#   8 evaluate    scripts/eval_vc.py          -> $exp/score/vc.md (source, baseline, seq2seq,
#                                                vocoded target)
# Every sound goes through one vocoder: --vocoder train (default), griffin-lim, hifigan:DIR,
# or a vocoder experiment folder or checkpoint.
# Environment: ALIGNER (the command, default aligner), PYTHON (runs scripts/, default
# python), ALIGNER_TRAIN_ARGS (extra `aligner train` arguments, e.g. "--set
# train.max_steps=2"), ALIGNER_BASELINE_ARGS (extra `vc_baseline.py train` arguments),
# ALIGNER_VOCODER_ARGS and ALIGNER_ALIGN_ARGS (extra `aligner train` arguments of the
# vocoder and of the alignment model).
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
. "$root/egs/tools/vc_defaults.sh"
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
align_exp=${align_exp:-$exp/aligner}
vc_guide_option

if run 0; then
  echo "stage 0: prepare the parallel eSpeak NG corpus ($pair: $voices; $utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then
    # shellcheck disable=SC2086
    $aligner prepare espeak "$data" --utterances "$utterances" --parallel $voices
  fi
fi

vc_stages
