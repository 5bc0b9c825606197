#!/usr/bin/env bash
# SWAN's Fig. 4(a) live: the same arrays served over NBD behind the modelled SSD
# (`swan serve --emulate`) and simulated (`swan sim --array`, the same superblock, so the same
# geometry, volume and GC tuning), user write throughput per second drawn side by side.
# A benchmark, not a test: it prints and draws what it measured and asserts nothing.
#
#   scripts/fig4a-live.sh                              # swan0, lograid0, raid0; 60 s each (~5 min)
#   RUNTIME=120 ROUNDS=3 scripts/fig4a-live.sh
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=fig4a-live.sh

usage() {
  cat <<'EOF'
Usage: scripts/fig4a-live.sh [--help]

For each round and each scheme (the order rotates by one every round, so no scheme always runs
first on this shared machine): create a fresh array over member files (swan create --force:
their contents are lost); simulate it with `swan sim --array` for RUNTIME simulated seconds;
then serve it with --emulate PRESET --emulate-age AGE and run fio (nbd engine) writing BS
blocks at random, IODEPTH deep, over the same region the simulator wrote (WS of the raw data
capacity) for RUNTIME seconds, logging its throughput every second. fio picks each block
independently (--norandommap), as the simulator does: by default it would write every block
of the region once per pass, a permutation that leaves the log's victims far emptier.
Prints per scheme the mean MB/s live and simulated, over the whole run and after GC began, and
the server's CPU time per request; then where the live run's time went: the share of a core
its engine thread used, blocks GC moved per user block written (live and simulated), and an
emulated request's mean time on the model SSDs and the engine's lateness in answering it
after them (swan status). Writes OUT/fig4a-live.tsv (t, round, scheme, face, MB/s) and draws
OUT/fig4a-live.svg (live beside simulated, round 0).

Environment:
  SCHEMES      schemes, in the paper's Fig. 4(a) order     (default "swan0 lograid0 raid0")
  RGROUPS      R-groups                                     (default 3)
  SSDS         SSDs per R-group                             (default 2)
  MEMBER_SIZE  size of each member file                     (default 512M)
  PRESET       SSD model: swan serve --emulate, swan sim --ssd (default sata850pro)
  AGE          SSD ageing: --emulate-age, swan sim --age    (default 0.6)
  BS           request size                                 (default 8k)
  IODEPTH      requests outstanding                         (default 32)
  WS           region written, fraction of raw data capacity (default 0.6, the paper's ud)
  RUNTIME      seconds per run, wall-clock and simulated    (default 60)
  ROUNDS       rounds                                       (default 1)
  DIR          where the member files go                    (default /var/tmp/swan-fig4a)
  OUT          where the table and figure go                (default DIR)
  SWAN_BIN     swan binary                                  (default target/release/swan)
EOF
}
# shellcheck source=scripts/lib/cli.sh
source scripts/lib/cli.sh
only_help_args "$@"

SCHEMES=${SCHEMES:-"swan0 lograid0 raid0"} RGROUPS=${RGROUPS:-3} SSDS=${SSDS:-2}
MEMBER_SIZE=${MEMBER_SIZE:-512M} PRESET=${PRESET:-sata850pro} AGE=${AGE:-0.6} BS=${BS:-8k}
IODEPTH=${IODEPTH:-32} WS=${WS:-0.6} RUNTIME=${RUNTIME:-60} ROUNDS=${ROUNDS:-1}
DIR=${DIR:-/var/tmp/swan-fig4a} SWAN_BIN=${SWAN_BIN:-target/release/swan}
OUT=${OUT:-$DIR}
for tool in fio nbdinfo python3; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/test.sh installs it)"
done
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "RUNTIME must be a whole number of seconds, not '$RUNTIME'"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive whole number, not '$ROUNDS'"
[[ -x $SWAN_BIN ]] || cargo build --release -p swan-cli
SWAN_BIN=$(realpath "$SWAN_BIN")
read -r -a schemes <<<"$SCHEMES"
((${#schemes[@]} > 0)) || die "SCHEMES is empty"
mkdir -p "$DIR" "$OUT"
# shellcheck source=scripts/lib/array-bench.sh
source scripts/lib/array-bench.sh
runs="$DIR/runs"
rm -rf "$runs" && mkdir -p "$runs"

log "$SCHEMES, ${RGROUPS}×${SSDS} over $MEMBER_SIZE files, $PRESET aged $AGE; $BS random writes," \
  "iodepth $IODEPTH, over $WS of the raw capacity, $RUNTIME s; swan $("$SWAN_BIN" --version)"
for ((round = 0; round < ROUNDS; round++)); do
  for ((k = 0; k < ${#schemes[@]}; k++)); do
    scheme=${schemes[$(((k + round) % ${#schemes[@]}))]}
    run="$runs/$round-$scheme"
    mkdir -p "$run"
    rm -f "${members[@]}" "$sock"
    "$SWAN_BIN" create --force --scheme "$scheme" --rgroups "$RGROUPS" --ssds-per-rgroup "$SSDS" \
      --member-size "$MEMBER_SIZE" "${members[@]}" >"$run/create.log"

    log "round $round, $scheme: simulating $RUNTIME s"
    "$SWAN_BIN" sim --array "${members[0]}" --ssd "$PRESET" --age "$AGE" --rw randwrite --bs "$BS" \
      --iodepth "$IODEPTH" --working-set "$WS" --time "$RUNTIME" --seed $((round + 1)) \
      --out "$run/sim" --quiet >"$run/sim.log" 2>&1 || die "swan sim failed: $(tail -5 "$run/sim.log")"
    region=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["options"]["workload"]["region_blocks"] * 4096)' \
      "$run/sim/summary.json")

    log "round $round, $scheme: serving live for $RUNTIME s over $((region >> 20)) MiB"
    "$SWAN_BIN" serve --socket "$sock" --emulate "$PRESET" --emulate-age "$AGE" "${members[@]}" \
      2>"$run/serve.log" &
    srv=$!
    uri="nbd+unix:///?socket=$sock"
    for _ in $(seq 600); do nbdinfo --size "$uri" >/dev/null 2>&1 && break; sleep 0.2; done
    nbdinfo --size "$uri" >/dev/null || die "the server did not come up: $(cat "$run/serve.log")"
    before=$(cpu_s "$srv") engine_before=$(engine_cpu_s "$srv")
    fio --name=fig4a --ioengine=nbd --uri="$uri" --rw=randwrite --bs="$BS" --iodepth="$IODEPTH" \
      --size="$region" --time_based --runtime="$RUNTIME" --randrepeat=0 --randseed=$((round + 1)) \
      --norandommap --write_bw_log="$run/live" --log_avg_msec=1000 --output-format=json >"$run/fio.json"
    after=$(cpu_s "$srv") engine_after=$(engine_cpu_s "$srv")
    "$SWAN_BIN" status --json "${members[0]}" >"$run/status.json"
    kill "$srv"
    wait "$srv" || true
    srv=
    echo "$before $after $engine_before $engine_after" >"$run/cpu"
  done
done
python3 scripts/lib/fig4a_live.py "$runs" "$SCHEMES" "$OUT"
