#!/usr/bin/env bash
# SWAN against the baselines on the same emulated SSDs, live over NBD: `swan serve --emulate`
# puts the modelled SSD in front of every member in wall-clock time, fio writes at random,
# and the table gives each scheme's throughput and the server's CPU time per request. A
# benchmark, not a test: it prints what it measured and asserts nothing.
#
#   scripts/emulate-compare.sh                          # swan0 vs raid0, 3 rounds of 60 s (~8 min)
#   SCHEMES="swan0 lograid0 raid0" RUNTIME=30 scripts/emulate-compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=emulate-compare.sh

usage() {
  cat <<'EOF'
Usage: scripts/emulate-compare.sh [--help]

For each round, for each scheme (the order rotates by one every round, so no scheme always
runs first on this shared machine): create a fresh array over member files (swan create
--force: their contents are lost), serve it with --emulate PRESET --emulate-age AGE, run fio
(nbd engine, one job) writing BS blocks at random over WORKING % of the volume for RUNTIME
seconds, and read the server's CPU time (user + system, /proc/PID/stat) before and after.
Prints one line per run, then per scheme the median MB/s, the median server CPU µs per
request and the share of one core the server used (how far it is from being CPU-bound:
under emulation the limit should be the modelled SSDs), and each scheme's median against
the last scheme's.

Environment:
  SCHEMES      schemes to compare; the last is the baseline  (default "swan0 raid0")
  RGROUPS      R-groups                                      (default 3)
  SSDS         SSDs per R-group                              (default 2)
  MEMBER_SIZE  size of each member file                      (default 512M)
  SEGMENT      swan create --segment                         (default: swan create's)
  PRESET       swan serve --emulate                          (default sata850pro)
  AGE          swan serve --emulate-age                      (default 0.6)
  BS           fio block size                                (default 8k)
  IODEPTH      fio iodepth                                   (default 32)
  WORKING      share of the volume fio writes over, percent  (default 60)
  RUNTIME      seconds of writes per run                     (default 60)
  ROUNDS       rounds                                        (default 3)
  DIR          where the member files go                     (default /var/tmp/swan-emulate)
  SWAN_BIN     swan binary                                   (default target/release/swan)
EOF
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

SCHEMES=${SCHEMES:-"swan0 raid0"} RGROUPS=${RGROUPS:-3} SSDS=${SSDS:-2} MEMBER_SIZE=${MEMBER_SIZE:-512M}
SEGMENT=${SEGMENT:-} PRESET=${PRESET:-sata850pro} AGE=${AGE:-0.6} BS=${BS:-8k} IODEPTH=${IODEPTH:-32}
WORKING=${WORKING:-60} RUNTIME=${RUNTIME:-60} ROUNDS=${ROUNDS:-3} DIR=${DIR:-/var/tmp/swan-emulate}
SWAN_BIN=${SWAN_BIN:-target/release/swan}
for tool in fio nbdinfo python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")
read -r -a schemes <<<"$SCHEMES"
((${#schemes[@]} > 0)) || die "SCHEMES is empty"
mkdir -p "$DIR"
# shellcheck source=scripts/lib/array-bench.sh
source scripts/lib/array-bench.sh
results="$DIR/results.tsv"
: >"$results"

echo "# $SCHEMES, ${RGROUPS}×${SSDS} over $MEMBER_SIZE files behind --emulate $PRESET --emulate-age $AGE;"
echo "# fio $BS random writes, iodepth $IODEPTH, over $WORKING % of the volume, $RUNTIME s; swan $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '%-6s %-10s %10s %10s %12s %10s\n' round scheme MB/s requests "CPU µs/req" "CPU/core"
for ((round = 0; round < ROUNDS; round++)); do
  for ((k = 0; k < ${#schemes[@]}; k++)); do
    scheme=${schemes[$(((k + round) % ${#schemes[@]}))]}
    rm -f "${members[@]}" "$sock"
    "$SWAN_BIN" create --force --scheme "$scheme" --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
      --member-size "$MEMBER_SIZE" ${SEGMENT:+--segment "$SEGMENT"} "${members[@]}" >"$DIR/create.log"
    "$SWAN_BIN" serve --socket "$sock" --emulate "$PRESET" --emulate-age "$AGE" "${members[@]}" \
      2>"$DIR/serve-$scheme-$round.log" &
    srv=$!
    uri="nbd+unix:///?socket=$sock"
    for _ in $(seq 600); do nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.2; done
    volume=$(nbdinfo --size "$uri") || die "the server did not come up: $(cat "$DIR/serve-$scheme-$round.log")"
    size=$((volume * WORKING / 100 / 65536 * 65536))
    before=$(cpu_s "$srv")
    fio --name=emulate --ioengine=nbd --uri="$uri" --rw=randwrite --bs="$BS" --iodepth="$IODEPTH" \
      --size="$size" --time_based --runtime="$RUNTIME" --randrepeat=0 --randseed=$((round + 1)) \
      --output-format=json >"$DIR/fio.json"
    after=$(cpu_s "$srv")
    kill "$srv"
    wait "$srv" || true
    srv=
    python3 - "$DIR/fio.json" "$round" "$scheme" "$before" "$after" "$RUNTIME" >>"$results" <<'PY'
import json, sys
path, rnd, scheme, before, after, runtime = sys.argv[1:]
text = open(path).read()
job = json.loads(text[text.index("{"):])["jobs"][0]
if job["error"]:
    sys.exit(f"fio reports error {job['error']} for {scheme}")
w = job["write"]
cpu = float(after) - float(before)
print(f"{rnd}\t{scheme}\t{w['bw_bytes'] / 1e6:.1f}\t{w['total_ios']}\t{cpu * 1e6 / max(w['total_ios'], 1):.1f}\t{cpu / float(runtime):.2f}")
PY
    tail -n 1 "$results" | awk -F'\t' '{printf "%-6s %-10s %10s %10s %12s %10s\n", $1, $2, $3, $4, $5, $6}'
  done
done
python3 - "$results" "$SCHEMES" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
schemes = sys.argv[2].split()
med = {}
print(f"\n{'scheme':<10} {'median MB/s':>12} {'runs':>24} {'CPU µs/req':>11} {'CPU/core':>9}")
for s in schemes:
    r = [x for x in rows if x[1] == s]
    mbps = [float(x[2]) for x in r]
    med[s] = statistics.median(mbps)
    print(f"{s:<10} {med[s]:>12.1f} {' / '.join(f'{v:.0f}' for v in mbps):>24} "
          f"{statistics.median(float(x[4]) for x in r):>11.1f} {statistics.median(float(x[5]) for x in r):>9.2f}")
base = schemes[-1]
for s in schemes[:-1]:
    pairs = [float(a[2]) / float(b[2]) for a in rows if a[1] == s for b in rows if b[1] == base and b[0] == a[0]]
    print(f"{s} ÷ {base}: median {med[s] / med[base]:.2f}×; round by round {' '.join(f'{p:.2f}' for p in pairs)}")
PY
