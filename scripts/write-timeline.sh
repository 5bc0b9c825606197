#!/usr/bin/env bash
# Second by second, what one server does with one fio write job, and what the page cache and
# the disk under it do meanwhile: the client's IOPS, the kernel's dirty and writeback pages,
# and the disk's read and write rates. A measurement, not a test: it asserts nothing.
#
#   scripts/write-timeline.sh                          # swan, then nbdkit: 4 KiB random writes, 30 s
#   SERVERS=swan JOB=seqwrite-128k scripts/write-timeline.sh
#   scripts/write-timeline.sh --help
#
# It shows where a buffered write benchmark's figures come from: a server that overwrites one
# file in place re-dirties pages the page cache already holds, while a log writes every block
# to a new page, which the kernel must write back (and, once the log wraps, GC must move and a
# sync point must make durable before a segment is reused).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
Usage: scripts/write-timeline.sh [--help]

Runs one fio job (nbd engine, iodepth 32, time based) against each server in SERVERS, each
freshly started over freshly made files in BENCH_DIR with the page cache dropped first, and
prints one markdown table per server, a row per second:

  s  IOPS  client MB/s  Dirty MB  Writeback MB  disk read MB/s  disk write MB/s

IOPS from fio's per-second log; Dirty and Writeback from /proc/meminfo; disk rates from
/proc/diskstats for the device BENCH_DIR is on (its whole disk). Servers:

  swan    swan create --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size MEMBER_SIZE
            --spare SPARE (6 files), then swan serve over them (buffered)
  nbdkit  nbdkit's file plugin over one file of swan's export size, written full once (as
            scripts/bench-nbd.sh prepares it)

Environment:
  SERVERS      subset of "swan nbdkit"                               (default both)
  JOB          randwrite-4k | randwrite-8k | seqwrite-128k           (default randwrite-4k)
  RUNTIME      seconds of fio                                        (default 30)
  MEMBER_SIZE  size of each of swan's 6 member files                 (default 1G)
  SPARE        swan's spare space, percent                           (default 10)
  BENCH_DIR    scratch dir on a real disk                            (default /var/tmp/swan-timeline)
  SWAN_BIN     swan binary                                           (default target/release/swan)
  PORT         TCP port on 127.0.0.1                                 (default 10960)
EOF
}
SCRIPT=write-timeline.sh
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"
# shellcheck source=scripts/lib/debs.sh
source scripts/lib/debs.sh
install_debs write-timeline.sh fio:fio nbdkit:nbdkit nbdinfo:libnbd-bin
need_cmd python3 || die "python3 not found"

SERVERS=${SERVERS:-swan nbdkit}
JOB=${JOB:-randwrite-4k}
RUNTIME=${RUNTIME:-30}
MEMBER_SIZE=${MEMBER_SIZE:-1G}
SPARE=${SPARE:-10}
BENCH_DIR=${BENCH_DIR:-/var/tmp/swan-timeline}
SWAN_BIN=${SWAN_BIN:-target/release/swan}
PORT=${PORT:-10960}
case $JOB in
  randwrite-4k) RW=randwrite BS=4k ;;
  randwrite-8k) RW=randwrite BS=8k ;;
  seqwrite-128k) RW=write BS=128k ;;
  *) die "unknown JOB '$JOB' (randwrite-4k randwrite-8k seqwrite-128k)" ;;
esac
[[ $RUNTIME =~ ^[0-9]+$ ]] && ((RUNTIME > 0)) || die "RUNTIME must be a positive integer (got '$RUNTIME')"
for s in $SERVERS; do
  case $s in swan | nbdkit) ;; *) die "unknown server '$s' in SERVERS (swan nbdkit)" ;; esac
done
if [[ ! -x $SWAN_BIN ]]; then
  log "building $SWAN_BIN"
  cargo build --release -p swan-cli
fi

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
# The whole disk under BENCH_DIR, as /proc/diskstats names it.
source_dev=$(df --output=source "$BENCH_DIR" | tail -1)
disk=$(lsblk -no pkname "$source_dev" 2>/dev/null | head -1)
[[ -n $disk ]] || disk=$(basename "$source_dev")
grep -q " $disk " /proc/diskstats || die "no /proc/diskstats entry for $disk (BENCH_DIR=$BENCH_DIR on $source_dev)"
MEMBERS=()
for i in 0 1 2 3 4 5; do MEMBERS+=("$BENCH_DIR/m$i"); done
PLAIN=$BENCH_DIR/plain.img

SRV_PID= SAMPLER_PID=
cleanup() {
  [[ -n $SAMPLER_PID ]] && kill "$SAMPLER_PID" 2>/dev/null
  if [[ -n $SRV_PID ]]; then kill -TERM "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; fi
  return 0
}
trap cleanup EXIT

# Make swan's members (every run), and the peer's file once, of swan's export size.
"$SWAN_BIN" create --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size "$MEMBER_SIZE" \
  --spare "$SPARE" --force "${MEMBERS[@]}" >"$BENCH_DIR/create.log" 2>&1 || { cat "$BENCH_DIR/create.log" >&2; die "swan create failed"; }
