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
guide=durations  # the alignment model's durations of both voices (stage 1), or diagonal
align_recipe="$root"/recipes/align/aligner.yaml
align_exp=""     # empty: $exp/aligner
align_args="${ALIGNER_ALIGN_ARGS:-}"
