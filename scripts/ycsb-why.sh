#!/usr/bin/env bash
# Why SWAN4 differs from the paper on the recorded YCSB traces (issue 23), in the simulator:
# the experiments behind docs/findings/swan.md ("YCSB on RocksDB", "The causes, by experiment").
#
#   scripts/ycsb-why.sh [SEEDS]     # default "1 2 3"; about 2 minutes on 2 cores after the build
#
# 1. The Load, closed loop (as `swan repro ycsb` runs Fig. 8): SWAN4's recorded trace
#    (data/traces/ycsb/swan4.blkparse.gz) replayed over SWAN4 and Log-RAID4 arrays of
#    several shapes, `swan create`d with 8 MiB segments (the model's erase stripe) and
#    members sized so that every volume is the recorded SWAN4 volume, 2325 MiB (2325–2354:
#    the sizes `swan create` allows; SWAN4 2R-9SSD 2935, its SSDs the smallest the model
#    allows), so the trace and the log's fullness are the same and only the shape differs. The column "log SSDs"
#    is how many data SSDs take the log's writes: the front-end's for SWAN4, all of them
#    for Log-RAID4. Also Log-RAID4 as recorded (9 × 512 MiB, 3101 MiB) on its own trace
#    and on SWAN4's. Per shape: the Load's MB/s per seed, and for the first seed the Load's reads
#    by where they landed and how busy the log-writing SSDs' flash was during the Load.
#    Then the same runs with the fill's writes shuffled (the fill writes the same blocks in
#    another order): where the Load's garbage lies in the log, and whether SWAN4's GC or
#    Log-RAID4's gains from it. And SWAN4 3R-3SSD with other GC targets (`--gc-target`,
#    as `swan sim` builds the array without --array, at the same volume) beside Log-RAID4
#    over 3 built the same way: whether SWAN4's GC trigger is what fills its victims.
# 2. Table 4 (phase A at the recorded times, SWAN4's trace over the recorded 3R-3SSD):
#    reads per R-group role, their mean latency and mean wait before their SSD starts
#    them, with read priority as the paper (default) and with --reads-overtake-writes on
#    (reads also overtake user writes queued on their SSD; an experiment, off by default).
#
# Runs go to out/ycsb-why/; tables are printed as Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=ycsb-why.sh
# shellcheck source=scripts/lib/seeds.sh
source scripts/lib/seeds.sh
seeds_or_help "$@"
FIRST=${SEEDS%% *}
nice -n 10 cargo build --release -q -p swan-cli
SWAN=target/release/swan
OUT=out/ycsb-why
TRACES=data/traces/ycsb
rm -rf "$OUT" && mkdir -p "$OUT"

# The trace's requests (R and W lines) up to the end of phase $2 of trace $1: the Load's
# per-SSD figures are the difference of two runs cut there (--max-requests).
requests_to() {
  local end
  end=$(awk -v p="$2" '$1 == p { print $3 }' "$TRACES/$1.windows")
  zcat "$TRACES/$1.blkparse.gz" | awk -v t="$end" '!/^#/ && $4 <= t && $7 ~ /^[RW]/ { n++ } END { print n + 0 }'
}

# mkarray NAME SCHEME RGROUPS SSDS_PER_RGROUP MEMBER_SIZE: a `swan create`d array in $OUT/arrays.
mkarray() {
  local dir="$OUT/arrays/$1" n=$(($3 * $4)) m=()
  rm -rf "$dir" && mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do m+=("$dir/m$i"); done
  "$SWAN" create --force --segment 8M --scheme "$2" --rgroups "$3" --ssds-per-rgroup "$4" --member-size "$5" "${m[@]}" >/dev/null
}

# sim NAME ARRAY TRACE MODE [OPTIONS...]: one run per seed, as `swan repro ycsb` runs them.
sim() {
  local name=$1 array=$2 trace=$3 mode=$4
  shift 4
  for s in $SEEDS; do
    nice -n 10 "$SWAN" sim --ssd sata850pro --age 0.6 --trace-format blkparse --replay "$mode" \
      --array "$OUT/arrays/$array/m0" --trace "$TRACES/$trace.blkparse.gz" --windows "$TRACES/$trace.windows" \
      --seed "$s" --quiet "$@" --out "$OUT/$name/seed$s" >/dev/null
  done
}

