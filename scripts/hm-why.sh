#!/usr/bin/env bash
# Why is the model's hm storage-bound where Table 2's hm is link-bound (issue 21)? Replays
# the hm excerpt on the 4x16 non-autonomic array under each suspect and prints, per cell,
# the mean (min–max over seeds) of IOPS, latency, link and storage contention and stall per
# request, link's share of link + storage and the share of the stall spent above the endpoints
# (root complex + switch queues), as docs/findings/triple-a.md's "Why hm is storage-bound" table.
#
#   scripts/hm-why.sh [SEEDS]     # default "1 2 3"; about 2 min on 2 cores after the build
#
# Suspects: write placement (in place, the model's default; GC-active FIMMs whose FTL writes
# at a log head, --gc; the same FTL with collections that cost nothing, --gc-untimed; writes
# turned into reads or dropped, the limiting case); concentration (--chunk 4MiB puts 43 % of
# hm's page accesses on its 5 busiest clusters, Table 1's 43.7 %; 16MiB, 60 %); requests in
# flight (35, the calibrated depth; 202, the paper's latency × IOPS). Runs go to out/hm-why/.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=hm-why.sh
# shellcheck source=scripts/lib/seeds.sh
source scripts/lib/seeds.sh
seeds_or_help "$@"
cargo build --release -q -p swan-cli
SWAN=target/release/swan
OUT=out/hm-why
HM=data/traces/msr-hm_0-excerpt.csv
mkdir -p "$OUT"
# The limiting cases: the same requests with every write read instead, or left out.
sed 's/,Write,/,Read,/' "$HM" >"$OUT/hm-writes-read.csv"
grep -v ',Write,' "$HM" >"$OUT/hm-reads-only.csv"
SCALED=(--blocks-per-plane 64 --pages-per-block 16)
run() { # name, trace, then options
  local name=$1 trace=$2; shift 2
  for s in $SEEDS; do
    "$SWAN" triple-a --trace "$trace" --policy non-autonomic --seconds 1 --measure-from 0.2 \
      --seed "$s" "$@" --json "$OUT/$name.seed$s.json" >/dev/null 2>&1
  done
  echo "$name|$*" >>"$OUT/cells"
}
: >"$OUT/cells"
run "in place, depth 35" "$HM"
run "in place, 512 MiB FIMMs, depth 35" "$HM" "${SCALED[@]}"
run "writes read instead, depth 35" "$OUT/hm-writes-read.csv"
run "writes dropped, depth 35" "$OUT/hm-reads-only.csv"
run "GC-active FIMMs, depth 35" "$HM" "${SCALED[@]}" --gc
run "ideal FTL, depth 35" "$HM" "${SCALED[@]}" --gc --gc-untimed
run "ideal FTL, 4 MiB chunks, depth 35" "$HM" "${SCALED[@]}" --gc --gc-untimed --chunk 4MiB
run "in place, depth 202" "$HM" --iodepth 202
run "in place, 4 MiB chunks, depth 202" "$HM" --iodepth 202 --chunk 4MiB
run "writes read instead, 4 MiB chunks, depth 202" "$OUT/hm-writes-read.csv" --iodepth 202 --chunk 4MiB
run "GC-active FIMMs, 4 MiB chunks, depth 202" "$HM" "${SCALED[@]}" --gc --iodepth 202 --chunk 4MiB
run "ideal FTL, depth 202" "$HM" "${SCALED[@]}" --gc --gc-untimed --iodepth 202
run "ideal FTL, 4 MiB chunks, depth 202" "$HM" "${SCALED[@]}" --gc --gc-untimed --iodepth 202 --chunk 4MiB
run "ideal FTL, 16 MiB chunks, depth 202" "$HM" "${SCALED[@]}" --gc --gc-untimed --iodepth 202 --chunk 16MiB
python3 - "$OUT" $SEEDS <<'EOF'
import json, sys
out, seeds = sys.argv[1], sys.argv[2:]
def cell(vals, fmt):
    m = sum(vals) / len(vals)
    lo, hi = min(vals), max(vals)
    return fmt.format(m) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(m)} ({fmt.format(lo)}–{fmt.format(hi)})"
print("| cell | kIOPS | latency µs | link µs | storage µs | stall µs | link share | above the endpoints |")
print("|---|---|---|---|---|---|---|---|")
for line in open(f"{out}/cells"):
    name, _ = line.rstrip("\n").split("|", 1)
    rs = [json.load(open(f"{out}/{name}.seed{s}.json"))[0] for s in seeds]
    st = [r["queue_stall_us"] for r in rs]
    print("| " + " | ".join([
        name,
        cell([r["iops"] / 1e3 for r in rs], "{:.1f}"),
        cell([r["latency_us"]["mean"] for r in rs], "{:,.0f}"),
        cell([r["link_contention_us"] for r in rs], "{:,.0f}"),
        cell([r["storage_contention_us"] for r in rs], "{:,.0f}"),
        cell([s["total"] for s in st], "{:,.0f}"),
        cell([100 * r["link_contention_us"] / max(r["link_contention_us"] + r["storage_contention_us"], 1e-9)
              for r in rs], "{:.0f} %"),
        cell([100 * (s["root_complex"] + s["switch"]) / max(s["total"], 1e-9) for s in st], "{:.0f} %"),
    ]) + " |")
print(f"(4x16 non-autonomic array, hm excerpt looped, 1 simulated s measured from 0.2 s, seeds {' '.join(seeds)}; "
      "paper: 1,806 µs, 112 k IOPS, link 1,270, storage 461, stall 1,731 µs, link 73 %)")
EOF
