#!/usr/bin/env bash
# Why SWAN4's GC victims are fuller than Log-RAID4's on the recorded YCSB Load (issue 23), in
# the simulator: the experiments behind docs/findings/swan.md ("The causes, by experiment",
# "SWAN4's rules, one at a time").
#
#   scripts/ycsb-victims.sh [SEEDS]     # default "1 2 3"; a few minutes on 2 cores after the build
#
# SWAN4's recorded trace (data/traces/ycsb/swan4.blkparse.gz) replayed closed-loop, as
# `swan repro ycsb` runs Fig. 8, at equal log width (2 data SSDs take the log's writes) and
# the recorded volume (2325 MiB, arrays `swan create`d with 8 MiB segments as
# scripts/ycsb-why.sh makes them), one change at a time:
#
#   swan4-3x3          SWAN4 3R-3SSD, the recorded shape: the paper's rule
#   swan4-3x3-front    the same, GC also free to take victims in the front-end
#                      (`swan sim --gc-in-front-end on`, an experiment): cause (a)
#   swan4-3x3-groups1  one back-end R-group collecting at a time (`--gc-groups 1`, Fig.
#                      6(b)), where swan lets every back-end R-group collect at once
#   swan4-3x3-front-groups1  both: GC goes wherever the emptiest segment is, one job at a
#                      time, as Log-RAID4's one pool does
#   swan4-2x3, -4x3    2 or 4 R-groups of 3 at the same volume: fewer or more, smaller
#                      R-groups, each with its own free pool: cause (d)
#   swan4-3x3-target1  SWAN4 3R-3SSD as `swan sim` builds it without --array, GC target 1
#                      (the one check of cause (c), shown not to be it by ycsb-why.sh)
#   lograid4-1x3       Log-RAID4 over 3 SSDs: one pool
#
# Per run and seed: the Load's MB/s, and over the Load alone (the difference of two runs cut
# at the end of mkfs and at the end of the Load, --max-requests) the victims, their valid
# share, the emptiest sealed segment's anywhere in the array at each pick (greedy over every
# segment), how often GC passed over an emptier segment than the victim and why (in the
# front-end; in an R-group already collecting its one victim; in one with no free segment),
# and the victims GC moves had written against those user writes had (summary.json
# `victim_choice`). Cause (b) is read from the last.
#
# Runs go to out/ycsb-victims/; tables are printed as Markdown.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=ycsb-victims.sh
# shellcheck source=scripts/lib/seeds.sh
source scripts/lib/seeds.sh
seeds_or_help "$@"
nice -n 10 cargo build --release -q -p swan-cli
SWAN=target/release/swan
OUT=out/ycsb-victims
TRACE=data/traces/ycsb/swan4.blkparse.gz
WINDOWS=data/traces/ycsb/swan4.windows
rm -rf "$OUT" && mkdir -p "$OUT"

# The trace's requests (R and W lines) up to the end of phase $1.
requests_to() {
  local end
  end=$(awk -v p="$1" '$1 == p { print $3 }' "$WINDOWS")
  zcat "$TRACE" | awk -v t="$end" '!/^#/ && $4 <= t && $7 ~ /^[RW]/ { n++ } END { print n + 0 }'
}
MKFS_END=$(requests_to mkfs)
LOAD_END=$(requests_to load)

# mkarray NAME SCHEME RGROUPS SSDS_PER_RGROUP MEMBER_SIZE: a `swan create`d array in $OUT/arrays.
mkarray() {
  local dir="$OUT/arrays/$1" n=$(($3 * $4)) m=()
  mkdir -p "$dir"
  for ((i = 0; i < n; i++)); do m+=("$dir/m$i"); done
  "$SWAN" create --force --segment 8M --scheme "$2" --rgroups "$3" --ssds-per-rgroup "$4" --member-size "$5" "${m[@]}" >/dev/null
}
mkarray swan4-3x3 swan4 3 3 512M
mkarray swan4-2x3 swan4 2 3 768M
mkarray swan4-4x3 swan4 4 3 392M
mkarray lograid4-1x3 lograid4 1 3 1500M

# run NAME ARRAY-OPTIONS...: per seed, the whole trace and the two cuts.
run() {
  local name=$1
  shift
  for s in $SEEDS; do
    for cut in all mkfs load; do
      local max=()
      [[ $cut == mkfs ]] && max=(--max-requests "$MKFS_END")
      [[ $cut == load ]] && max=(--max-requests "$LOAD_END")
      nice -n 10 "$SWAN" sim --ssd sata850pro --age 0.6 --trace-format blkparse --replay closed=32 \
        --trace "$TRACE" --windows "$WINDOWS" --seed "$s" --quiet "$@" "${max[@]}" \
        --out "$OUT/$name/$cut/seed$s" >/dev/null
    done
  done
  echo "$name" >>"$OUT/runs"
}
: >"$OUT/runs"
run swan4-3x3 --array "$OUT/arrays/swan4-3x3/m0"
run swan4-3x3-front --array "$OUT/arrays/swan4-3x3/m0" --gc-in-front-end on
run swan4-3x3-groups1 --array "$OUT/arrays/swan4-3x3/m0" --gc-groups 1
run swan4-3x3-front-groups1 --array "$OUT/arrays/swan4-3x3/m0" --gc-in-front-end on --gc-groups 1
run swan4-2x3 --array "$OUT/arrays/swan4-2x3/m0"
run swan4-4x3 --array "$OUT/arrays/swan4-4x3/m0"
run swan4-3x3-target1 --scheme swan4 --rgroups 3 --ssds-per-rgroup 3 --ssd-capacity 432MiB --segment 8MiB --spare 10 --gc-target 1
run lograid4-1x3 --array "$OUT/arrays/lograid4-1x3/m0"

python3 scripts/lib/ycsb_victims_tables.py "$OUT" $SEEDS
