# Sourced by egs/*/vc1/run.sh before parse_options.sh: the defaults every VC script shares
# (each an option: --vocoder, --vocoder-recipe, --guide, ...). Uses the script's root.
train_args="${ALIGNER_TRAIN_ARGS:-}"
baseline_args="${ALIGNER_BASELINE_ARGS:-}"
aligner="${ALIGNER:-aligner}"
python="${PYTHON:-python}"
vocoder=train   # train: $vocoder_recipe on the target voice (stage 3); or griffin-lim,
                # hifigan:DIR, or a vocoder experiment folder or checkpoint
vocoder_recipe="$root"/recipes/vocoder/vocos_small.yaml
vocoder_args="${ALIGNER_VOCODER_ARGS:-}"
model=fastvc     # fastvc (non-autoregressive, on the durations of stage 1) or tacotron
recipe=""        # empty: the model's recipe (run.sh's vc_model_option)
minutes=30       # minutes of VC training (stage 2) and of the frame-wise baseline (stage 7)
average=5        # stages 4-5 use the mean of the last 5 checkpoints (1: best.pt)
pretrain=none    # tts: stage 2 first trains a FastPitch of the target voice at the FastVC's
                 # sizes ($pretrain_minutes) and starts the FastVC's decoder from it
pretrain_minutes=15
pretrain_recipe=""  # empty: the recipe's name with _tts beside it (recipes/vc/fastvc_small_tts.yaml)
pretrain_args="${ALIGNER_PRETRAIN_ARGS:-}"
guide=durations  # the alignment model's durations of both voices (stage 1), or diagonal
                 # (tacotron only: the guided attention loss's own band)
align_recipe="$root"/recipes/align/aligner.yaml
align_exp=""     # empty: $exp/aligner
align_args="${ALIGNER_ALIGN_ARGS:-}"
judge_recipe="$root"/recipes/recognize/ctc_small.yaml
judge_exp=""     # empty: $exp/recognizer
judge_args="${ALIGNER_JUDGE_ARGS:-}"
