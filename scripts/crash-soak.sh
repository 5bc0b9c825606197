#!/usr/bin/env bash
# Crash soak (issue 5, item 3): kill -9 `swan serve` at random moments under fio with verify,
# restart, and have fio verify every acknowledged write; `swan check` after every fourth cycle.
# Prints each cycle, then the totals: cycles run, MiB acknowledged, MiB verified, anything lost.
#
#   scripts/crash-soak.sh [CYCLES [SCHEME [SEED [direct|zoned|direct+zoned]]]]   # default 1000 swan0; about 1 h on 2 cores
#
# With `direct`, every `swan serve` opens its members O_DIRECT (`--direct`): reads through the
# io_uring, runs written without the page cache. With `zoned`, the members are emulated zoned
# devices with 2 MiB zones, three active at most (`swan create --zone-size 2M
# --max-active-zones 3`; log-structured schemes only).
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
export SWAN_SOAK_DIRECT=0 SWAN_SOAK_ZONE_SIZE=
case "${4:-}" in
  "") ;;
  direct) SWAN_SOAK_DIRECT=1 ;;
  zoned) SWAN_SOAK_ZONE_SIZE=2M ;;
  direct+zoned) SWAN_SOAK_DIRECT=1 SWAN_SOAK_ZONE_SIZE=2M ;;
  *) echo "crash-soak.sh: the fourth argument is 'direct', 'zoned', 'direct+zoned' or nothing, not '$4' (see --help)" >&2; exit 2 ;;
esac
exec cargo test --release -p swan-cli --test server_crash -- --ignored --nocapture kill9_soak
