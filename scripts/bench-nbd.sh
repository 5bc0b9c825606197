#!/usr/bin/env bash
# Benchmark swan's NBD server against the peers an operator would otherwise put in front of
# the same disk: nbdkit's file plugin and qemu-nbd. A benchmark, not a test: it prints a
# markdown table and writes it to $OUT; it asserts nothing about the figures.
#
#   scripts/bench-nbd.sh                                       # everything (~55 min)
#   SERVERS="nbdkit qemu-nbd" RUNTIME=5 RUNS=1 scripts/bench-nbd.sh   # the peers alone, quickly
#   scripts/bench-nbd.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

usage() {
  cat <<'EOF'
Usage: scripts/bench-nbd.sh [--help]

Compares NBD servers over the same disk with fio's nbd engine (one job, iodepth 32). A
"fill" below is a sequential 1 MiB write pass over the whole export, done by a separate fio
run before the measured one, for every server alike, and not measured.

Before the log wraps (swan starts each run on a fresh, empty array):
  randwrite-4k    4 KiB random writes
  randwrite-8k    8 KiB random writes
  seqwrite-128k   128 KiB sequential writes (IOPS and MB/s)
  randread-4k     4 KiB random reads after a fill, so they hit written data (swan checks
                  every block it reads against its CRC; the table gives the share checked)
After the log wraps (swan's volume written once over, so GC runs inside the measurement):
  seqwrite-128k-wrapped  a fill, then 128 KiB sequential writes: they overwrite the
                  volume in the order it was written, so swan's victims should be empty and
                  GC move nothing; also reported as a ratio to the server's seqwrite-128k
  randwrite-4k-full      a fill, then 4 KiB random writes over the full volume (SPARE %
                  spare): swan's GC moves live blocks; reported with swan's blocks moved per
                  block written (m/w) and the target 0.8 x swan's randwrite-4k IOPS /
                  (1 + m/w)

For swan, `swan status --json` is read at both ends of the measured window (see CPU per I/O
below): user_bytes_written / 4096 gives user blocks written, gc_blocks_moved the blocks GC
moved, gc_onset_user_bytes whether GC had begun (the log wrapped), reads_verified and
reads_unverified against user_bytes_read / 4096 whether every block read was checked
against its CRC. These
counters count from the server's start (they restart at 0 with each server process), so the
window's differences are what it did. A pre-wrap run that writes more than the volume holds
wraps the log within the window; the table says in how many runs that happened.

Servers (each over files in BENCH_DIR):
  swan      target/release/swan create --force --scheme swan0 --rgroups 3 --ssds-per-rgroup 2
              --member-size MEMBER_SIZE --spare SPARE DIR/m0 .. DIR/m5    (per run)
            target/release/swan serve --listen 127.0.0.1:PORT [--direct] DIR/m0 .. DIR/m5
            (built with `cargo build --release -p swan-cli` if missing or lacking `serve`)
  nbdkit    nbdkit -f -p PORT -i 127.0.0.1 file DIR/plain.img [direct-I/O args]
  qemu-nbd  qemu-nbd -f raw -p PORT -b 127.0.0.1 -x '' -t --shared=8
              --cache=writeback --aio=threads  (buffered) | --cache=none --aio=native (direct)
            DIR/plain.img
  plain.img is one file of exactly swan's export size (as `nbdinfo --size` reports it),
  written full of zeros once, so it is allocated on the same disk as swan's members;
  swan's member files are written full of zeros once too (each array is created anew over
  them with --force), so every server writes over allocated blocks.

Modes:
  buffered  through the page cache
  direct    swan --direct (O_DIRECT members), qemu-nbd --cache=none --aio=native (O_DIRECT),
            nbdkit cache=none, the file plugin's closest option (in nbdkit 1.32, Debian 12's,
            it is buffered I/O that evicts each request's pages afterwards, not O_DIRECT;
            the table's notes say which; NBDKIT_DIRECT_ARGS overrides)

For each mode and job, run r (1..RUNS) starts the servers one after another in SERVERS'
order rotated left by r-1 (run 1: swan nbdkit qemu-nbd; run 2: nbdkit qemu-nbd swan; run 3:
qemu-nbd swan nbdkit; ...), so no server always goes first or last. Every run of every
server is a fresh server process on a fresh port (swan: on a freshly created array, so each
of its runs starts before the log wraps; RAMP+RUNTIME of writes can still write more than
the volume holds, and then GC runs inside the measurement, as it would for an operator),
started after the page cache is dropped (when /proc/sys/vm/drop_caches is writable) and once
`nbdinfo` answers; it gets one fio run (--randseed=r, the same for every server, so runs do
not repeat each other's random offsets), after its fill if the job has one; then its peak
RSS (VmHWM) is read and it is stopped with SIGTERM and waited for. The median of the RUNS
runs is reported. Servers are killed on any exit of this script.

Server CPU per I/O: the server process's utime+stime (fields 14 and 15 of /proc/PID/stat,
all threads, in clock ticks of 1/`getconf CLK_TCK` s) is read when fio's ramp ends (RAMP
seconds after fio's job process connects, which a background sampler polls for every 10 ms;
fio's own start-up before that takes a few hundred ms) and as soon as fio exits, and the
difference is divided by the I/Os fio counted after its ramp (jobs[0] read+write
total_ios). The window is approximate to a scheduler tick (10 ms at CLK_TCK 100); the notes
give how far it was from fio's measured runtime. A fill is a separate fio run, outside the
window. swan's status is read just after each CPU sample (so the server's work to answer
it, a small request on its control socket, is in the window once, at its start). The
table gives the median over runs in µs per I/O, and swan's / nbdkit's.

