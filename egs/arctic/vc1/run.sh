#!/usr/bin/env bash
# Sequence-to-sequence voice conversion on CMU ARCTIC (local speaker folders, bdl -> slt).
#
#   ./run.sh DATA_DIR [--stage N] [--stop-stage M] [--source bdl] [--target slt] [--recipe YAML] [--vocoder V]
#            [--guide diagonal|durations] [--vocoder-recipe YAML] [--vocoder-args "--set train.max_minutes=15"] [--data DIR] [--exp DIR]
#            [--train-args "--set train.max_minutes=20"] [--baseline-args "--max-minutes 10"]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare arctic      -> data/{train,valid,test}.jsonl
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
source=bdl
target=slt
recipe="$root"/recipes/vc/seq2seq_vc_lsa.yaml
data=data
exp=exp/seq2seq_vc_lsa
. "$root/egs/tools/vc_defaults.sh"
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
. "$root/egs/tools/vc_stages.sh"
corpus=${1:-}
[ -n "$corpus" ] || { echo "run.sh: give the CMU ARCTIC folder: ./run.sh DATA_DIR" >&2; exit 2; }
shift; no_arguments "$@"
align_exp=${align_exp:-$exp/aligner}
vc_guide_option

if run 0; then
  echo "stage 0: prepare CMU ARCTIC $source -> $target from $corpus"
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare arctic "$corpus" "$data" --source "$source" --target "$target"
  fi
fi

vc_stages
