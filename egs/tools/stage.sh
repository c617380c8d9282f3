# Sourced by egs/*/run.sh: stage selection and the steps every recipe shares.
# Uses the script's variables stage, stop_stage, aligner, recipe, data, exp, train_args.
# A command's --checkpoint takes the experiment folder itself: aligner picks its best.pt,
# else its latest checkpoint (aligner.checkpoint.checkpoint_file).

# run N: true when stage N lies in --stage .. --stop-stage.
run() { [ "$stage" -le "$1" ] && [ "$stop_stage" -ge "$1" ]; }

# needed FILE [NAME]: true when FILE is missing; else says "NAME exists, skipped".
needed() {
  if [ -f "$1" ]; then echo "  ${2:-$1} exists, skipped"; return 1; fi
}

# train_stage [N]: aligner train $recipe, resuming an interrupted run; $exp/.done marks the end.
train_stage() {
  echo "stage ${1:-1}: train $recipe"
  if [ -f "$exp"/.done ]; then echo "  $exp is trained, skipped (delete $exp/.done to train on)"
    return 0
  fi
  # --resume continues from the latest checkpoint, or starts at step 0 when there is none
  # shellcheck disable=SC2086
  $aligner train "$recipe" --data "$data" --out "$exp" --resume $train_args
  touch "$exp"/.done
}

# no_arguments "$@": refuse positional arguments (scripts that read no corpus folder).
no_arguments() {
  [ $# -eq 0 ] || { echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2; }
}

# synthesize_stage N TEXT: aligner synthesize of TEXT (a sentence a line) with $vocoder ->
# $exp/synth/sentences.wav and its alignment panels (sentences.png).
synthesize_stage() {
  echo "stage $1: synthesize $(basename "$2")"
  local out="$exp"/synth/sentences.wav
  if needed "$out"; then
    $aligner synthesize --checkpoint "$exp" --vocoder "$vocoder" --in "$2" --out "$out" \
      --alignment "$exp"/synth/sentences.png
  fi
}

# align_stage [N]: aligner align on the test split -> $exp/align/summary.json (focus, skips, repeats).
align_stage() {
  echo "stage ${1:-3}: align the test split"
  if needed "$exp"/align/summary.json "$exp"/align; then
    $aligner align --checkpoint "$exp" --in "$data"/test.jsonl --out "$exp"/align
  fi
}

# vc_score_stage [N]: aligner score on the converted test split -> $exp/score/test.txt (MCD).
vc_score_stage() {
  echo "stage ${1:-4}: score the converted test split (mel-cepstral distortion)"
  if needed "$exp"/score/test.txt; then
    mkdir -p "$exp"/score
    $aligner score --task vc --hyp "$exp"/converted/manifest.jsonl > "$exp"/score/test.txt.tmp
    mv "$exp"/score/test.txt.tmp "$exp"/score/test.txt; cat "$exp"/score/test.txt
  fi
}

# score_alignment_stage [N]: aligner score-alignment of $exp/align against the test split's
# reference timings -> $exp/score/alignment.json (word and phone boundary errors in ms).
score_alignment_stage() {
  echo "stage ${1:-4}: score the test split's alignments against the reference timings"
  if needed "$exp"/score/alignment.json; then
    $aligner score-alignment --reference "$data"/test.jsonl --predicted "$exp"/align \
      --out "$exp"/score/alignment.json
  fi
}

# durations_stage N: the alignment model ($align_recipe, extra arguments $align_args) trained
# on $data -> $align_exp, then its durations of the train and valid splits ->
# $data/durations/{train,valid}/ID.durations.json: what --guide durations guides the
# attention with (the guided recipe reads them).
durations_stage() {
  echo "stage $1: the alignment model's durations of the train and valid splits"
  if [ -f "$align_exp"/.done ]; then echo "  $align_exp is trained, skipped"
  else
    # shellcheck disable=SC2086
    $aligner train "$align_recipe" --data "$data" --out "$align_exp" --resume $align_args
    touch "$align_exp"/.done
  fi
  local split
  for split in train valid; do
    if needed "$data"/durations/$split/summary.json "$data"/durations/$split; then
      # an item it cannot align is named and counted (exit status 1): it trains with the
      # diagonal guide; no summary means the command itself failed
      $aligner align --checkpoint "$align_exp" --in "$data"/$split.jsonl \
        --out "$data"/durations/$split --no-png --force || [ -f "$data"/durations/$split/summary.json ]
    fi
  done
}