Environment:
  RUNTIME       seconds per fio run, after a 2 s ramp          (default 15)
  RUNS          fio runs per cell; the median is reported      (default 3)
  MEMBER_SIZE   size of each of swan's 6 member files   (default 1G: a 4.6 GiB volume)
                A pre-wrap run stays before the wrap only if the volume holds what it
                writes in RAMP+RUNTIME (at 770 MB/s, 17 s is 13 GB); the table flags swan
                runs whose log wrapped within the window. Each fill writes the whole volume.
  SPARE         swan's spare space, percent of data capacity   (default 10, swan's own);
                the export (and so plain.img) shrinks as it grows
  BENCH_DIR     scratch dir, on a real disk (not tmpfs)        (default /var/tmp/swan-bench)
  OUT           markdown report                                (default repro/bench-nbd.md)
  SERVERS       subset of "swan nbdkit qemu-nbd"               (default all three)
  MODES         subset of "buffered direct"                    (default both)
  JOBS          subset of the jobs above, in the order given      (default all six:
                "randwrite-4k randwrite-8k seqwrite-128k randread-4k seqwrite-128k-wrapped
                randwrite-4k-full"; the post-wrap ratios need their pre-wrap job too)
  EXPORT_SIZE   export size in bytes when swan is not run; otherwise the size swan reported
                last time in BENCH_DIR (swan-export-size), else 6 x MEMBER_SIZE
  SWAN_BIN      swan binary                                    (default target/release/swan)
  PORT_BASE     first TCP port tried on 127.0.0.1              (default 10900)
  READY_TIMEOUT seconds to wait for a server to answer         (default 60)
  STOP_TIMEOUT  seconds to wait for a server to exit on SIGTERM (default 60)
  NBDKIT_DIRECT_ARGS  override the nbdkit file-plugin args used in direct mode
  ALLOW_TMPFS=1 run even if BENCH_DIR is on tmpfs (figures then measure memory, not a disk)

Raw fio JSON of every run goes to BENCH_DIR/raw/<timestamp>/, server logs beside it.
Needs fio (with the nbd engine), nbdkit, qemu-nbd, nbdinfo and python3; as root the missing
Debian packages (fio nbdkit qemu-utils libnbd-bin) are installed with apt-get.
EOF
}

SCRIPT=bench-nbd.sh
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"
# shellcheck source=scripts/lib/debs.sh
source scripts/lib/debs.sh

