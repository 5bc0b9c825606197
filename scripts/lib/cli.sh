# Sourced by scripts that take no arguments but --help, after they set SCRIPT (their name
# in messages) and define usage(): die and log write to stderr, only_help_args "$@" prints
# the usage for -h/--help and refuses anything else.

die() { echo "$SCRIPT: error: $*" >&2; exit 1; }
log() { echo "$SCRIPT: $*" >&2; }

only_help_args() {
  local arg
  for arg in "$@"; do
    case $arg in
      -h | --help) usage; exit 0 ;;
      *) echo "$SCRIPT: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
    esac
  done
}
