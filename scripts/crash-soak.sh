#!/usr/bin/env bash
# Crash soak (issue 5, item 3): kill -9 `swan serve` at random moments under fio with verify,
# restart, and have fio verify every acknowledged write; `swan check` after every fourth cycle.
# Prints each cycle, then the totals: cycles run, MiB acknowledged, MiB verified, anything lost.
#
#   scripts/crash-soak.sh [CYCLES [SCHEME [SEED [direct]]]]   # default 1000 swan0; about 1 h on 2 cores
#
# With `direct`, every `swan serve` opens its members O_DIRECT (`--direct`): reads through the
# io_uring, runs written without the page cache.
#
# Needs fio with its nbd engine (Debian: fio). The suite runs the short version
# (crates/swan-cli/tests/server_crash.rs: 26 cycles). The power-cut replayer, which tears
# writes as a kill -9 cannot, is scripts/crash-replay.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=crash-soak.sh
# shellcheck source=scripts/lib/soak.sh
source scripts/lib/soak.sh
soak_help_or_refuse "$@"
soak_number CYCLES "${1:-}"
soak_number SEED "${3:-}"
export SWAN_SOAK_CYCLES="${1:-1000}"
export SWAN_SOAK_SCHEME="${2:-swan0}"
export SWAN_SOAK_SEED="${3:-20646}"
case "${4:-}" in
  "") export SWAN_SOAK_DIRECT=0 ;;
  direct) export SWAN_SOAK_DIRECT=1 ;;
  *) echo "crash-soak.sh: the fourth argument is 'direct' or nothing, not '$4' (see --help)" >&2; exit 2 ;;
esac
exec cargo test --release -p swan-cli --test server_crash -- --ignored --nocapture kill9_soak