# Part 1. Shapes: name scheme rgroups ssds-per-rgroup member-size log-ssds trace.
SHAPES=(
  "swan4-4x2 swan4 4 2 760M 1 swan4"
  "swan4-3x2 swan4 3 2 1020M 1 swan4"
  "swan4-3x3 swan4 3 3 512M 2 swan4"
  "swan4-4x3 swan4 4 3 392M 2 swan4"
  "swan4-3x4 swan4 3 4 344M 3 swan4"
  "swan4-3x5 swan4 3 5 264M 4 swan4"
  "swan4-2x4 swan4 2 4 512M 3 swan4"
  "swan4-2x5 swan4 2 5 392M 4 swan4"
  "swan4-2x9 swan4 2 9 256M 8 swan4"
  "lograid4-1x3 lograid4 1 3 1500M 2 swan4"
  "lograid4-1x4 lograid4 1 4 1008M 3 swan4"
  "lograid4-1x5 lograid4 1 5 760M 4 swan4"
  "lograid4-1x9 lograid4 1 9 392M 8 swan4"
  "lograid4-1x9-512M lograid4 1 9 512M 8 swan4"
  "lograid4-1x9-512M lograid4 1 9 512M 8 lograid4"
)
: >"$OUT/shapes"
for line in "${SHAPES[@]}"; do
  read -r name scheme rg per size logs trace <<<"$line"
  [[ -f $OUT/arrays/$name/m0 ]] || mkarray "$name" "$scheme" "$rg" "$per" "$size"
  run="$name-$trace"
  sim "load-$run" "$name" "$trace" closed=32
  SEEDS=$FIRST sim "cut-mkfs-$run" "$name" "$trace" closed=32 --max-requests "$(requests_to "$trace" mkfs)"
  SEEDS=$FIRST sim "cut-load-$run" "$name" "$trace" closed=32 --max-requests "$(requests_to "$trace" load)"
  echo "$run $scheme $rg $per $size $logs $trace" >>"$OUT/shapes"
done

# Part 1b. The same trace with its fill's writes shuffled (scripts/lib/ycsb_why_shuffle.py): the
# fill then leaves no R-group and no stretch of the log with more of the Load's garbage
# than another.
python3 scripts/lib/ycsb_why_shuffle.py "$TRACES/swan4.blkparse.gz" "$TRACES/swan4.windows" "$OUT/swan4-fill-shuffled.blkparse.gz" >/dev/null
cp "$TRACES/swan4.windows" "$OUT/swan4-fill-shuffled.windows"
for name in swan4-3x3 lograid4-1x3 swan4-3x5 lograid4-1x5 lograid4-1x9; do
  TRACES=$OUT sim "shuffled-$name" "$name" swan4-fill-shuffled closed=32
done

# Part 1c. SWAN4's GC trigger: 3R-3SSD and Log-RAID4 over 3 as `swan sim` builds them
# without --array (SSDs of 432 MiB, the recorded members less what `swan create` reserves,
# 10 % spare: the same 2325 MiB volume), SWAN4 with its default GC target and others.
for gt in default 1 3 16; do
  opt=()
  [[ $gt == default ]] || opt=(--gc-target "$gt")
  for s in $SEEDS; do
    nice -n 10 "$SWAN" sim --ssd sata850pro --age 0.6 --trace-format blkparse --replay closed=32 \
      --trace "$TRACES/swan4.blkparse.gz" --windows "$TRACES/swan4.windows" --seed "$s" --quiet \
      --scheme swan4 --rgroups 3 --ssds-per-rgroup 3 --ssd-capacity 432MiB --segment 8MiB --spare 10 "${opt[@]}" \
      --out "$OUT/target-swan4-$gt/seed$s" >/dev/null
  done
done
for s in $SEEDS; do
  nice -n 10 "$SWAN" sim --ssd sata850pro --age 0.6 --trace-format blkparse --replay closed=32 \
    --trace "$TRACES/swan4.blkparse.gz" --windows "$TRACES/swan4.windows" --seed "$s" --quiet \
    --scheme lograid4 --rgroups 1 --ssds-per-rgroup 3 --ssd-capacity 1296MiB --segment 8MiB --spare 10 \
    --out "$OUT/target-lograid4-default/seed$s" >/dev/null
done

# Part 2. Table 4 at the recorded times, with and without reads overtaking user writes.
sim table4-paper swan4-3x3 swan4 recorded
sim table4-overtake swan4-3x3 swan4 recorded --reads-overtake-writes on

python3 scripts/lib/ycsb_why_tables.py "$OUT" $SEEDS