"$SWAN_BIN" serve --listen "127.0.0.1:$PORT" "${MEMBERS[@]}" >"$BENCH_DIR/size.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 100); do size=$(nbdinfo --size "nbd://127.0.0.1:$PORT" 2>/dev/null) && break; sleep 0.2; done
kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true; SRV_PID=
[[ ${size:-} =~ ^[0-9]+$ ]] || die "swan did not report its export size; log: $BENCH_DIR/size.log"
if [[ " $SERVERS " == *" nbdkit "* ]] && [[ ! -f $PLAIN || $(stat -c %s "$PLAIN") != "$size" ]]; then
  log "writing $PLAIN ($size bytes) full of zeros"
  head -c "$size" /dev/zero >"$PLAIN"
fi

sample() { # every second: uptime, Dirty kB, Writeback kB, disk sectors read, sectors written
  while :; do
    awk -v d="$disk" '
      FILENAME == "/proc/uptime" { t = $1 }
      FILENAME == "/proc/meminfo" && $1 == "Dirty:" { dirty = $2 }
      FILENAME == "/proc/meminfo" && $1 == "Writeback:" { wb = $2 }
      FILENAME == "/proc/diskstats" && $3 == d { rd = $6; wr = $10 }
      END { print t, dirty, wb, rd, wr }' /proc/uptime /proc/meminfo /proc/diskstats
    sleep 1
  done
}

for server in $SERVERS; do
  if [[ $server == swan ]]; then
    "$SWAN_BIN" create --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size "$MEMBER_SIZE" \
      --spare "$SPARE" --force "${MEMBERS[@]}" >"$BENCH_DIR/create.log" 2>&1 || die "swan create failed"
    cmd=("$SWAN_BIN" serve --listen "127.0.0.1:$PORT" "${MEMBERS[@]}")
  else
    cmd=(nbdkit -f --exit-with-parent -p "$PORT" -i 127.0.0.1 file "file=$PLAIN")
  fi
  sync
  [[ -w /proc/sys/vm/drop_caches ]] && echo 3 >/proc/sys/vm/drop_caches
  "${cmd[@]}" >"$BENCH_DIR/$server.log" 2>&1 </dev/null &
  SRV_PID=$!
  for _ in $(seq 100); do nbdinfo --size "nbd://127.0.0.1:$PORT" >/dev/null 2>&1 && break; sleep 0.2; done
  kill -0 "$SRV_PID" 2>/dev/null || die "$server exited at start; log: $BENCH_DIR/$server.log"
  rm -f "$BENCH_DIR"/fio_iops.*.log
  sample >"$BENCH_DIR/samples.txt" &
  SAMPLER_PID=$!
  log "$server: $JOB for ${RUNTIME}s"
  fio --name=timeline --ioengine=nbd --uri="nbd://127.0.0.1:$PORT" --rw="$RW" --bs="$BS" --iodepth=32 \
    --size="$size" --time_based --runtime="$RUNTIME" --randseed=1 \
    --write_iops_log="$BENCH_DIR/fio" --log_avg_msec=1000 --output="$BENCH_DIR/fio.txt" </dev/null ||
    die "fio failed against $server; see $BENCH_DIR/fio.txt"
  kill "$SAMPLER_PID" 2>/dev/null; wait "$SAMPLER_PID" 2>/dev/null || true; SAMPLER_PID=
  kill -TERM "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true; SRV_PID=
  python3 - "$server" "$JOB" "$BS" "$BENCH_DIR/samples.txt" "$BENCH_DIR"/fio_iops.1.log <<'EOF'
import sys
server, job, bs, samples, iops_log = sys.argv[1:6]
bs = int(bs.rstrip("k")) * 1024
iops = []
for line in open(iops_log):
    ms, value = [int(x) for x in line.split(",")[:2]]
    iops.append((ms / 1000, value))
rows = [[float(x) for x in line.split()] for line in open(samples) if len(line.split()) == 5]
print(f"\n{server}, {job} (buffered), second by second:\n")
print("| s | IOPS | client MB/s | Dirty MB | Writeback MB | disk read MB/s | disk write MB/s |")
print("|---:|---:|---:|---:|---:|---:|---:|")
t0 = rows[0][0] if rows else 0
pairs = list(zip(rows, rows[1:]))
for at, value in iops:
    if not pairs:
        break
    # The sampler's second that ends nearest the client's.
    prev, cur = min(pairs, key=lambda p: abs(p[1][0] - t0 - at))
    dt = cur[0] - prev[0]
    mb = lambda sectors: (sectors * 512 / 1e6) / dt
    print(f"| {at:.0f} | {value:,} | {value * bs / 1e6:,.0f} | {cur[1] / 1024:,.0f} | {cur[2] / 1024:,.0f} "
          f"| {mb(cur[3] - prev[3]):,.0f} | {mb(cur[4] - prev[4]):,.0f} |")
iops = dict(iops)
total = sum(iops.values())
print(f"\nmean {total / max(len(iops), 1):,.0f} IOPS over {len(iops)} s")
EOF
done
