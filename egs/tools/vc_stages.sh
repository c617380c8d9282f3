# Sourced by egs/*/vc1/run.sh after stage.sh: the durations of both voices, the vocoder,
# the conversion, the frame-wise baseline, the phone recognizer that judges intelligibility
# and the evaluation table. Uses the script's variables root, aligner, python, data, exp,
# model, recipe, minutes, average, train_args, baseline_args, vocoder, vocoder_recipe, vocoder_args,
# guide, align_recipe, align_exp, align_args, judge_recipe, judge_exp, judge_args,
# pretrain, pretrain_minutes, pretrain_recipe, pretrain_args.

# vc_durations_stage N: with --guide durations, the alignment model trained on both voices
# of $data (data.audio_keys [audio, target_audio]) -> $align_exp, then its durations of
# each voice of the train and valid splits -> $data/durations/{source,target}/{train,valid}/.
vc_durations_stage() {
  echo "stage $1: the alignment model's durations of both voices (--guide $guide)"
  if [ "$guide" != durations ]; then echo "  --guide $guide: no alignment model needed"
    return 0
  fi
  if [ -f "$align_exp"/.done ]; then echo "  $align_exp is trained, skipped"
  else
    # shellcheck disable=SC2086
    $aligner train "$align_recipe" --data "$data" --out "$align_exp" --resume \
      --set "data.audio_keys=[audio,target_audio]" $align_args
    touch "$align_exp"/.done
  fi
  local side split out
  for side in source:audio target:target_audio; do  # folder:manifest field
    for split in train valid; do
      out="$data"/durations/${side%:*}/$split
      if needed "$out"/summary.json "$out"; then
        # an item it cannot align is named and counted (exit 1); it trains with the diagonal
        $aligner align --checkpoint "$align_exp" --in "$data"/$split.jsonl --out "$out" \
          --audio-key "${side#*:}" --no-png --force || [ -f "$out"/summary.json ]
      fi
    done
  done
}

# vc_pretrain_stage N: with --pretrain tts, a FastPitch of the target voice (its recordings
# of the train and valid splits, scripts/voice_manifest.py -> $data/target_{train,valid}.jsonl,
# and its durations of stage 1) at the FastVC's sizes ($pretrain_recipe), trained for
# $pretrain_minutes (0: the recipe's own budget) -> $exp/target_tts; stage 2's FastVC then
# starts its decoder and projection (and postnet, where they have one) from it.
vc_pretrain_stage() {
  [ "$pretrain" = tts ] || return 0
  echo "stage $1: a FastPitch of the target voice ($pretrain_minutes minutes) for $model's decoder"
  local split tts_exp="$exp"/target_tts
  for split in train valid; do
    if [ ! -f "$data"/target_$split.jsonl ]; then
      $python "$root"/scripts/voice_manifest.py --in "$data"/$split.jsonl \
        --out "$data"/target_$split.jsonl --key target_audio
    fi
  done
  if [ -f "$tts_exp"/.done ]; then echo "  $tts_exp is trained, skipped"
  else
    local budget=""  # --pretrain-minutes 0: the recipe's own budget
    [ "$pretrain_minutes" = 0 ] || budget="--set train.max_minutes=$pretrain_minutes"
    # shellcheck disable=SC2086
    $aligner train "$pretrain_recipe" --data "$data" --out "$tts_exp" --resume $budget \
      $pretrain_args
    touch "$tts_exp"/.done
  fi
  local modules=decoder,proj  # and the postnet where the FastPitch has one (its settings)
  if grep -qE '^  postnet: *($|\{)' "$tts_exp"/config.yaml 2>/dev/null; then modules=$modules,postnet; fi
  train_args="--set train.init_from=$tts_exp --set train.init_modules=[$modules] $train_args"
}

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

# vc_weights: the checkpoint that stages 4 and 5 use (in $weights): with --average K > 1,
# $exp/avg.pt, the mean of the run's last K checkpoints (aligner average, written by
# whichever of the two stages runs first); with --average 1, the run's best.pt (by the
# whole validation loss).
vc_weights() {
  weights=$exp
  [ "$average" -gt 1 ] || return 0
  weights=$exp/avg.pt
  if needed "$weights"; then $aligner average "$exp" --last "$average" --out "$weights"; fi
}

# vc_convert_stage N: aligner convert of the test split with the weights of vc_weights,
# through the vocoder -> $exp/converted/*.wav, manifest.jsonl.
vc_convert_stage() {
  echo "stage $1: convert the test split"
  vc_weights
  if needed "$exp"/converted/manifest.jsonl "$exp"/converted; then
    $aligner convert --checkpoint "$weights" --vocoder "$(vocoder_used)" \
      --in "$data"/test.jsonl --out "$exp"/converted
  fi
}