RUNTIME=${RUNTIME:-15}
RUNS=${RUNS:-3}
MEMBER_SIZE=${MEMBER_SIZE:-1G}
SPARE=${SPARE:-10}
BENCH_DIR=${BENCH_DIR:-/var/tmp/swan-bench}
OUT=${OUT:-repro/bench-nbd.md}
SERVERS=${SERVERS:-swan nbdkit qemu-nbd}
MODES=${MODES:-buffered direct}
ALL_JOBS="randwrite-4k randwrite-8k seqwrite-128k randread-4k seqwrite-128k-wrapped randwrite-4k-full"
JOBS=${JOBS:-$ALL_JOBS}
SWAN_BIN=${SWAN_BIN:-target/release/swan}
PORT_BASE=${PORT_BASE:-10900}
READY_TIMEOUT=${READY_TIMEOUT:-60}
STOP_TIMEOUT=${STOP_TIMEOUT:-60}
IODEPTH=32
RAMP=2

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
is_uint "$RUNTIME" && ((RUNTIME > 0)) || die "RUNTIME must be a positive integer (got '$RUNTIME')"
is_uint "$RUNS" && ((RUNS > 0)) || die "RUNS must be a positive integer (got '$RUNS')"
is_uint "$SPARE" && ((SPARE < 100)) || die "SPARE must be a whole percent below 100 (got '$SPARE')"
is_uint "$PORT_BASE" && ((PORT_BASE > 1023 && PORT_BASE < 65000)) || die "PORT_BASE must be in 1024..64999"
is_uint "$READY_TIMEOUT" || die "READY_TIMEOUT must be an integer"
is_uint "$STOP_TIMEOUT" || die "STOP_TIMEOUT must be an integer"
read -r -a SERVER_LIST <<<"$SERVERS"
read -r -a MODE_LIST <<<"$MODES"
read -r -a JOB_LIST <<<"$JOBS"
((${#SERVER_LIST[@]})) || die "SERVERS is empty"
((${#MODE_LIST[@]})) || die "MODES is empty"
((${#JOB_LIST[@]})) || die "JOBS is empty"
for s in "${SERVER_LIST[@]}"; do
  case $s in swan | nbdkit | qemu-nbd) ;; *) die "unknown server '$s' in SERVERS (swan nbdkit qemu-nbd)" ;; esac
done
for m in "${MODE_LIST[@]}"; do
  case $m in buffered | direct) ;; *) die "unknown mode '$m' in MODES (buffered direct)" ;; esac
done

# job name -> fio --rw and --bs, and whether a sequential 1 MiB write pass over the whole
# export comes first (not measured)
job_rw() {
  case $1 in
    randwrite-4k | randwrite-8k | randwrite-4k-full) echo randwrite ;;
    seqwrite-128k | seqwrite-128k-wrapped) echo write ;;
    randread-4k) echo randread ;;
    *) return 1 ;;
  esac
}
job_bs() {
  case $1 in
    randwrite-4k | randread-4k | randwrite-4k-full) echo 4k ;;
    randwrite-8k) echo 8k ;;
    seqwrite-128k | seqwrite-128k-wrapped) echo 128k ;;
    *) return 1 ;;
  esac
}
job_prefilled() {
  case $1 in
    randread-4k | seqwrite-128k-wrapped | randwrite-4k-full) return 0 ;;
    *) return 1 ;;
  esac
}
for j in "${JOB_LIST[@]}"; do
  job_rw "$j" >/dev/null || die "unknown job '$j' in JOBS ($ALL_JOBS)"
done
has_server() { [[ " ${SERVER_LIST[*]} " == *" $1 "* ]]; }

# ---------------------------------------------------------------- tools
DEB_TOOLS=(fio:fio nbdkit:nbdkit qemu-nbd:qemu-utils nbdinfo:libnbd-bin)
install_debs bench-nbd.sh "${DEB_TOOLS[@]}"
need_cmd python3 || die "python3 not found (the summary needs it)"
[[ -n ${EPOCHREALTIME:-} ]] || die "this bash ($BASH_VERSION) has no EPOCHREALTIME; bash 5 or later is needed"
CLK_TCK=$(getconf CLK_TCK) && is_uint "$CLK_TCK" && ((CLK_TCK > 0)) || die "getconf CLK_TCK gave '${CLK_TCK:-}'"
fio --enghelp=nbd >/dev/null 2>&1 || die "this fio ($(fio --version)) has no nbd ioengine (Debian's fio has it)"

# ---------------------------------------------------------------- scratch dir
mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd)
fstype=$(df --output=fstype "$BENCH_DIR" | tail -1 | tr -d ' ')
if [[ $fstype == tmpfs || $fstype == ramfs ]] && [[ ${ALLOW_TMPFS:-0} != 1 ]]; then
  die "BENCH_DIR=$BENCH_DIR is on $fstype: the figures would measure memory, not a disk (set BENCH_DIR to a disk, or ALLOW_TMPFS=1)"
fi
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RAW=$BENCH_DIR/raw/$STAMP
mkdir -p "$RAW/logs"
RESULTS=$RAW/results.tsv
META=$RAW/meta.tsv
: >"$RESULTS"
: >"$META"
meta() { printf '%s\t%s\n' "$1" "$2" >>"$META"; }
MEMBERS=()
for i in 0 1 2 3 4 5; do MEMBERS+=("$BENCH_DIR/m$i"); done
PLAIN=$BENCH_DIR/plain.img

