#!/usr/bin/env bash
# Two swan binaries side by side on one fio job, alternating, each run on a fresh array:
# the way to ask whether a change to the server costs anything on this noisy machine.
# A benchmark, not a test: it prints what it measured and asserts nothing.
#
#   scripts/ab-swan.sh OLD_BIN NEW_BIN                 # 4 KiB random writes, 3 pairs
#   PAIRS=5 BS=128k RW=write scripts/ab-swan.sh A B
#   MEMBERS=written BS=128k RW=write THREADS=1 scripts/ab-swan.sh A nbdkit
#   EMULATE=sata850pro MEMBER_SIZE=256M SIZE=710M BS=8k RUNTIME=40 THREADS=1 PERF=1 \
#     DIR=/dev/shm/swan-ab scripts/ab-swan.sh target/release/swan nbdkit   # SWAN0 with GC, profiled
set -euo pipefail
SCRIPT=ab-swan.sh

usage() {
  cat <<'USAGE'
Usage: scripts/ab-swan.sh BIN_A BIN_B

Runs one fio job (nbd engine, iodepth 32, RUNTIME s after a 2 s ramp) against `swan serve`
of BIN_A and of BIN_B in turn, PAIRS times, in the order A B B A A B ... (each binary goes
first as often as the other). Every run creates a fresh swan0 array over the member files
in DIR (their contents are lost), drops the page cache (as root), serves it and measures the
server's CPU time (utime + stime from /proc/PID/stat over fio's measured window). Prints one
line per run: the binary, IOPS, MB/s and server CPU µs per I/O.

Either binary may be the word `nbdkit`: nbdkit's file plugin over DIR/plain.img instead
(6 × MEMBER_SIZE; written full of zeros once, like bench-nbd.sh's image; with DIRECT=1 its
cache=none), for the ratio to the peer the bench compares with, measured the same way.

Environment:
  BS           fio block size                 (default 4k)
  RW           fio rw (randwrite, write, randread, read)   (default randwrite)
  FILL         a read job's region, written once (1 MiB writes) before it is read
                                              (default 4G)
  PAIRS        pairs of runs                  (default 3)
  RUNTIME      seconds measured per run       (default 8)
  MEMBER_SIZE  size of each of the 6 members, in MiB or GiB (256M, 2G)   (default 2G)
  SIZE         the region fio writes (default 8G; give a small array less than its
               volume, 60 % of it for GC to run as in sim-vs-live.sh; reads use FILL)
  EMULATE      a preset: swan serve --emulate PRESET --emulate-age EMULATE_AGE, each member
               timed as a model SSD (nbdkit is not emulated: its CPU per I/O is the peer's
               cost on the same job)       (default: none)
  EMULATE_AGE  the model SSDs' age         (default 0.6)
  PERF         1: record `perf record -g` of each swan server over the measured window to
               DIR/perf-LABEL-RUN.data and print its ten hottest symbols (needs perf)
                                              (default 0)
  DIRECT       1: swan serve --direct         (default 0)
  MEMBERS      sparse: members made afresh by `swan create` each run; written: members written full of zeros once (dd) and kept
               from run to run (`swan create --force`), as bench-nbd.sh does
                                              (default sparse)
  THREADS      1: also print each thread's CPU µs per I/O (from /proc/PID/task/*/stat,
               threads grouped by name with their numbers dropped, sampled from the
               end of the ramp to 0.5 s before fio's end, while the connection's threads
               live; divided by fio's IOPS times that window)   (default 0)
  DIR          where the member files go      (default /var/tmp/swan-ab)
  PORT         TCP port on 127.0.0.1          (default 11900)
USAGE
}

die() { echo "$SCRIPT: error: $*" >&2; exit 1; }

case ${1:-} in
  -h | --help) usage; exit 0 ;;
  -*) echo "$SCRIPT: unknown option '$1' (see --help)" >&2; exit 2 ;;
