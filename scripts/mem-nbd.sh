#!/usr/bin/env bash
# Measure `swan serve`'s memory on a large array that has been fully written: the figure
# issue 3 asks for (map memory ≤ 5 bytes per 4 KiB block). A measurement, not a test: it
# prints the figures and asserts nothing about them.
#
#   scripts/mem-nbd.sh            # swan0, 4 R-groups × 2 members of 8 GiB = 64 GiB (~10 min)
#   scripts/mem-nbd.sh --help
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

usage() {
  cat <<'EOF'
Usage: scripts/mem-nbd.sh [--help]

1. swan create --scheme swan0 --rgroups RGROUPS --ssds-per-rgroup SSDS --member-size MEMBER_SIZE
   over files in MEM_DIR;
2. swan serve on a unix socket; fio (nbd engine, iodepth 32) writes the whole export once
   with 1 MiB sequential writes, so every volume block is mapped;
3. reports the server's VmRSS and VmHWM (peak), in MB and in bytes per volume block;
4. stops it (SIGTERM: clean stop, fresh checkpoint), starts it again and reports the same
   after recovery (the peak then is recovery's), and stops it.

The data written is zeros (fio --zero_buffers). swan does not look at the data it stores,
so its memory does not depend on it; zeros let the default MEM_DIR hold a 64 GiB array in
little disk space.

Environment:
  RGROUPS (4), SSDS (2), MEMBER_SIZE (8G)
  MEM_DIR   directory for the member files. Default: a btrfs filesystem mounted with
            compress-force=zstd on a sparse loop file under /tmp (needs root, losetup and
            mkfs.btrfs from btrfs-progs), removed afterwards. Give a directory on a disk with
            RGROUPS × SSDS × MEMBER_SIZE free to measure over uncompressed files instead.
EOF
}
[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
[[ $# -eq 0 ]] || { echo "mem-nbd.sh: unknown argument '$1' (see --help)" >&2; exit 2; }

RGROUPS=${RGROUPS:-4}
SSDS=${SSDS:-2}
MEMBER_SIZE=${MEMBER_SIZE:-8G}
SWAN=$ROOT/target/release/swan

die() { echo "mem-nbd: $*" >&2; exit 1; }
for tool in fio nbdinfo; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
cargo build --release -q -p swan-cli

WORK=$(mktemp -d /tmp/swan-mem.XXXXXX)
MOUNTED=""
PID=""
cleanup() {
  [[ -n $PID ]] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  if [[ -n $MOUNTED ]]; then umount "$MOUNTED" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ -z ${MEM_DIR:-} ]]; then
  command -v mkfs.btrfs >/dev/null || die "mkfs.btrfs is missing: apt-get install btrfs-progs, or set MEM_DIR"
  [[ $(id -u) == 0 ]] || die "the default MEM_DIR mounts a loop file and needs root; set MEM_DIR"
  truncate -s 200G "$WORK/fs.img"
  mkfs.btrfs -q "$WORK/fs.img"
  mkdir "$WORK/fs"
  mount -o loop,compress-force=zstd:1 "$WORK/fs.img" "$WORK/fs"
  MOUNTED=$WORK/fs
  MEM_DIR=$WORK/fs
fi
members=()
for ((i = 0; i < RGROUPS * SSDS; i++)); do members+=("$MEM_DIR/swan-mem-m$i"); done
"$SWAN" create --force --scheme swan0 --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
  --member-size "$MEMBER_SIZE" "${members[@]}"

SOCK=$WORK/swan.sock
URI="nbd+unix:///?socket=$SOCK"
start() {
  "$SWAN" serve --socket "$SOCK" "${members[@]}" &
  PID=$!
  for _ in $(seq 600); do
    nbdinfo --size "$URI" >/dev/null 2>&1 && return 0
    kill -0 "$PID" 2>/dev/null || die "swan serve exited while starting"
    sleep 0.5
  done
  die "swan serve did not answer within 300 s"
}
stop() {
  kill -TERM "$PID"
  wait "$PID" || die "swan serve exited with an error"
  PID=""
}
report() { # label
  local rss hwm
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$PID/status")
  hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$PID/status")
  awk -v l="$1" -v r="$rss" -v h="$hwm" -v b="$BLOCKS" 'BEGIN {
    printf "%-34s RSS %7.1f MB = %5.2f B/block    peak (VmHWM) %7.1f MB = %5.2f B/block\n",
      l, r / 1024, r * 1024 / b, h / 1024, h * 1024 / b }'
}

start
SIZE=$(nbdinfo --size "$URI")
BLOCKS=$((SIZE / 4096))
echo "array: swan0, $RGROUPS R-groups × $SSDS members of $MEMBER_SIZE; export $SIZE bytes = $BLOCKS blocks of 4 KiB"
report "started, empty"
t0=$(date +%s)
fio --name=fill --ioengine=nbd --uri="$URI" --rw=write --bs=1M --iodepth=32 --size="$SIZE" \
  --zero_buffers --minimal >"$WORK/fio.out"
t1=$(date +%s)
echo "filled $SIZE bytes in $((t1 - t0)) s"
report "fully written"
stop
start
report "restarted (recovery peak)"
stop
