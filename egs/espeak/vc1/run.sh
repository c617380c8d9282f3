#!/usr/bin/env bash
# Voice conversion on a parallel eSpeak NG voice pair (built in), scored as VC papers score
# it beside the source and a frame-wise baseline trained for the same minutes.
#
#   ./run.sh [--pair easy|accent] [--model fastvc|tacotron] [--minutes 30] [--average 5] [--stage N]
#            [--stop-stage M] [--utterances U] [--vocoder V] [--voices "SRC TGT"]
#            [--recipe YAML] [--data DIR] [--exp DIR] [--train-args "--set ..."]
#            [--baseline-args ARGS] [--guide durations|diagonal] [--align-args ARGS]
#            [--vocoder-recipe YAML] [--vocoder-args "--set train.max_minutes=15"]
#            [--judge-args "--set train.max_minutes=10"]
#            [--pretrain none|tts] [--pretrain-minutes 15] [--pretrain-args ARGS]
#
# Pairs (the source is the same low, slow male voice; --voices overrides both):
#   easy    en-us+m3,rate=150,pitch=35 -> en-us+f2,rate=210,pitch=70: rate, pitch, timbre
#   accent  en-us+m3,rate=150,pitch=35 -> en-gb-x-rp+f2,rate=210,pitch=70: the same and a
#           British (RP) accent: other vowels, no rhotic r (about 14% of phones differ)
# Models: fastvc (default; recipes/vc/fastvc_small.yaml: non-autoregressive, trained on the
# durations of both voices) or tacotron (recipes/vc/seq2seq_vc_lsa_small.yaml: attention,
# guided by them). --minutes: the minutes of stage 2 and of the baseline (30; 0: the
# recipe's steps and the baseline's 30 epochs). --average K: stages 4 and 5 use the mean of
# the run's last K checkpoints, $exp/avg.pt (5; 1: its best.pt by the validation loss).
# Run it from its folder (data/PAIR/ and exp/PAIR/MODEL_RECIPE/ are written under it).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare espeak --parallel SRC TGT -> $data/{train,valid,test}.jsonl
#   1 durations   aligner train $align_recipe on both voices -> $align_exp, then aligner
#                 align of each voice (train, valid) -> $data/durations/{source,target}/
#                 (--guide diagonal, tacotron only: skipped)
#   2 train       aligner train $recipe        -> $exp/checkpoints/*.pt, $exp/tb (with
#                 --pretrain tts first a FastPitch of the target voice at the FastVC's
#                 sizes, --pretrain-minutes -> $exp/target_tts, whose decoder and
#                 projection (and postnet, where it has one) start the FastVC;
#                 scripts/voice_manifest.py writes its $data/target_{train,valid}.jsonl)
#   3 vocoder     aligner train $vocoder_recipe on the target voice -> $exp/vocoder (only
#                 with --vocoder train, the default; 20-30 minutes on 2 CPU cores)
#   4 convert     aligner average (the last --average checkpoints) -> $exp/avg.pt, then
#                 aligner convert (test split) -> $exp/converted/*.wav
#   5 align       aligner align (test split)  -> $exp/align/summary.json (mapping_ms against
#                                                both voices' timings)
#   6 score       aligner score --task vc     -> $exp/score/test.txt (MCD dB, F0, duration)
#   7 baseline    scripts/vc_baseline.py      -> $exp/baseline/model.pt, converted/ (the
#                                                frame-wise regression, source timing kept),
#                                                vocoded/ (the target's own mel: the floor)
#   8 judge       aligner train $judge_recipe on both voices -> $exp/recognizer (a CTC phone
#                                                recognizer: the intelligibility judge)
#   9 evaluate    scripts/eval_vc.py          -> $exp/score/vc.md (source, baseline, model,
#                                                vocoded target: MCD, F0, duration, PER)
# Every sound goes through one vocoder: --vocoder train (default), griffin-lim, hifigan:DIR,
# or a vocoder experiment folder or checkpoint.
# Environment: ALIGNER (the command, default aligner), PYTHON (runs scripts/, default
# python), ALIGNER_TRAIN_ARGS (extra `aligner train` arguments, e.g. "--set
# train.max_steps=2"), ALIGNER_BASELINE_ARGS (extra `vc_baseline.py train` arguments),
# ALIGNER_VOCODER_ARGS, ALIGNER_ALIGN_ARGS, ALIGNER_JUDGE_ARGS and ALIGNER_PRETRAIN_ARGS
# (extra `aligner train` arguments of the vocoder, the alignment model, the recognizer and
# the target voice's FastPitch).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
pair=easy
utterances=1000
voices=""  # "SRC TGT"; empty: the pair's
data=""  # empty: data/$pair
exp=""   # empty: exp/$pair/RECIPE (fastvc_small, seq2seq_vc_lsa_small)
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
vc_model_option small "exp/$pair"

if run 0; then
  echo "stage 0: prepare the parallel eSpeak NG corpus ($pair: $voices; $utterances utterances)"
  if needed "$data"/test.jsonl "$data"; then
    # shellcheck disable=SC2086
    $aligner prepare espeak "$data" --utterances "$utterances" --parallel $voices
  fi
fi

vc_stages