# vc_align_stage N: aligner align of the test split with the weights of vc_weights ->
# $exp/align/summary.json (mapping_ms against both voices' timings).
vc_align_stage() {
  echo "stage $1: align the test split"
  if needed "$exp"/align/summary.json "$exp"/align; then
    vc_weights
    $aligner align --checkpoint "$weights" --in "$data"/test.jsonl --out "$exp"/align
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

# vc_judge_stage N: the phone recognizer trained on both voices of $data (the corpus's own
# judge: no off-the-shelf recognizer hears these voices) -> $judge_exp, resuming.
vc_judge_stage() {
  echo "stage $1: the phone recognizer that judges intelligibility ($judge_recipe)"
  if [ -f "$judge_exp"/.done ]; then echo "  $judge_exp is trained, skipped"
    return 0
  fi
  # shellcheck disable=SC2086
  $aligner train "$judge_recipe" --data "$data" --out "$judge_exp" --resume \
    --set "data.audio_keys=[audio,target_audio]" $judge_args
  touch "$judge_exp"/.done
}

# vc_evaluate_stage N: MCD, F0, duration, mapping errors and phone error rates of the
# source, the baseline, the VC model and the vocoded targets on the test split ->
# $exp/score/vc.md (table), $exp/score/vc.json.
vc_evaluate_stage() {
  echo "stage $1: evaluate source, baseline and $model against the target voice"
  if needed "$exp"/score/vc.md; then
    mkdir -p "$exp"/score
    $python "$root"/scripts/eval_vc.py --system "$model"="$exp"/converted/manifest.jsonl \
      --system baseline="$exp"/baseline/converted/manifest.jsonl \
      --system vocoded-target="$exp"/baseline/vocoded/manifest.jsonl \
      --alignment "$model"="$exp"/align/summary.json --alignment baseline=source \
      --recognizer "$judge_exp" --json "$exp"/score/vc.json > "$exp"/score/vc.md.tmp
    mv "$exp"/score/vc.md.tmp "$exp"/score/vc.md; cat "$exp"/score/vc.md
  fi
}

# vc_stages: stages 1 to 9 of a vc1 run.sh (after its own stage 0).
vc_stages() {
  if run 1; then vc_durations_stage 1; fi
  if run 2; then vc_pretrain_stage 2; train_stage 2; fi
  if run 3; then vocoder_stage 3; fi
  if run 4; then vc_convert_stage 4; fi
  if run 5; then vc_align_stage 5; fi
  if run 6; then vc_score_stage 6; fi
  if run 7; then vc_baseline_stage 7; fi
  if run 8; then vc_judge_stage 8; fi
  if run 9; then vc_evaluate_stage 9; fi
}

# vc_model_option SIZE EXP_ROOT: --model and --guide checked; the model's recipe (SIZE:
# small for a CPU, full for a GPU) unless --recipe gave one; the default folders (the
# model's exp under EXP_ROOT, named as its recipe; in it the alignment model and the
# judge); the training arguments: --minutes for both the VC model and the baseline, and
# the durations of both voices (tacotron: as its attention's guide).
vc_model_option() {
  local size=$1 base=$2 name
  [[ "$average" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --average $average: give a count of checkpoints >= 1 (1: best.pt)" >&2; exit 2; }
  case $model in
    fastvc)
      [ "$guide" = durations ] || { echo "run.sh: --model fastvc learns from durations: use --guide durations" >&2; exit 2; }
      name=fastvc ;;
    tacotron) name=seq2seq_vc_lsa ;;
    *) echo "run.sh: --model $model: use fastvc or tacotron" >&2; exit 2 ;;
  esac
  [ "$size" = full ] || name=${name}_small
  recipe=${recipe:-"$root"/recipes/vc/$name.yaml}
  case $pretrain in
    none) ;;
    tts) [ "$model" = fastvc ] || { echo "run.sh: --pretrain tts starts a FastVC's decoder: use --model fastvc" >&2; exit 2; }
      pretrain_recipe=${pretrain_recipe:-${recipe%.yaml}_tts.yaml}  # beside the recipe
      [ -f "$pretrain_recipe" ] || { echo "run.sh: --pretrain tts: no $pretrain_recipe; give --pretrain-recipe YAML (a FastPitch at the FastVC's sizes)" >&2; exit 2; } ;;
    *) echo "run.sh: --pretrain $pretrain: use tts or none" >&2; exit 2 ;;
  esac
  exp=${exp:-$base/$(basename "$recipe" .yaml)}
  align_exp=${align_exp:-$exp/aligner}
  judge_exp=${judge_exp:-$exp/recognizer}
  case $guide in
    durations) [ "$model" = fastvc ] || train_args="--set model.loss.guided.source=durations $train_args"
      train_args="--set data.durations=durations/target --set data.source_durations=durations/source $train_args" ;;
    diagonal) ;;
    *) echo "run.sh: --guide $guide: use durations or diagonal" >&2; exit 2 ;;
  esac
  if [ "$minutes" != 0 ]; then
    train_args="--set train.max_minutes=$minutes $train_args"
    baseline_args="--max-minutes $minutes --epochs 100000 $baseline_args"
  fi
}