esac
[[ $# -eq 2 ]] || { echo "$SCRIPT: give two swan binaries (see --help)" >&2; exit 2; }
A=$1 B=$2
for bin in "$A" "$B"; do
  [[ $bin == nbdkit || -x $bin ]] || die "$bin is not an executable"
done
command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
BS=${BS:-4k} RW=${RW:-randwrite} PAIRS=${PAIRS:-3} RUNTIME=${RUNTIME:-8}
MEMBER_SIZE=${MEMBER_SIZE:-2G} FILL=${FILL:-4G} DIRECT=${DIRECT:-0} DIR=${DIR:-/var/tmp/swan-ab} PORT=${PORT:-11900}
MEMBERS=${MEMBERS:-sparse} THREADS=${THREADS:-0} SIZE=${SIZE:-8G} EMULATE=${EMULATE:-}
EMULATE_AGE=${EMULATE_AGE:-0.6} PERF=${PERF:-0}
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive number, not '$PAIRS'"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "RUNTIME must be a positive number of seconds, not '$RUNTIME'"
[[ $MEMBERS == sparse || $MEMBERS == written ]] || die "MEMBERS must be sparse or written, not '$MEMBERS'"
[[ $MEMBER_SIZE =~ ^[1-9][0-9]*[MG]$ ]] || die "MEMBER_SIZE must be a whole number of MiB or GiB (256M, 2G), not '$MEMBER_SIZE'"
[[ $PERF == 0 ]] || command -v perf >/dev/null || die "PERF=1 needs perf (apt-get install linux-perf)"
mkdir -p "$DIR"
members=("$DIR"/m{0..5})
ticks=$(getconf CLK_TCK)
mib=${MEMBER_SIZE%[MG]}
[[ $MEMBER_SIZE == *G ]] && mib=$((mib << 10))

# Files written full of zeros once (a marker beside each says so), kept from run to run:
# blocks the file system has allocated and written, as a disk image's are. (`swan create`
# punches out each member's metadata region; the data region stays written.)
written() {
  local f count=$1
  shift
  for f in "$@"; do
    [[ -f $f && -f $f.written && $(stat -c %s "$f") == $((count << 20)) ]] && continue
    echo "$SCRIPT: writing $f full of zeros ($count MiB)" >&2
    dd if=/dev/zero of="$f" bs=1M count="$count" status=none conv=fdatasync
    touch "$f.written"
  done
}

# utime+stime of every thread of process $1, one "name ticks" line each (numbers dropped
# from names, so the I/O threads count as one).
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*/stat; do
    # The name is in parentheses and may hold spaces; fields 14 and 15 follow it.
    sed -E 's/^[0-9]+ \((.*)\) (.*)$/\1\t\2/' "$t" 2>/dev/null |
      awk -F'\t' '{ split($2, f, " "); name = $1; gsub(/[0-9]+$/, "", name); print name "\t" f[12] + f[13] }' ||
      true # a thread that ended meanwhile
  done
}

# Start the server of run $1 (a binary or `nbdkit`); sets spid.
start_server() {
  local bin=$1 opts=()
  if [[ $bin == nbdkit ]]; then
    written $((6 * mib)) "$DIR/plain.img"
    sync
    [[ $(id -u) == 0 ]] && echo 3 >/proc/sys/vm/drop_caches
    [[ $DIRECT == 1 ]] && opts=(cache=none)
    nbdkit -f --exit-with-parent -p "$PORT" -i 127.0.0.1 file file="$DIR/plain.img" "${opts[@]}" \
      >"$DIR/serve.log" 2>&1 &
    spid=$!
    return
  fi
  [[ $DIRECT == 1 ]] && opts=(--direct)
  [[ -n $EMULATE ]] && opts+=(--emulate "$EMULATE" --emulate-age "$EMULATE_AGE")
  local force=()
  if [[ $MEMBERS == written ]]; then
    written "$mib" "${members[@]}"
    force=(--force)
  else
    rm -f "${members[@]}" "${members[@]/%/.written}"
  fi
  "$bin" create "${force[@]}" --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size "$MEMBER_SIZE" \
    --spare 10 "${members[@]}" >/dev/null
  sync
  [[ $(id -u) == 0 ]] && echo 3 >/proc/sys/vm/drop_caches
  "$bin" serve --listen "127.0.0.1:$PORT" "${opts[@]}" "${members[@]}" >"$DIR/serve.log" 2>&1 &
  spid=$!
}

# One run of binary $1 (labelled $2, run $3): prints its line.
run() {
  local bin=$1 label=$2 nth=$3 spid fpid t0 t1 perf_pid=
  start_server "$bin"
  for _ in $(seq 50); do
    fio --name=probe --ioengine=nbd --uri="nbd://127.0.0.1:$PORT" --rw=read --bs=4k --size=4k \
      --output=/dev/null >/dev/null 2>&1 && break
    sleep 0.1
  done
  local size=$SIZE
  if [[ $RW == *read ]]; then
    # Reads of blocks never written are answered with zeroes without touching a member.
    size=$FILL
    fio --name=fill --ioengine=nbd --uri="nbd://127.0.0.1:$PORT" --rw=write --bs=1m --iodepth=8 \
      --size="$size" --output=/dev/null >/dev/null 2>&1 || die "the fill before the reads failed"
  fi
  fio --name=ab --ioengine=nbd --uri="nbd://127.0.0.1:$PORT" --rw="$RW" --bs="$BS" --iodepth=32 \
    --size="$size" --time_based --runtime="$RUNTIME" --ramp_time=2 --output-format=json \
    --output="$DIR/fio.json" >/dev/null 2>&1 &
  fpid=$!
  sleep 2.1
  t0=$(awk '{print $14 + $15}' "/proc/$spid/stat")
  if [[ $PERF == 1 && $bin != nbdkit ]]; then
    perf record -q -g -p "$spid" -o "$DIR/perf-$label-$nth.data" -- sleep "$(awk -v r="$RUNTIME" 'BEGIN { print r - 0.5 }')" \
      >/dev/null 2>&1 &
    perf_pid=$!
  fi
  local w0 w1
  if [[ $THREADS == 1 ]]; then
    w0=$(date +%s.%N)
    thread_ticks "$spid" >"$DIR/threads.0"
    sleep "$(awk -v r="$RUNTIME" 'BEGIN { print r - 0.5 }')"
    w1=$(date +%s.%N)
    thread_ticks "$spid" >"$DIR/threads.1"
  fi
  wait "$fpid" || die "fio failed (see $DIR/fio.json)"
  [[ -n $perf_pid ]] && { wait "$perf_pid" || true; }
  t1=$(awk '{print $14 + $15}' "/proc/$spid/stat")
  kill -TERM "$spid"
  wait "$spid" || true
  python3 - "$DIR/fio.json" "$t0" "$t1" "$ticks" "$label" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
side = job["write"] if job["write"]["total_ios"] else job["read"]
t0, t1, hz = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
cpu_us = (t1 - t0) / hz * 1e6 / max(side["total_ios"], 1)
print(f"{sys.argv[5]}: {side['iops']:9.0f} IOPS {side['bw_bytes'] / 1e6:8.1f} MB/s {cpu_us:6.1f} µs CPU/IO")
PY
  if [[ $THREADS == 1 ]]; then
    python3 - "$DIR/fio.json" "$DIR/threads.0" "$DIR/threads.1" "$ticks" "$w0" "$w1" <<'PY'
import collections, json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
side = job["write"] if job["write"]["total_ios"] else job["read"]
ios = max(side["iops"] * (float(sys.argv[6]) - float(sys.argv[5])), 1)
def load(path):
    # Threads started after the first sample count from zero.
    per = collections.defaultdict(float)
    for line in open(path):
        name, ticks = line.rstrip("\n").rsplit("\t", 1)
        per[name] += float(ticks)
    return per
a, b, hz = load(sys.argv[2]), load(sys.argv[3]), float(sys.argv[4])
rows = sorted(((b[n] - a.get(n, 0.0)) / hz * 1e6 / ios, n) for n in b)
print("    threads (µs CPU/IO): " + ", ".join(f"{n or '?'} {us:.1f}" for us, n in reversed(rows) if us > 0.05))
PY
  fi
  if [[ -n $perf_pid ]]; then
    echo "    perf ($DIR/perf-$label-$nth.data), hottest symbols by self time:"
    perf report -i "$DIR/perf-$label-$nth.data" --no-children --sort symbol --stdio 2>/dev/null |
      grep -E '^ +[0-9.]+%' | sed -E 's/[ -]+$//; s/^/     /' | head -10 || true # head ends the pipe early
  fi
}

echo "$SCRIPT: $RW $BS, $PAIRS pairs of ${RUNTIME} s, A=$A B=$B" >&2
for ((i = 0; i < PAIRS; i++)); do
  if ((i % 2 == 0)); then run "$A" A "$i"; run "$B" B "$i"; else run "$B" B "$i"; run "$A" A "$i"; fi
done
if [[ $MEMBERS == sparse ]]; then rm -f "${members[@]}" "${members[@]/%/.written}"; fi
