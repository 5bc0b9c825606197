#!/usr/bin/env bash
# What `swan serve --record-trace` costs the data path: fio 4 KiB random writes, then random
# reads, over NBD with and without the recorder, alternating, and the drops the recorder
# reports. A measurement, not a test: it asserts nothing.
#
#   scripts/record-trace-overhead.sh                # 2 rounds × 2 settings × 2 patterns × 12 s
#   ROUNDS=5 RUNTIME=30 scripts/record-trace-overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=record-trace-overhead.sh

usage() {
  cat <<'EOF'
Usage: scripts/record-trace-overhead.sh [--help]

For each round, for --record-trace off then on: create a fresh swan0 3×2 array over member
files in DIR (their contents are lost), serve it on a unix socket, run fio (nbd engine, one
job, iodepth IODEPTH) with 4 KiB random writes over 512 MiB for RUNTIME seconds, then 4 KiB
random reads as long, and print each one's IOPS; with the recorder on, also the server's
trace summary (requests recorded, dropped).

Environment:
  ROUNDS    rounds                                 (default 2)
  RUNTIME   seconds per fio run                    (default 12)
  IODEPTH   fio iodepth                            (default 32)
  DIR       where the members and the trace go     (default /var/tmp/swan-record-overhead)
  SWAN_BIN  swan binary                            (default target/release/swan)
EOF
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

ROUNDS=${ROUNDS:-2} RUNTIME=${RUNTIME:-12} IODEPTH=${IODEPTH:-32}
DIR=${DIR:-/var/tmp/swan-record-overhead} SWAN_BIN=${SWAN_BIN:-target/release/swan}
for tool in fio python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")
mkdir -p "$DIR"
members=("$DIR"/m{0..5}) sock="$DIR/nbd.sock" trace="$DIR/t.blkparse"
srv=''
trap '[[ -n $srv ]] && kill "$srv" 2>/dev/null; true' EXIT
printf '%-6s %-13s %-10s %10s\n' round record-trace pattern IOPS
for ((round = 1; round <= ROUNDS; round++)); do
  for rec in off on; do
    rm -f "${members[@]}" "$sock" "$trace"
    "$SWAN_BIN" create --scheme swan0 --rgroups 3 --ssds-per-rgroup 2 --member-size 256M "${members[@]}" >/dev/null
    flags=()
    [[ $rec == on ]] && flags=(--record-trace "$trace")
    "$SWAN_BIN" serve --socket "$sock" "${flags[@]}" "${members[@]}" 2>"$DIR/serve.log" &
    srv=$!
    for _ in $(seq 300); do [[ -S $sock ]] && break; sleep 0.1; done
    [[ -S $sock ]] || die "the server did not come up: $(cat "$DIR/serve.log")"
    for rw in randwrite randread; do
      fio --name=overhead --ioengine=nbd --uri="nbd+unix:///?socket=$sock" --rw="$rw" --bs=4k \
        --iodepth="$IODEPTH" --size=512M --time_based --runtime="$RUNTIME" --randseed="$round" \
        --output-format=json >"$DIR/fio.json" 2>/dev/null
      iops=$(python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print(int(j["write" if sys.argv[2] == "randwrite" else "read"]["iops"]))' "$DIR/fio.json" "$rw")
      printf '%-6s %-13s %-10s %10s\n' "$round" "$rec" "$rw" "$iops"
    done
    kill "$srv"
    wait "$srv" || die "swan serve did not stop cleanly: $(tail -3 "$DIR/serve.log")"
    srv=''
    [[ $rec == on ]] && sed -n 's/^swan: trace [^:]*: /       recorded: /p' "$DIR/serve.log"
  done
done
