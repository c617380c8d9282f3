# Sourced by egs/*/run.sh after its defaults (ESPnet's utils/parse_options.sh style):
# `--some-name VALUE` sets the shell variable some_name, which the script must have given a
# default; `-h`/`--help` prints the script's header comment; other arguments are left in "$@".
#
#   stage=0; exp=exp/x
#   . "$root/egs/tools/parse_options.sh"   # ./run.sh --stage 2 --exp exp/y DATA_DIR
#   corpus=${1:-}
_positional=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
    --*)
      _name=${1#--}; _name=${_name//-/_}
      if [[ ! $_name =~ ^[a-z][a-z0-9_]*$ ]] || [ -z "${!_name+set}" ]; then
        echo "run.sh: unknown option $1 (see --help)" >&2; exit 2
      fi
      [ $# -ge 2 ] || { echo "run.sh: option $1 needs a value (see --help)" >&2; exit 2; }
      printf -v "$_name" '%s' "$2"; shift 2 ;;
    -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) _positional+=("$1"); shift ;;
  esac
done
set -- ${_positional[@]+"${_positional[@]}"}
unset _positional _name
