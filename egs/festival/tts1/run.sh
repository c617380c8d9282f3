#!/usr/bin/env bash
# TTS on one Festival voice reading the fortunes (Debian: festival festlex-cmu
# festvox-us-slt-hts fortunes), timed against Festival's own word and segment times: the
# alignment model's durations, then a FastPitch trained on them (or the guided Tacotron).
# The same stages as egs/espeak/tts1 on a second corpus, whose pauses follow Festival's
# phrasing rather than the punctuation alone.
#
#   ./run.sh [--stage N] [--stop-stage M] [--voice V] [--utterances U] [--text FILE]
#            [--model fastpitch|tacotron] [--tokenizer arpabet|phonemes] [--language CODE]
#            [--vocoder V] [--recipe YAML] [--data DIR] [--exp DIR] [--align-exp DIR]
#            [--train-args "--set train.max_minutes=18"] [--align-args "--set train.max_steps=3000"]
#
# --voice: any installed Festival voice (cmu_us_slt_arctic_hts by default); one of another
# language needs --text (its sentences, one a line) and --tokenizer phonemes --language CODE
# (`aligner prepare festival` prints the code). Run it from its folder (data/ and exp/ are
# written under the current folder).
# Stages (each skipped when its output exists; training resumes from its last checkpoint):
#   0 prepare     aligner prepare festival    -> data/{train,valid,test}.jsonl, textgrids/
#   1 durations   aligner train $align_recipe -> $align_exp (the alignment model), then
#                 aligner align (train, valid) -> data/durations/{train,valid}/
#   2 train       aligner train               -> $exp: a FastPitch on those durations
#                                                (recipes/tts/fastpitch_small.yaml), or the
#                                                Tacotron guided by them (--model tacotron)
#   3 synthesize  aligner synthesize          -> $exp/synth/test.wav: the test split's text
#   4 align       aligner align (test split)  -> $exp/align/: the model's own timing
#   5 score       aligner score-alignment     -> $exp/score/alignment.json (ms against Festival)
# Environment: ALIGNER (the command, default aligner), PYTHON, ALIGNER_TRAIN_ARGS,
# ALIGNER_ALIGN_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)

stage=0
stop_stage=100
voice=cmu_us_slt_arctic_hts
utterances=1000
text=       # default: plain sentences of Debian's English fortunes
model=fastpitch   # or tacotron
tokenizer=arpabet # or phonemes (eSpeak NG's, with --language)
language=         # eSpeak NG's code for --tokenizer phonemes (default: English)
recipe=
data=data
exp=
align_recipe="$root"/recipes/align/aligner.yaml
align_exp=exp/aligner
align_args="${ALIGNER_ALIGN_ARGS:-}"
train_args="${ALIGNER_TRAIN_ARGS:-}"
aligner="${ALIGNER:-aligner}"
python="${PYTHON:-python}"
vocoder=griffin-lim   # or hifigan:DIR, or a vocoder experiment folder (recipes/vocoder)
. "$root/egs/tools/parse_options.sh"
. "$root/egs/tools/stage.sh"
no_arguments "$@"
case $model in
  fastpitch) recipe=${recipe:-"$root"/recipes/tts/fastpitch_small.yaml}; exp=${exp:-exp/fastpitch_small} ;;
  tacotron) recipe=${recipe:-"$root"/recipes/tts/tacotron_forward_small_guided.yaml}
            exp=${exp:-exp/tacotron_forward_small} ;;
  *) echo "run.sh: --model $model: use fastpitch or tacotron" >&2; exit 2 ;;
esac
case $tokenizer in
  arpabet|phonemes) ;;
  *) echo "run.sh: --tokenizer $tokenizer: use arpabet or phonemes" >&2; exit 2 ;;
esac
if [ -n "$language" ] && [ "$tokenizer" != phonemes ]; then
  echo "run.sh: --language $language needs --tokenizer phonemes (arpabet is English)" >&2; exit 2
fi
tokens="--set data.tokenizer=$tokenizer${language:+ --set data.tokenizer_opts.language=$language}"
align_args="$tokens $align_args"
train_args="$tokens $train_args"

if run 0; then
  echo "stage 0: prepare the Festival corpus ($utterances utterances of $voice)"
  if needed "$data"/test.jsonl "$data"; then
    $aligner prepare festival "$data" --voices "$voice" --utterances "$utterances" ${text:+--text "$text"}
  fi
fi

if run 1; then durations_stage 1; fi

if run 2; then train_stage 2; fi

if run 3; then
  echo "stage 3: synthesize the test split's text"
  out="$exp"/synth/test.wav
  if needed "$out"; then
    mkdir -p "$exp"/synth
    $python -c 'import json, sys; print("\n".join(json.loads(l)["text"] for l in open(sys.argv[1], encoding="utf-8") if l.strip()))' \
      "$data"/test.jsonl > "$exp"/synth/test.txt
    $aligner synthesize --checkpoint "$exp" --vocoder "$vocoder" --in "$exp"/synth/test.txt --out "$out"
  fi
fi

if run 4; then align_stage 4; fi

if run 5; then score_alignment_stage 5; fi
