# Sourced by egs/*/vc1/run.sh after stage.sh: the frame-wise baseline and the evaluation
# table. Uses the script's variables root, python, data, exp, baseline_args.

# vc_baseline_stage: train the frame-wise baseline on $data and convert the test split;
# vocode the test split's targets through the same log-mel and Griffin-Lim (the floor of
# any mel conversion) -> $exp/baseline/model.pt, $exp/baseline/{converted,vocoded}/.
vc_baseline_stage() {
  echo "stage 5: the frame-wise baseline (DTW-paired regression, Griffin-Lim)"
  if needed "$exp"/baseline/model.pt; then
    # shellcheck disable=SC2086
    $python "$root"/scripts/vc_baseline.py train --data "$data" --out "$exp"/baseline/model.pt \
      $baseline_args
  fi
  if needed "$exp"/baseline/converted/manifest.jsonl "$exp"/baseline/converted; then
    $python "$root"/scripts/vc_baseline.py convert --model "$exp"/baseline/model.pt \
      --in "$data"/test.jsonl --out "$exp"/baseline/converted
  fi
  if needed "$exp"/baseline/vocoded/manifest.jsonl "$exp"/baseline/vocoded; then
    $python "$root"/scripts/vc_baseline.py vocode --model "$exp"/baseline/model.pt \
      --in "$data"/test.jsonl --out "$exp"/baseline/vocoded
  fi
}

# vc_evaluate_stage: MCD, F0, duration and mapping errors of the source, the baseline, the
# seq2seq model and the vocoded targets on the test split -> $exp/score/vc.md (table),
# $exp/score/vc.json.
vc_evaluate_stage() {
  echo "stage 6: evaluate source, baseline and seq2seq against the target voice"
  if needed "$exp"/score/vc.md; then
    mkdir -p "$exp"/score
    $python "$root"/scripts/eval_vc.py --system seq2seq="$exp"/converted/manifest.jsonl \
      --system baseline="$exp"/baseline/converted/manifest.jsonl \
      --system vocoded-target="$exp"/baseline/vocoded/manifest.jsonl \
      --alignment seq2seq="$exp"/align/summary.json --alignment baseline=source \
      --json "$exp"/score/vc.json > "$exp"/score/vc.md.tmp
    mv "$exp"/score/vc.md.tmp "$exp"/score/vc.md; cat "$exp"/score/vc.md
  fi
}
