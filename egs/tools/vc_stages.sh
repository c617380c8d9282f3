# Sourced by egs/*/vc1/run.sh after stage.sh: the vocoder, the conversion, the frame-wise
# baseline and the evaluation table. Uses the script's variables root, aligner, python,
# data, exp, baseline_args, vocoder, vocoder_recipe, vocoder_args.

# vocoder_used: the --vocoder spec the conversion stages pass on: with --vocoder train, the
# vocoder that vocoder_stage trains ($exp/vocoder); else --vocoder as given.
vocoder_used() {
  if [ "$vocoder" = train ]; then echo "$exp"/vocoder; else echo "$vocoder"; fi
}

# vocoder_stage N: with --vocoder train, train $vocoder_recipe on the target voice of $data
# (data.audio_keys [target_audio]: the voice every later stage vocodes) -> $exp/vocoder,
# resuming an interrupted run; any other --vocoder (griffin-lim, a vocoder folder,
# hifigan:DIR) is used as it is.
vocoder_stage() {
  echo "stage $1: the vocoder (--vocoder $vocoder)"
  if [ "$vocoder" != train ]; then echo "  --vocoder $vocoder given, training skipped"
    return 0
  fi
  if [ -f "$exp"/vocoder/.done ]; then
    echo "  $exp/vocoder is trained, skipped (delete $exp/vocoder/.done to train on)"
    return 0
  fi
  # shellcheck disable=SC2086
  $aligner train "$vocoder_recipe" --data "$data" --out "$exp"/vocoder --resume \
    --set "data.audio_keys=[target_audio]" $vocoder_args
  touch "$exp"/vocoder/.done
}

# vc_convert_stage N: aligner convert of the test split through the vocoder ->
# $exp/converted/*.wav, manifest.jsonl.
vc_convert_stage() {
  echo "stage $1: convert the test split"
  if needed "$exp"/converted/manifest.jsonl "$exp"/converted; then
    $aligner convert --checkpoint "$exp" --vocoder "$(vocoder_used)" --in "$data"/test.jsonl \
      --out "$exp"/converted
  fi
}

# vc_baseline_stage N: train the frame-wise baseline on $data and convert the test split;
# vocode the test split's targets through the same log-mel and vocoder (the floor of any
# mel conversion) -> $exp/baseline/model.pt, $exp/baseline/{converted,vocoded}/.
vc_baseline_stage() {
  echo "stage $1: the frame-wise baseline (DTW-paired regression)"
  if needed "$exp"/baseline/model.pt; then
    # shellcheck disable=SC2086
    $python "$root"/scripts/vc_baseline.py train --data "$data" --out "$exp"/baseline/model.pt \
      $baseline_args
  fi
  local what out
  for what in convert:converted vocode:vocoded; do  # command:folder
    out="$exp"/baseline/${what#*:}
    if needed "$out"/manifest.jsonl "$out"; then
      $python "$root"/scripts/vc_baseline.py "${what%:*}" --model "$exp"/baseline/model.pt \
        --vocoder "$(vocoder_used)" --in "$data"/test.jsonl --out "$out"
    fi
  done
}

# vc_evaluate_stage N: MCD, F0, duration and mapping errors of the source, the baseline, the
# seq2seq model and the vocoded targets on the test split -> $exp/score/vc.md (table),
# $exp/score/vc.json.
vc_evaluate_stage() {
  echo "stage $1: evaluate source, baseline and seq2seq against the target voice"
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
