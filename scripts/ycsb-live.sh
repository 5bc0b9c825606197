#!/usr/bin/env bash
# SWAN §5.3 live: YCSB-like RocksDB phases on ext4 over `swan serve --emulate`, for RAID4,
# RAID5, Log-RAID4 and SWAN4 in turn, each phase's block trace recorded at the server and
# replayed in `swan sim` over the same array. A measurement, not a test: it asserts nothing.
#
#   scripts/ycsb-live.sh                                   # the four schemes, 3R-3SSD, ~25 min
#   SCHEMES=swan4 NUM=100000 RUN_SECONDS=15 scripts/ycsb-live.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=ycsb-live.sh

usage() {
  cat <<'EOF'
Usage: scripts/ycsb-live.sh [--help]

For each scheme of SCHEMES: creates a fresh array over member files (their contents are
lost), serves it with --emulate PRESET --emulate-age AGE (each SSD aged by random writes to
AGE of it, the paper's aging step) and --record-trace, attaches the export as a block device
(nbdfuse, then a loop device with direct I/O and 4 KiB sectors), writes the whole device
once (so the array is full before the run, as a used array is: log-structured schemes must
clean from the first Load write on, and every SSD holds valid data everywhere), makes ext4
on it and runs RocksDB's db_bench with O_DIRECT reads, flushes and compactions (so its I/O
reaches the server rather than the page cache), 1000-byte values as YCSB's records and a
16 MiB memtable (so the Load's writes reach the device), phase by phase:

  load  fillrandom, NUM keys, 1 thread                      (YCSB Load: inserts)
  a     readrandomwriterandom 50 % reads, THREADS threads  (YCSB-A: 50/50 reads/updates)
  b     readrandomwriterandom 95 % reads                   (YCSB-B: 95/5)
  c     readrandom                                         (YCSB-C: reads only)
  d     readwhilewriting, writes limited to D_WRITE_MBPS   (YCSB-D's 95/5 read/insert; db_bench
                                                            has no read-latest distribution:
                                                            its reads are uniform)

each run phase for RUN_SECONDS. Then replays each scheme's trace in swan sim over the same
array (--array, the same SSD model and age) with the phases as --windows: --replay recorded
(the live arrival times: compare read latencies) and --replay closed=DEPTH (as fast as the
simulated array allows: its capacity for this request stream).

Prints, per phase and scheme: Fig. 8 (db_bench ops/s, live), Fig. 9 (mean read latency:
db_bench's per-read histogram live, and the simulator's block reads under the recorded
arrivals), the read tails of Fig. 10/11 (p99, p99.9, both faces), the block traffic the
server received and the simulated array's capacity for it (closed loop), where the two cores
went (the server, nbdfuse, db_bench, the whole machine: DIR/SCHEME/cpu.tsv), RocksDB's files
per level at each phase's end (DIR/SCHEME/lsm.tsv); and Table 4
(SWAN4's reads in phase a by R-group role, simulated). Writes them to DIR/ycsb.tsv, and
`swan status --json` at the end of each phase to DIR/SCHEME/PHASE.status.json.

Needs root (losetup, mount), /dev/fuse, loop devices, nbdfuse, db_bench, mkfs.ext4.

Environment:
  SCHEMES      schemes, in the order run          (default "raid4 raid5 lograid4 swan4")
  RGROUPS      R-groups                           (default 3: the paper's 3R-3SSD)
  SSDS         SSDs per R-group                   (default 3)
  MEMBER_SIZE  size of each member file (≥ 256M)  (default 512M: segments of 8 MiB,
                                                   the model's erase stripe)
  PRESET       swan serve --emulate, swan sim --ssd (default sata850pro)
  AGE          --emulate-age and swan sim --age   (default 0.6, the paper's)
  NUM          db_bench keys (Load writes NUM × 1 KB) (default 300000)
  THREADS      db_bench threads in the run phases (default 4)
  RUN_SECONDS  length of each run phase           (default 30)
  D_WRITE_MBPS phase d's write rate limit, MB/s   (default 2)
  DEPTH        swan sim --replay closed=DEPTH     (default 32)
  DIR          members, mounts, logs and traces   (default /dev/shm/swan-ycsb; members are
                                                   removed after each scheme but the first)
  SAVE_TRACES  also keep each scheme's trace there, gzipped, with its phases (SCHEME.blkparse.gz,
               SCHEME.windows): how data/traces/ycsb was made, with RUN_SECONDS=6
  SWAN_BIN     swan binary                        (default target/release/swan)
EOF
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

SCHEMES=${SCHEMES:-raid4 raid5 lograid4 swan4} RGROUPS=${RGROUPS:-3} SSDS=${SSDS:-3}
MEMBER_SIZE=${MEMBER_SIZE:-512M} PRESET=${PRESET:-sata850pro} AGE=${AGE:-0.6} NUM=${NUM:-300000}
THREADS=${THREADS:-4} RUN_SECONDS=${RUN_SECONDS:-30} D_WRITE_MBPS=${D_WRITE_MBPS:-2} DEPTH=${DEPTH:-32}
DIR=${DIR:-/dev/shm/swan-ycsb} SAVE_TRACES=${SAVE_TRACES:-} SWAN_BIN=${SWAN_BIN:-target/release/swan}
[[ $(id -u) -eq 0 ]] || die "needs root (losetup, mount)"
for tool in nbdfuse nbdinfo losetup mkfs.ext4 mount umount db_bench python3 dd; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")
mkdir -p "$DIR"
DIR=$(realpath "$DIR")

srv='' nbdfuse_pid='' loopdev='' mounted='' fuse='' mnt=''
# Undo in reverse order whatever is still up, on any exit.
teardown() {
  [[ -n $mounted ]] && { umount "$mnt" || umount -l "$mnt"; }
  mounted=
  [[ -n $loopdev ]] && losetup -d "$loopdev"
  loopdev=
  if [[ -n $nbdfuse_pid ]]; then
    fusermount3 -u "$fuse" 2>/dev/null || fusermount -u "$fuse" 2>/dev/null || umount "$fuse" || true
    wait "$nbdfuse_pid" 2>/dev/null || true
  fi
  nbdfuse_pid=
  if [[ -n $srv ]]; then
    kill "$srv" 2>/dev/null
    wait "$srv" || die "swan serve did not stop cleanly: $(tail -5 "$d/serve.log")"
  fi
  srv=
}
trap 'teardown || true' EXIT
trap 'exit 143' INT TERM
now() { date +%s.%N; }
# CPU ticks so far: the server, nbdfuse, the script's reaped children, the machine's busy time
# and its stolen time.
cpu_now() {
  local f g h
  read -ra f <"/proc/$srv/stat"
  read -ra g <"/proc/$nbdfuse_pid/stat"
  read -ra h <"/proc/$$/stat" # $$: the script, whose children db_bench is
  awk -v s=$((f[13] + f[14])) -v n=$((g[13] + g[14])) -v c=$((h[15] + h[16])) '
    $1 == "cpu" { printf "%d %d %d %d %d\n", s, n, c, $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat
}

# One scheme, live: DIR/SCHEME/{live.blkparse,windows.tsv,*.log}.
run_scheme() {
  local scheme=$1 d="$DIR/$1" i t0 uri
  mkdir -p "$d"
  fuse="$d/fuse" mnt="$d/mnt"
  mkdir -p "$fuse" "$mnt"
  local members=() sock="$d/nbd.sock" trace="$d/live.blkparse" phases="$d/phases.tsv"
  for ((i = 0; i < RGROUPS * SSDS; i++)); do members+=("$d/m$i"); done
  rm -f "${members[@]}" "$sock" "$trace"
  log "$scheme: creating ${#members[@]} × $MEMBER_SIZE members, serving with --emulate $PRESET --emulate-age $AGE"
  "$SWAN_BIN" create --force --scheme "$scheme" --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
    --member-size "$MEMBER_SIZE" "${members[@]}" >"$d/create.log"
  "$SWAN_BIN" serve --socket "$sock" --emulate "$PRESET" --emulate-age "$AGE" --record-trace "$trace" \
    "${members[@]}" 2>"$d/serve.log" &
  srv=$!
  uri="nbd+unix:///?socket=$sock"
  for _ in $(seq 600); do nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.2; done
  nbdinfo --size "$uri" >/dev/null || die "the server did not come up: $(cat "$d/serve.log")"
  nbdfuse "$fuse" "$uri" >"$d/nbdfuse.log" 2>&1 &
  nbdfuse_pid=$!
  for _ in $(seq 300); do [[ -s $fuse/nbd ]] && break; sleep 0.1; done
  [[ -s $fuse/nbd ]] || die "nbdfuse did not expose $fuse/nbd: $(cat "$d/nbdfuse.log")"
  loopdev=$(losetup --find --show --direct-io=on --sector-size 4096 "$fuse/nbd")
  : >"$phases"
  phase() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$phases"; }
  t0=$(now)
  # dd stops with ENOSPC at the device's end: that is the point.
  dd if=/dev/zero of="$loopdev" bs=1M oflag=direct status=none 2>/dev/null || true
  phase fill "$t0" "$(now)"
  t0=$(now)
  mkfs.ext4 -q -F -E nodiscard "$loopdev"
  phase mkfs "$t0" "$(now)"
  mount "$loopdev" "$mnt"
  mounted=1
  # A 16 MiB memtable (RocksDB's default is 64 MiB) so a Load of a few hundred MB reaches the
  # device as flushes and compactions, as the paper's much larger Load did.
  local bench=(--db="$mnt/db" --num="$NUM" --value_size=1000 --compression_type=none
    --write_buffer_size=16777216 --use_direct_reads=true --use_direct_io_for_flush_and_compaction=true --seed=1)
  : >"$d/lsm.tsv"
  printf 'phase\twall_s\tserver_cpu_s\tnbdfuse_cpu_s\tdb_bench_cpu_s\tmachine_busy_cpu_s\tstolen_cpu_s\n' >"$d/cpu.tsv"
  run() { # NAME BENCHMARK [db_bench flags]
    local name=$1 b=$2 c0 c1
    shift 2
    log "$scheme: phase $name ($b)"
    t0=$(now)
    c0=$(cpu_now)
    db_bench --benchmarks="$b" "${bench[@]}" "$@" >"$d/$name.log" 2>&1 ||
      die "$scheme: db_bench $b failed: $(tail -5 "$d/$name.log")"
    c1=$(cpu_now)
    phase "$name" "$t0" "$(now)"
    # Where the two cores went: the server, nbdfuse, db_bench (this shell's reaped children)
    # and the whole machine (kernel work for the loop device, FUSE and ext4 shows only there);
    # and the time the hypervisor gave this machine's CPUs to others (steal) while it wanted them.
    awk -v n="$name" -v t0="$t0" -v t1="$(now)" -v hz="$(getconf CLK_TCK)" -v a="$c0" -v b="$c1" 'BEGIN {
        k = split(a, x); split(b, y); printf "%s\t%.3f", n, t1 - t0
        for (i = 1; i <= k; i++) printf "\t%.3f", (y[i] - x[i]) / hz
        print "" }' >>"$d/cpu.tsv"
    # The server's counters at the phase's end (GC, emulated replies' timing), to difference.
    "$SWAN_BIN" status --json "${members[0]}" >"$d/$name.status.json" 2>/dev/null || true
    # RocksDB's tree as the phase left it (files per level): how many files a read may look
    # in, which the next phase starts with.
    printf '%s\t%s\n' "$name" "$(grep -ho 'files\[[0-9 ]*\]' "$mnt/db/LOG" | tail -1)" >>"$d/lsm.tsv"
  }
  run load fillrandom --threads=1 --histogram=1
  local runs=(--use_existing_db=1 --threads="$THREADS" --duration="$RUN_SECONDS" --histogram=1)
  run a readrandomwriterandom --readwritepercent=50 "${runs[@]}"
  run b readrandomwriterandom --readwritepercent=95 "${runs[@]}"
  run c readrandom "${runs[@]}"
  run d readwhilewriting --benchmark_write_rate_limit=$((D_WRITE_MBPS * 1000000)) "${runs[@]}"
  teardown
  grep -q '^# end: ' "$trace" || die "$scheme: the trace has no trailer: $(tail -5 "$d/serve.log")"
  # The windows: phase times relative to the trace's start, as its records are timed.
  local start
  start=$(sed -n 's/^# start: .*(unix \([0-9.]*\)).*/\1/p' "$trace")
  awk -v s="$start" '{ printf "%s %.6f %.6f\n", $1, ($2 - s < 0 ? 0 : $2 - s), $3 - s }' "$phases" >"$d/windows.txt"
  for mode in recorded "closed=$DEPTH"; do
    log "$scheme: swan sim --replay $mode"
    "$SWAN_BIN" sim --array "${members[0]}" --ssd "$PRESET" --age "$AGE" --trace "$trace" \
      --trace-format blkparse --windows "$d/windows.txt" --replay "$mode" --quiet \
      --out "$d/sim-${mode%%=*}" >"$d/sim-${mode%%=*}.log" 2>&1 ||
      die "$scheme: swan sim --replay $mode failed: $(tail -5 "$d/sim-${mode%%=*}.log")"
  done
  if [[ -n ${SAVE_TRACES:-} ]]; then
    mkdir -p "$SAVE_TRACES"
    gzip -9 -c "$trace" >"$SAVE_TRACES/$scheme.blkparse.gz"
    {
      echo "# The phases of $scheme.blkparse.gz: NAME START_S END_S, seconds of the trace's recorded time"
      echo "# (scripts/ycsb-live.sh; swan sim --windows). fill and mkfs are set-up, not YCSB phases."
      cat "$d/windows.txt"
    } >"$SAVE_TRACES/$scheme.windows"
  fi
  # Keep one member (its superblock describes the array) for later replays; free the rest.
  rm -f "${members[@]:1}"
}

for scheme in $SCHEMES; do run_scheme "$scheme"; done
python3 scripts/lib/ycsb_live.py "$DIR" $SCHEMES
