#!/usr/bin/env bash
# Power cuts at any point, and faults at the worst moments (issue 5, items 3 and 4), long runs:
# the real engine over recorded members (crates/swan-testkit/src/crashsim/), replayed to every
# FLUSH/FUA point and to random points between them with the last writes torn, each recovered,
# `swan check`ed and read back; then seeded I/O errors and crashes during GC, front-end
# rotation and checkpoints. A third of the replay runs, and a share of the fault runs, put
# the array on emulated zoned members, whose zone tables the power cut cuts too; those are
# also checked serving writes after the restart. A failure prints its seeds; the same seeds
# give the same run.
#
#   scripts/crash-replay.sh [RUNS [FAULT_SEEDS [OPS [FIRST_SEED]]]]   # default 10 500 12000 1
#
# Each replay run of 12,000 requests is about 6,000 replay points, ~5 min on 2 cores, and holds
# its log in memory (~0.6 GiB); the defaults take about 20 minutes. Fault runs: ~0.5 s per seed.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "crash-replay.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
export SWAN_CRASH_RUNS="${1:-10}" SWAN_CRASH_SEEDS="${2:-500}" SWAN_CRASH_OPS="${3:-12000}" SWAN_CRASH_SEED="${4:-1}"
cargo test --release -p swan-testkit --test crash_replay -- --ignored --nocapture --test-threads 1 long_power_cut_replay
SWAN_CRASH_OPS=3000 cargo test --release -p swan-testkit --test crash_replay -- --ignored --nocapture long_fault_runs
