#!/usr/bin/env bash
# Random writes over a *full* swan volume, the state an operator's array lives in: GC runs
# all the time. A benchmark, not a test: it prints what it measured and asserts nothing.
#
#   scripts/steady-write.sh            # swan0 3×2 over 1 GiB files, default spare, 80 s
#   SPARE=0 RUNTIME=60 scripts/steady-write.sh
set -euo pipefail
cd "$(dirname "$0")/.."

SCRIPT=steady-write.sh

usage() {
  cat <<'USAGE'
Usage: scripts/steady-write.sh

Creates a swan array over member files (swan create --force: their contents are lost),
serves it, fills the whole volume once with 1 MiB sequential writes, then runs 4 KiB random
writes (fio nbd engine, iodepth 32) for RUNTIME seconds, printing `swan status`'s traffic
line every 10 s (user bytes written against blocks GC moved) and fio's IOPS at the end.

Environment:
  SCHEME       scheme                                   (default swan0)
  RGROUPS      R-groups                                 (default 3)
  SSDS         SSDs per R-group                         (default 2)
  MEMBER_SIZE  size of each member file                 (default 1G)
  SPARE        swan create --spare PERCENT              (default: swan create's default)
  GC_TARGET    swan serve --gc-target SEGMENTS (SWAN)   (default: the core's)
  RUNTIME      seconds of random writes                 (default 80)
  DIR          where the member files go                (default /var/tmp/swan-steady)
  PORT         TCP port on 127.0.0.1                    (default 10951)
  SWAN_BIN     swan binary                              (default target/release/swan)
USAGE
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

SCHEME=${SCHEME:-swan0} RGROUPS=${RGROUPS:-3} SSDS=${SSDS:-2} MEMBER_SIZE=${MEMBER_SIZE:-1G}
RUNTIME=${RUNTIME:-80} DIR=${DIR:-/var/tmp/swan-steady} PORT=${PORT:-10951}
SWAN_BIN=${SWAN_BIN:-target/release/swan}
for tool in fio python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")
mkdir -p "$DIR"
members=()
for ((i = 0; i < RGROUPS * SSDS; i++)); do members+=("$DIR/m$i"); done
"$SWAN_BIN" create --force --scheme "$SCHEME" --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
  --member-size "$MEMBER_SIZE" ${SPARE:+--spare "$SPARE"} "${members[@]}"
"$SWAN_BIN" serve --listen "127.0.0.1:$PORT" ${GC_TARGET:+--gc-target "$GC_TARGET"} "${members[@]}" 2>"$DIR/serve.log" &
srv=$!
trap 'kill "$srv" 2>/dev/null || true' EXIT
uri="nbd://127.0.0.1:$PORT"
for _ in $(seq 100); do fio --version >/dev/null && nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.2; done
echo "filling the volume (1 MiB sequential writes)..."
fio --name=fill --ioengine=nbd --uri="$uri" --rw=write --bs=1m --iodepth=8 --size=100% \
  --output-format=json >"$DIR/fill.json"
echo "4 KiB random writes for $RUNTIME s:"
fio --name=steady --ioengine=nbd --uri="$uri" --rw=randwrite --bs=4k --iodepth=32 --size=100% \
  --time_based --runtime="$RUNTIME" --output-format=json >"$DIR/steady.json" &
fio_pid=$!
for ((t = 10; t <= RUNTIME; t += 10)); do
  sleep 10
  echo "  ${t} s: $("$SWAN_BIN" status "${members[0]}" | sed -n 2p)"
done
wait "$fio_pid"
python3 - "$DIR/steady.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
job = json.loads(text[text.index("{"):])["jobs"][0]["write"]
print(f"random 4 KiB writes on the full volume: {job['iops']:.0f} IOPS, mean latency {job['clat_ns']['mean'] / 1000:.0f} µs")
PY