# ---------------------------------------------------------------- server lifecycle
SRV_PID=
SRV_PORT=
SRV_NAME=
SRV_KIND=
NEXT_PORT=$PORT_BASE

FIO_PID=
cleanup() {
  local rc=$?
  if [[ -n $FIO_PID ]]; then kill -TERM "$FIO_PID" 2>/dev/null || true; wait "$FIO_PID" 2>/dev/null || true; fi
  if [[ -n $SAMPLER_PID ]]; then kill -TERM "$SAMPLER_PID" 2>/dev/null || true; wait "$SAMPLER_PID" 2>/dev/null || true; fi
  if [[ -n $SRV_PID ]] && kill -0 "$SRV_PID" 2>/dev/null; then
    log "stopping $SRV_NAME (pid $SRV_PID) on exit"
    kill -TERM "$SRV_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
fresh_port() {
  while port_in_use "$NEXT_PORT"; do NEXT_PORT=$((NEXT_PORT + 1)); done
  ((NEXT_PORT < 65535)) || die "ran out of ports"
  SRV_PORT=$NEXT_PORT
  NEXT_PORT=$((NEXT_PORT + 1))
}

drop_caches() {
  sync
  if [[ -w /proc/sys/vm/drop_caches ]]; then echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true; fi
}

# The nbdkit file-plugin arguments for each mode, chosen from what the installed plugin knows.
NBDKIT_HELP=$(nbdkit file --help 2>&1 || true)
NBDKIT_BUFFERED_ARGS=()
NBDKIT_DIRECT=(cache=none)
if [[ -n ${NBDKIT_DIRECT_ARGS:-} ]]; then
  read -r -a NBDKIT_DIRECT <<<"$NBDKIT_DIRECT_ARGS"
  NBDKIT_DIRECT_NOTE="args from NBDKIT_DIRECT_ARGS"
elif grep -qi 'o_direct' <<<"$NBDKIT_HELP"; then
  NBDKIT_DIRECT_NOTE="cache=none; this nbdkit's 'file --help' mentions O_DIRECT: check it is what cache=none selects, or set NBDKIT_DIRECT_ARGS"
else
  NBDKIT_DIRECT_NOTE="this nbdkit's file plugin has no O_DIRECT option ('nbdkit file --help'); cache=none keeps buffered I/O but evicts the pages of each request from the page cache afterwards, the closest it offers"
fi

server_cmd() { # server mode port -> the command line in SRV_CMD
  local server=$1 mode=$2 port=$3
  case $server in
    swan)
      SRV_CMD=("$SWAN_BIN" serve --listen "127.0.0.1:$port")
      [[ $mode == direct ]] && SRV_CMD+=(--direct)
      SRV_CMD+=("${MEMBERS[@]}")
      ;;
    nbdkit)
      SRV_CMD=(nbdkit -f --exit-with-parent --log=stderr -p "$port" -i 127.0.0.1 file "file=$PLAIN")
      if [[ $mode == direct ]]; then SRV_CMD+=("${NBDKIT_DIRECT[@]}"); else SRV_CMD+=("${NBDKIT_BUFFERED_ARGS[@]}"); fi
      ;;
    qemu-nbd)
      SRV_CMD=(qemu-nbd -f raw -p "$port" -b 127.0.0.1 -x '' -t --shared=8)
      if [[ $mode == direct ]]; then SRV_CMD+=(--cache=none --aio=native); else SRV_CMD+=(--cache=writeback --aio=threads); fi
      SRV_CMD+=("$PLAIN")
      ;;
  esac
}

SIZE_SEEN=
start_server() { # server mode tag
  local server=$1 mode=$2 tag=$3 deadline size
  drop_caches
  fresh_port
  server_cmd "$server" "$mode" "$SRV_PORT"
  SRV_NAME="$server/$mode"
  SRV_KIND=$server
  SRV_LOG=$RAW/logs/$server-$mode-$tag.log
  echo "\$ $(printf '%q ' "${SRV_CMD[@]}")" >"$SRV_LOG"
  "${SRV_CMD[@]}" >>"$SRV_LOG" 2>&1 </dev/null &
  SRV_PID=$!
  deadline=$((SECONDS + READY_TIMEOUT))
  while :; do
    if ! kill -0 "$SRV_PID" 2>/dev/null; then
      wait "$SRV_PID" 2>/dev/null || true
      SRV_PID=
      tail -n 20 "$SRV_LOG" >&2
      die "$server ($mode) exited before answering on port $SRV_PORT; log: $SRV_LOG"
    fi
    if size=$(nbdinfo --size "nbd://127.0.0.1:$SRV_PORT" 2>/dev/null) && is_uint "$size"; then
      SIZE_SEEN=$size
      return 0
    fi
    ((SECONDS < deadline)) || die "$server ($mode) did not answer on port $SRV_PORT within ${READY_TIMEOUT}s; log: $SRV_LOG"
    sleep 0.2
  done
}

