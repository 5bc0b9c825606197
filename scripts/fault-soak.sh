#!/usr/bin/env bash
# Faults together (issue 25, part 3): fio verify through `swan serve` (3 writing and 3 reading
# connections, 7 reads for every 3 writes, 4-128 KiB) while each cycle injects, at random, one or more of:
# kill -9 and restart, `swan fail` + `swan replace` of a random member, a bit flip in a live
# block of a random member, a client vanishing mid-WRITE, and a hung member (one member,
# a random one each cycle, is served through nbdfuse from nbdkit's pause filter; the server
# runs with --member-timeout 3 and must fail it, then it is replaced). Faults are combined only in the
# orders the scheme promises to survive (FORMAT.md, "When faults meet"). After each cycle fio
# reads back every acknowledged write, then `swan check` and `swan scrub` run on the stopped
# array. Prints each cycle, then: cycles, MiB acknowledged and verified, faults of each kind
# injected and skipped, blocks lost (exit status non-zero, naming them, if any).
#
#   scripts/fault-soak.sh [CYCLES [SCHEME [SEED [direct]]]]   # default 200 swan5; about 7 s a cycle on 2 cores
#
# With `direct`, every `swan serve` opens its members O_DIRECT (`--direct`).
#
# Needs fio with its nbd engine (Debian: fio) and, for schemes with parity, root, /dev/fuse,
# nbdfuse and nbdkit (Debian: libnbd-bin or nbdfuse, nbdkit). The suite runs the short version
# (crates/swan-cli/tests/server_fault_soak.rs: fault_soak_short_swan5, 6 cycles). The kill -9
# soak alone is scripts/crash-soak.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=fault-soak.sh
# shellcheck source=scripts/lib/soak.sh
source scripts/lib/soak.sh
soak_help_or_refuse "$@"
soak_number CYCLES "${1:-}"
soak_number SEED "${3:-}"
export SWAN_FAULT_CYCLES="${1:-200}"
export SWAN_FAULT_SCHEME="${2:-swan5}"
export SWAN_FAULT_SEED="${3:-64023}"
case "${4:-}" in
  "") export SWAN_FAULT_DIRECT=0 ;;
  direct) export SWAN_FAULT_DIRECT=1 ;;
  *) echo "fault-soak.sh: the fourth argument is 'direct' or nothing, not '$4' (see --help)" >&2; exit 2 ;;
esac
# The members live in a temporary directory: on tmpfs unless TMPDIR says otherwise. With
# --member-timeout 3, a disk-backed /tmp on a loaded machine can stall a write longer than
# that, and the server then rightly fails a member no fault touched.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ]; then export TMPDIR=/dev/shm; fi
exec cargo test --release -p swan-cli --test server_fault_soak -- --ignored --nocapture fault_soak_long
