# Sourced by the soak scripts (crash-soak.sh, fault-soak.sh), which run an `--ignored` test
# of crates/swan-cli/tests with its settings in the environment. SCRIPT is the script's
# name in messages; its usage is its header comment.

# Prints the header comment for -h/--help and exits; refuses any other option.
soak_help_or_refuse() {
  case "${1:-}" in
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$SCRIPT: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
}

# soak_number WHAT VALUE: VALUE (if given) must be a whole number.
soak_number() {
  [[ -z ${2:-} || $2 =~ ^[0-9]+$ ]] || { echo "$SCRIPT: $1 must be a number, not '$2' (see --help)" >&2; exit 2; }
}