PEAK_KB=0
CUR_KB=0
stop_server() { # records VmHWM/VmRSS of the running server, SIGTERMs it, waits for it
  local pid=$SRV_PID rc=0 deadline
  PEAK_KB=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  CUR_KB=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      SRV_PID=
      die "$SRV_NAME (pid $pid) did not exit within ${STOP_TIMEOUT}s of SIGTERM; killed it. log: $SRV_LOG"
    fi
    sleep 0.1
  done
  wait "$pid" 2>/dev/null || rc=$?
  SRV_PID=
  # 0, or 143 (killed by the TERM signal itself), are both a clean stop.
  if ((rc != 0 && rc != 143)); then
    log "warning: $SRV_NAME exited with status $rc after SIGTERM; log: $SRV_LOG"
  fi
}

# The server's CPU time so far in clock ticks (getconf CLK_TCK a second): utime + stime,
# fields 14 and 15 of /proc/PID/stat (counted after the ')' that ends the command name, which
# may hold spaces), summed over all of its threads, live and ended.
cpu_ticks() { # pid
  local stat f
  stat=$(<"/proc/$1/stat") || return 1
  read -r -a f <<<"${stat##*) }"
  echo $((f[11] + f[12]))
}

# One sample of the running server into FILE: "ticks epoch-seconds"; for swan then also its
# `swan status --json` (user bytes written, GC blocks moved, ...) into FILE.status. The CPU
# is read first, so that the status call's own CPU falls outside the window's end.
sample_server() { # file
  local ticks
  ticks=$(cpu_ticks "$SRV_PID") || return 1
  printf '%s %s\n' "$ticks" "$EPOCHREALTIME" >"$1"
  if [[ $SRV_KIND == swan ]]; then
    "$SWAN_BIN" status --json "${MEMBERS[0]}" >"$1.status" 2>"$1.status.err" || return 1
  fi
}

# Whether an established TCP connection has local port HEX (the server's side of a client's).
connected() { # port in 4 hex digits, as /proc/net/tcp writes it
  local _sl loc _rem st _rest
  while read -r _sl loc _rem st _rest; do
    [[ $st == 01 && $loc == *":$1" ]] && return 0
  done </proc/net/tcp
  return 1
}

# fio spends a few hundred ms starting up (its main process probes the export's size over
# a short NBD connection of its own, then forks the job process, which connects and starts
# its I/O and its ramp at once). So the end of the ramp is RAMP seconds after the job
# process's connection: wait for the job process, then for its connection (polled every
# 10 ms), then RAMP seconds, then sample the server.
sample_at_ramp_end() { # fio-pid file
  local fio=$1 file=$2 kids='' hex
  hex=$(printf '%04X' "$SRV_PORT")
  while [[ -z $kids ]]; do
    kill -0 "$fio" 2>/dev/null || return 1
    # (the file has no newline, so read fails at its end after setting kids)
    read -r kids <"/proc/$fio/task/$fio/children" 2>/dev/null || true
    [[ -n $kids ]] || sleep 0.01
  done
  until connected "$hex"; do
    kill -0 "$fio" 2>/dev/null || return 1
    sleep 0.01
  done
  sleep "$RAMP"
  sample_server "$file"
}

