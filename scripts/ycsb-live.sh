#!/usr/bin/env bash
# YCSB-like RocksDB phases on ext4 over a live `swan serve --emulate`, with the server's block
# trace recorded (--record-trace) and replayed in `swan sim` over the same array: the live
# and simulated numbers side by side. A measurement, not a test: it asserts nothing.
#
#   scripts/ycsb-live.sh                       # swan4 3×2, 512 MiB members, ~3 min on 2 cores
#   SCHEME=raid5 NUM=400000 RUN_SECONDS=120 scripts/ycsb-live.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=ycsb-live.sh

usage() {
  cat <<'EOF'
Usage: scripts/ycsb-live.sh [--help]

Creates a fresh array over member files (their contents are lost), serves it with
--emulate PRESET --emulate-age AGE --record-trace DIR/live.blkparse, attaches the export as a
block device (nbdfuse, then a loop device with direct I/O and 4 KiB sectors), makes ext4 on
it and runs RocksDB's db_bench with O_DIRECT reads, flushes and compactions (so its I/O
reaches the server rather than the page cache), 1000-byte values as YCSB's records and a
16 MiB memtable (so the Load's writes reach the device):

  Load   fillrandom, NUM keys
  A      readrandomwriterandom --readwritepercent=50 for RUN_SECONDS (YCSB-A: 50 % reads,
         50 % updates)

Then takes everything down in order and replays the trace in swan sim over the same array
(--array, the same SSD model and age), twice: --replay recorded (the live arrival times:
compare latencies) and --replay closed=DEPTH (as fast as the simulated array allows: its
capacity for this request stream). Prints, per phase, db_bench's ops/s, the block traffic
the server received (from the trace: requests, MiB, MB/s over the phase's wall time), and
the simulator's time and throughput for the phase's requests replayed closed-loop (the
replay of the trace up to the phase's end, less that up to its start, --max-requests), and
for the whole trace in both modes.

Needs root (losetup, mount), /dev/fuse, loop devices, nbdfuse, db_bench, mkfs.ext4.

Environment:
  SCHEME       swan create --scheme                          (default swan4)
  RGROUPS      R-groups                                      (default 3)
  SSDS         SSDs per R-group                              (default 2)
  MEMBER_SIZE  size of each member file (≥ 256M for the model) (default 512M)
  PRESET       swan serve --emulate, swan sim --ssd          (default sata850pro)
  AGE          --emulate-age and swan sim --age              (default 0.6, the paper's)
  NUM          db_bench keys (the Load phase writes NUM × 1 KB) (default 200000)
  RUN_SECONDS  length of phase A                             (default 60)
  DEPTH        swan sim --replay closed=DEPTH                (default 32)
  DIR          where members, mounts, logs and the trace go  (default /var/tmp/swan-ycsb)
  SWAN_BIN     swan binary                                   (default target/release/swan)
EOF
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

SCHEME=${SCHEME:-swan4} RGROUPS=${RGROUPS:-3} SSDS=${SSDS:-2} MEMBER_SIZE=${MEMBER_SIZE:-512M}
PRESET=${PRESET:-sata850pro} AGE=${AGE:-0.6} NUM=${NUM:-200000} RUN_SECONDS=${RUN_SECONDS:-60}
DEPTH=${DEPTH:-32} DIR=${DIR:-/var/tmp/swan-ycsb} SWAN_BIN=${SWAN_BIN:-target/release/swan}
[[ $(id -u) -eq 0 ]] || die "needs root (losetup, mount)"
for tool in nbdfuse nbdinfo losetup mkfs.ext4 mount umount db_bench python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")

mkdir -p "$DIR"
DIR=$(realpath "$DIR")
fuse="$DIR/fuse" mnt="$DIR/mnt" sock="$DIR/nbd.sock" trace="$DIR/live.blkparse" phases="$DIR/phases.tsv"
members=()
for ((i = 0; i < RGROUPS * SSDS; i++)); do members+=("$DIR/m$i"); done
srv='' nbdfuse_pid='' loopdev='' mounted=''
# Undo in reverse order whatever is still up, on any exit.
cleanup() {
  [[ -n $mounted ]] && { umount "$mnt" || umount -l "$mnt"; }
  [[ -n $loopdev ]] && losetup -d "$loopdev"
  if [[ -n $nbdfuse_pid ]]; then
    fusermount3 -u "$fuse" 2>/dev/null || fusermount -u "$fuse" 2>/dev/null || umount "$fuse" || true
    wait "$nbdfuse_pid" 2>/dev/null || true
  fi
  [[ -n $srv ]] && { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; }
  true
}
trap cleanup EXIT
mkdir -p "$fuse" "$mnt"
rm -f "${members[@]}" "$sock" "$trace"

"$SWAN_BIN" create --force --scheme "$SCHEME" --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
  --member-size "$MEMBER_SIZE" "${members[@]}" >"$DIR/create.log"
"$SWAN_BIN" serve --socket "$sock" --emulate "$PRESET" --emulate-age "$AGE" --record-trace "$trace" \
  "${members[@]}" 2>"$DIR/serve.log" &
srv=$!
uri="nbd+unix:///?socket=$sock"
for _ in $(seq 600); do nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.2; done
nbdinfo --size "$uri" >/dev/null || die "the server did not come up: $(cat "$DIR/serve.log")"

nbdfuse "$fuse" "$uri" >"$DIR/nbdfuse.log" 2>&1 &
nbdfuse_pid=$!
for _ in $(seq 300); do [[ -s $fuse/nbd ]] && break; sleep 0.1; done
[[ -s $fuse/nbd ]] || die "nbdfuse did not expose $fuse/nbd: $(cat "$DIR/nbdfuse.log")"
loopdev=$(losetup --find --show --direct-io=on --sector-size 4096 "$fuse/nbd")
: >"$phases"
now() { date +%s.%N; }
phase() { # NAME START END: one row of phases.tsv
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$phases"
}
t0=$(now)
mkfs.ext4 -q -F "$loopdev"
phase mkfs "$t0" "$(now)"
mount "$loopdev" "$mnt"
mounted=1
# A 16 MiB memtable (RocksDB's default is 64 MiB) so a Load of a few hundred MB reaches the
# device as flushes and compactions, as the paper's much larger Load did.
bench=(--db="$mnt/db" --num="$NUM" --value_size=1000 --compression_type=none --threads=1
  --write_buffer_size=16777216
  --use_direct_reads=true --use_direct_io_for_flush_and_compaction=true --seed=1)
t0=$(now)
db_bench --benchmarks=fillrandom "${bench[@]}" >"$DIR/load.log" 2>&1
phase load "$t0" "$(now)"
t0=$(now)
db_bench --benchmarks=readrandomwriterandom --readwritepercent=50 --use_existing_db=1 \
  --duration="$RUN_SECONDS" "${bench[@]}" >"$DIR/run-a.log" 2>&1
phase a "$t0" "$(now)"
umount "$mnt" && mounted=
losetup -d "$loopdev" && loopdev=
fusermount3 -u "$fuse" 2>/dev/null || fusermount -u "$fuse" 2>/dev/null || umount "$fuse"
wait "$nbdfuse_pid" || true
nbdfuse_pid=
kill "$srv"
wait "$srv" || die "swan serve did not stop cleanly: $(tail -5 "$DIR/serve.log")"
srv=
grep -q '^# end: ' "$trace" || die "the trace has no trailer: $(tail -5 "$DIR/serve.log")"

sim() { # MODE OUT [swan sim flags]
  local mode=$1 out=$2
  shift 2
  "$SWAN_BIN" sim --array "${members[0]}" --ssd "$PRESET" --age "$AGE" --trace "$trace" \
    --trace-format blkparse --replay "$mode" --quiet --out "$DIR/$out" "$@" >"$DIR/$out.log" 2>&1 ||
    die "swan sim --replay $mode failed: $(tail -5 "$DIR/$out.log")"
}
sim recorded sim-recorded
sim "closed=$DEPTH" sim-closed
# Each phase's simulated time: the closed-loop replay of the trace up to the phase's end,
# less that up to its start (the prefixes are replayed from the same aged array).
start=$(sed -n 's/^# start: .*(unix \([0-9.]*\)).*/\1/p' "$trace")
: >"$DIR/sim-phases.tsv"
while read -r name _ t1; do
  n=$(awk -v t="$t1" -v s="$start" 'NF == 11 && $6 == "D" && $7 ~ /^[RW]/ && $4 < t - s { n++ } END { print n + 0 }' "$trace")
  secs=0
  if ((n > 0)); then
    sim "closed=$DEPTH" "sim-closed-$name" --max-requests "$n"
    secs=$(sed -n 's/^replayed [0-9]* requests of .* in \([0-9.]*\) simulated s.*/\1/p' "$DIR/sim-closed-$name.log")
  fi
  printf '%s\t%s\t%s\n' "$name" "$n" "$secs" >>"$DIR/sim-phases.tsv"
done <"$phases"

python3 - "$trace" "$phases" "$DIR" "$SCHEME" "$RGROUPS" "$SSDS" "$MEMBER_SIZE" "$PRESET" "$AGE" "$DEPTH" <<'PY'
import re, sys
trace, phases, d, scheme, rg, ssds, size, preset, age, depth = sys.argv[1:]
start = None
rows = []  # (time_s, rwbs, bytes)
for line in open(trace):
    if line.startswith("# start:"):
        start = float(re.search(r"\(unix ([0-9.]+)\)", line).group(1))
    f = line.split()
    if len(f) == 11 and f[5] == "D":
        rows.append((float(f[3]), f[6], int(f[9]) * 512))
end = [l for l in open(trace) if l.startswith("# end: ")][-1].strip()

def ops(log, bench):
    for l in open(log):
        l = l.rsplit("\r", 1)[-1]
        if l.startswith(bench) and "ops/sec" in l:
            return float(re.search(r"([0-9.]+) ops/sec", l).group(1))
    return float("nan")

print(f"# {scheme} {rg}×{ssds}, {size} members, --emulate {preset} --emulate-age {age}; ext4 over nbdfuse + loop")
print(f"# trace: {end[2:]}")
simulated = {l.split()[0]: float(l.split()[2]) for l in open(f"{d}/sim-phases.tsv")}
print(f"{'phase':<6} {'wall s':>7} {'db_bench ops/s':>15} {'reads':>8} {'writes':>8} {'flushes':>8} {'read MiB':>9} "
      f"{'write MiB':>10} {'live MB/s':>10} {'sim s':>7} {'sim MB/s':>9}")
sim_before = 0.0
bench = {"load": ("load.log", "fillrandom"), "a": ("run-a.log", "readrandomwriterandom")}
for line in open(phases):
    name, t0, t1 = line.split()
    a, b = float(t0) - start, float(t1) - start
    sel = [r for r in rows if a <= r[0] < b]
    n = lambda k: sum(1 for r in sel if r[1].startswith(k))
    mib = lambda k: sum(r[2] for r in sel if r[1].startswith(k)) / 2**20
    o = ops(f"{d}/{bench[name][0]}", bench[name][1]) if name in bench else float("nan")
    data = sum(r[2] for r in sel if r[1][0] in "RW") / 1e6
    sim_s = simulated[name] - sim_before
    sim_before = simulated[name]
    sim_mbps = data / sim_s if sim_s > 0 else float("nan")
    print(f"{name:<6} {b - a:>7.1f} {o:>15.0f} {n('R'):>8} {n('W'):>8} {n('F'):>8} {mib('R'):>9.1f} "
          f"{mib('W'):>10.1f} {data / (b - a):>10.1f} {sim_s:>7.2f} {sim_mbps:>9.1f}")
print(f"(live MB/s: reads and writes the server received over the phase's wall time, paced by db_bench;\n"
      f" sim: the same requests replayed closed-loop, {depth} outstanding, on the simulated array: its capacity)")

print("\nswan sim over the same array, the whole trace (mkfs, Load, A):")
for mode, out in (("recorded", "sim-recorded"), (f"closed={depth}", "sim-closed")):
    text = open(f"{d}/{out}.log").read()
    m = re.search(r"replayed (\d+) requests of \S+ in ([0-9.]+) simulated s \(([0-9.]+) IOPS; read ([0-9.]+) MB/s, write ([0-9.]+) MB/s\)", text)
    lat = {k: re.search(k + r"\s+latency µs: mean ([0-9.]+)\s+p50 \d+\s+p99 (\d+)", text) for k in ("read", "write")}
    if not m:
        sys.exit(f"no replay summary in {d}/{out}.log")
    lats = "  ".join(f"{k} mean {v.group(1)} µs p99 {v.group(2)} µs" for k, v in lat.items() if v)
    print(f"  --replay {mode:<10} {m.group(1)} requests in {float(m.group(2)):.1f} s simulated: {m.group(3)} IOPS, "
          f"read {m.group(4)} MB/s, write {m.group(5)} MB/s; {lats}")
live = sum(r[2] for r in rows if r[1][0] in "RW") / 1e6
span = rows[-1][0] - rows[0][0] if rows else 0
print(f"  live (the trace):    {sum(1 for r in rows if r[1][0] in 'RW')} requests in {span:.1f} s wall: {live / span if span else 0:.1f} MB/s")
PY
