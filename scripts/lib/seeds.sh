# Sourced by the experiment scripts that take a list of seeds (read-rules.sh, ycsb-why.sh),
# after they set SCRIPT (their name in messages): seeds_or_help "$@" prints the header comment
# for -h/--help, else sets SEEDS from the first argument (default "1 2 3"), each a number.

seeds_or_help() {
  case "${1:-}" in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  esac
  SEEDS="${1:-1 2 3}"
  local s
  for s in $SEEDS; do
    [[ $s =~ ^[0-9]+$ ]] || { echo "$SCRIPT: seeds are numbers, not '$s' (see --help)" >&2; exit 2; }
  done
}