SAMPLER_PID=
run_fio() { # name rw bs size output [extra fio args...]; SAMPLE=1: sample the server at ramp end and at the end
  local name=$1 rw=$2 bs=$3 size=$4 out=$5
  shift 5
  local rc=0
  rm -f "$out".cpu-*
  # In the background and waited for, so that a signal to this script stops it at once.
  fio --name="$name" --ioengine=nbd --uri="nbd://127.0.0.1:$SRV_PORT" \
    --rw="$rw" --bs="$bs" --iodepth="$IODEPTH" --numjobs=1 --size="$size" \
    --output-format=json --output="$out" "$@" >>"$RAW/logs/fio.log" 2>&1 </dev/null &
  FIO_PID=$!
  # fio counts I/Os from the end of its ramp; the server's CPU is read then and as soon as
  # fio has exited.
  if [[ ${SAMPLE:-0} == 1 ]]; then
    sample_at_ramp_end "$FIO_PID" "$out.cpu-start" &
    SAMPLER_PID=$!
  fi
  wait "$FIO_PID" || rc=$?
  FIO_PID=
  if ((rc != 0)); then
    tail -n 20 "$RAW/logs/fio.log" >&2
    die "fio $name failed against $SRV_NAME; see $RAW/logs/fio.log and $SRV_LOG"
  fi
  if [[ -n $SAMPLER_PID ]]; then
    sample_server "$out.cpu-end" || die "could not sample $SRV_NAME (pid $SRV_PID: /proc/$SRV_PID/stat, or swan status, see $out.cpu-end.status.err) after fio $name; log: $SRV_LOG"
    if kill -0 "$SAMPLER_PID" 2>/dev/null; then
      die "fio $name against $SRV_NAME ended before its ${RAMP}s ramp did; no CPU window to measure"
    fi
    wait "$SAMPLER_PID" || die "could not sample $SRV_NAME (pid $SRV_PID) at the end of fio's ramp (did fio's job process connect? swan status: $out.cpu-start.status.err); log: $SRV_LOG"
    SAMPLER_PID=
    [[ -s $out.cpu-start ]] || die "no CPU sample of $SRV_NAME at the end of fio's ramp ($out.cpu-start)"
  fi
}

# ---------------------------------------------------------------- swan binary and members
bytes_of() { numfmt --from=iec "${1%B}" 2>/dev/null || die "cannot parse size '$1'"; }

# The member files are written full of zeros once, as plain.img is, so that every server
# writes over blocks its file system has already allocated; each array is then created anew
# over them (--force). swan leaves a file member's blocks allocated where it frees segments
# (no --punch-holes), so they stay allocated from run to run (all but the metadata area,
# which each create clears). Checked once per benchmark.
MEMBERS_READY=0
allocated_members() {
  local want m have alloc
  ((MEMBERS_READY == 0)) || return 0
  MEMBERS_READY=1
  want=$(bytes_of "$MEMBER_SIZE")
  for m in "${MEMBERS[@]}"; do
    have=$(stat -c %s "$m" 2>/dev/null || echo -1)
    alloc=$(($(stat -c %b "$m" 2>/dev/null || echo 0) * $(stat -c %B "$m" 2>/dev/null || echo 512)))
    if [[ $have != "$want" ]] || ((alloc < want * 99 / 100)); then
      log "writing $m ($want bytes of zeros, allocated on disk)"
      rm -f "$m"
      dd if=/dev/zero of="$m" bs=1M count=$((want / 1048576)) oflag=direct conv=fsync status=none
    fi
  done
}

# Every swan cell starts from a freshly created array, as every peer cell starts from the
# same plain file: a log-structured array carries the state of earlier jobs (its volume
# written over, GC under way), which would make each job measure what the jobs before it
# left. Random writes over a full volume, GC and all, are the randwrite-4k-full job's.
fresh_swan_array() {
  log "creating swan0 array: 3 R-groups x 2 members of $MEMBER_SIZE, $SPARE % spare, in $BENCH_DIR"
  allocated_members
  "$SWAN_BIN" create --force --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size "$MEMBER_SIZE" --spare "$SPARE" "${MEMBERS[@]}" \
    >"$RAW/logs/swan-create.log" 2>&1 || { cat "$RAW/logs/swan-create.log" >&2; die "swan create failed"; }
}

swan_usable() { [[ -x $SWAN_BIN ]] && "$SWAN_BIN" serve --help >/dev/null 2>&1 && "$SWAN_BIN" create --help >/dev/null 2>&1; }

EXPORT=
SIZE_NOTE=
if has_server swan; then
  if ! swan_usable; then
    need_cmd cargo || die "$SWAN_BIN is missing or lacks 'serve'/'create', and cargo is not installed to build it"
    log "building swan (cargo build --release -p swan-cli)"
    cargo build --release -p swan-cli
    swan_usable || die "$SWAN_BIN still has no 'serve' and 'create' subcommands after building; is the NBD server in swan-cli yet?"
  fi
  fresh_swan_array
  start_server swan buffered probe
  EXPORT=$SIZE_SEEN
  stop_server
  printf '%s %s\n' "$MEMBER_SIZE/$SPARE" "$EXPORT" >"$BENCH_DIR/swan-export-size"
  SIZE_NOTE="swan's export size (nbdinfo --size)"
elif [[ -n ${EXPORT_SIZE:-} ]]; then
  EXPORT=$(bytes_of "$EXPORT_SIZE")
  SIZE_NOTE="EXPORT_SIZE"
elif [[ -f $BENCH_DIR/swan-export-size ]] && read -r ms sz <"$BENCH_DIR/swan-export-size" && [[ $ms == "$MEMBER_SIZE/$SPARE" ]] && is_uint "$sz"; then
  EXPORT=$sz
  SIZE_NOTE="swan's export size from an earlier run ($BENCH_DIR/swan-export-size)"
else
  EXPORT=$(($(bytes_of "$MEMBER_SIZE") * 6))
  SIZE_NOTE="6 x MEMBER_SIZE (swan not run here, and no earlier swan export size in BENCH_DIR)"
fi
is_uint "$EXPORT" && ((EXPORT >= 1048576)) || die "export size '$EXPORT' is not a usable number of bytes"
# fio sizes must cover whole blocks of the largest block size used (1 MiB prefill).
FIO_SIZE=$((EXPORT / 1048576 * 1048576))
log "export size $EXPORT bytes ($SIZE_NOTE); fio uses $FIO_SIZE"

if has_server nbdkit || has_server qemu-nbd; then
  have=$(stat -c %s "$PLAIN" 2>/dev/null || echo -1)
  alloc=$(($(stat -c %b "$PLAIN" 2>/dev/null || echo 0) * $(stat -c %B "$PLAIN" 2>/dev/null || echo 512)))
  if [[ $have != "$EXPORT" ]] || ((alloc < EXPORT)); then
    avail=$(($(df -k --output=avail "$BENCH_DIR" | tail -1) * 1024))
    ((avail > EXPORT + (1 << 30))) || die "not enough space in $BENCH_DIR for a $EXPORT-byte plain.img"
    log "writing $PLAIN ($EXPORT bytes of zeros, allocated on disk)"
    rm -f "$PLAIN"
    dd if=/dev/zero of="$PLAIN" bs=1M count=$(((EXPORT + 1048575) / 1048576)) oflag=direct conv=fsync status=none
    truncate -s "$EXPORT" "$PLAIN"
  fi
fi

# ---------------------------------------------------------------- machine
meta "command" "SERVERS=\"$SERVERS\" MODES=\"$MODES\" JOBS=\"$JOBS\" RUNTIME=$RUNTIME RUNS=$RUNS MEMBER_SIZE=$MEMBER_SIZE SPARE=$SPARE BENCH_DIR=$BENCH_DIR scripts/bench-nbd.sh"
meta "date" "$(date -u '+%Y-%m-%d %H:%M UTC')"
meta "nproc" "$(nproc)"
meta "memory" "$(awk '/^MemTotal:/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
meta "kernel" "$(uname -r)"
meta "fio" "$(fio --version)"
meta "nbdkit" "$(nbdkit --version 2>&1 | head -1)"
meta "qemu-nbd" "$(qemu-nbd --version 2>&1 | head -1)"
meta "libnbd" "$(nbdinfo --version 2>&1 | tail -1)"
if has_server swan; then
  # SWAN_BIN may be a binary built elsewhere (another checkout, a copy): name it and its date
  # beside this checkout's commit, which is then not necessarily the binary's.
  meta "swan" "$("$SWAN_BIN" --version 2>&1 | head -1); binary $SWAN_BIN ($(date -u -r "$SWAN_BIN" '+%Y-%m-%d %H:%M UTC'), sha256 $(sha256sum "$SWAN_BIN" | cut -c1-12)); this checkout at git $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo '+dirty')"
fi
meta "disk (df -T $BENCH_DIR)" "$(df -hT "$BENCH_DIR" | tail -1 | awk '{print $1" "$2", "$3" total, "$5" free, mounted on "$7}')"
dev=$(df --output=source "$BENCH_DIR" | tail -1)
bdev=$(basename "$(readlink -f "$dev")")
if [[ -r /sys/class/block/$bdev/queue/rotational ]]; then
  meta "block device" "/dev/$bdev, rotational=$(cat "/sys/class/block/$bdev/queue/rotational"), scheduler $(cat "/sys/class/block/$bdev/queue/scheduler" 2>/dev/null || echo '?')"
fi
meta "export size" "$EXPORT bytes ($SIZE_NOTE); fio --size=$FIO_SIZE"
meta "fio" "--ioengine=nbd --iodepth=$IODEPTH --numjobs=1 --time_based --runtime=$RUNTIME --ramp_time=$RAMP --randseed=RUN (1, 2, ...), median of $RUNS run(s)"
meta "server CPU per I/O" "utime+stime of the server process (/proc/PID/stat fields 14 and 15, all threads; CLK_TCK $CLK_TCK, so ticks of $((1000 / CLK_TCK)) ms) from the end of fio's ${RAMP}s ramp (sampled ${RAMP}s after fio's job process connects, polled every 10 ms; the window is approximate to a scheduler tick) to fio's exit (a few tens of ms after its last I/O), over the I/Os fio counted after its ramp (total_ios); a fill is a separate fio run, outside the window. Kernel work not charged to the server process (page-cache writeback by kworkers, loopback TCP in softirq) is not in it"
if [[ -w /proc/sys/vm/drop_caches ]]; then meta "page cache" "dropped (sync; drop_caches=3) before every server start"; else meta "page cache" "NOT dropped between servers (not root)"; fi
for mode in "${MODE_LIST[@]}"; do
  for server in "${SERVER_LIST[@]}"; do
    server_cmd "$server" "$mode" PORT
    meta "cmd $server $mode" "$(printf '%q ' "${SRV_CMD[@]}" | sed 's/ $//')"
  done
done
has_server nbdkit && [[ " ${MODE_LIST[*]} " == *" direct "* ]] && meta "nbdkit direct" "$NBDKIT_DIRECT_NOTE"

# ---------------------------------------------------------------- the runs
# Run r puts the servers in SERVERS rotated left by r-1 (swan nbdkit qemu-nbd; nbdkit qemu-nbd
# swan; qemu-nbd swan nbdkit; ...), so no server always runs first (after a sync and a cold
# cache) or last (after the others' writeback), and each run gets a fresh server process
# (swan: on a freshly created array).
rotated() { # r -> the servers of run r, one a line
  local r=$1 n=${#SERVER_LIST[@]} i
  for ((i = 0; i < n; i++)); do echo "${SERVER_LIST[$(((i + r - 1) % n))]}"; done
}
total=$((${#SERVER_LIST[@]} * ${#MODE_LIST[@]} * ${#JOB_LIST[@]} * RUNS))
n=0
for mode in "${MODE_LIST[@]}"; do
  for job in "${JOB_LIST[@]}"; do
    rw=$(job_rw "$job")
    bs=$(job_bs "$job")
    for r in $(seq 1 "$RUNS"); do
      slot=0
      for server in $(rotated "$r"); do
        n=$((n + 1))
        slot=$((slot + 1))
        [[ $server != swan ]] || fresh_swan_array
        start_server "$server" "$mode" "$job-run$r"
        [[ $SIZE_SEEN == "$EXPORT" ]] || log "warning: $server ($mode) exports $SIZE_SEEN bytes, expected $EXPORT"
        log "[$n/$total] $mode $job run $r/$RUNS: $server (#$slot this run; port $SRV_PORT, pid $SRV_PID)"
        if job_prefilled "$job"; then
          log "  pre-filling the export with sequential 1 MiB writes"
          run_fio prefill write 1M "$FIO_SIZE" "$RAW/$server-$mode-$job-run$r-prefill.json"
        fi
        out=$RAW/$server-$mode-$job-run$r.json
        # Each run its own seed (the same for every server): fio repeats its random offsets
        # run after run by default, and a log-structured array then finds each victim
        # wholly overwritten in the order it was written, a free ride no workload gives.
        SAMPLE=1 run_fio "$job" "$rw" "$bs" "$FIO_SIZE" "$out" --time_based --runtime="$RUNTIME" --ramp_time="$RAMP" \
          --randseed="$r"
        stop_server
        read -r cpu0 t0 <"$out.cpu-start"
        read -r cpu1 t1 <"$out.cpu-end"
        st0=- st1=-
        [[ $server != swan ]] || st0=$out.cpu-start.status st1=$out.cpu-end.status
        printf '%s\t' "$server" "$mode" "$job" "$r" "$slot" "$out" "$PEAK_KB" "$CUR_KB" "$cpu0" "$t0" "$cpu1" "$t1" "$st0" >>"$RESULTS"
        printf '%s\n' "$st1" >>"$RESULTS"
      done
    done
  done
done

# ---------------------------------------------------------------- the table
mkdir -p "$(dirname "$OUT")"
python3 "$ROOT/scripts/bench-nbd-summarize.py" \
  --results "$RESULTS" --meta "$META" \
  --servers "$SERVERS" --modes "$MODES" --jobs "$JOBS" --clk-tck "$CLK_TCK" --raw "$RAW" >"$RAW/table.md"
cp "$RAW/table.md" "$OUT"
cat "$RAW/table.md"
log "wrote $OUT; raw fio JSON in $RAW"
