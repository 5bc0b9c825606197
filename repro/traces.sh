#!/usr/bin/env bash
# Every trace in the traces directory under Harmonia's baseline (raid0, uncoordinated SSD GC),
# its coordinated-GC policies, and SWAN0 / Log-RAID0 over the same 8 modelled SSDs: mean
# response time, standard deviation and coefficient of variation (Harmonia's metrics), as a
# markdown table. Prints; asserts nothing.
#
#   repro/traces.sh                      # SWAN_TRACES defaults to ../shared/traces
#   repro/traces.sh > repro/traces.txt   # the checked-in reference
#
# Array: 8 Table IX SSDs (the `harmonia` preset) scaled to 2 GiB each so every trace runs in
# seconds; 4 KiB stripe unit; every SSD filled with valid data, then 90 % of its pages
# overwritten at random without timing (--fill --age 0.9), so the SSDs' own GC is running
# when the trace starts. Traces replay as recorded; addresses wrap modulo the volume.
# SWAN0 is 4 R-groups x 2 SSDs, Log-RAID0 one group of 8; their SSDs are aged the same way,
# but their format TRIMs it, so each log is pre-filled instead (--prefill: random 8 KiB
# writes into the empty log, the blocks they missed, then more random writes, all untimed,
# until array GC is in its steady state) and keeps 15 % of its space spare (--spare 0.15,
# the SSDs' own share), as in `swan repro harmonia-hpc`.
set -euo pipefail
cd "$(dirname "$0")/.."
TRACES=${SWAN_TRACES:-../shared/traces}
[[ -d $TRACES ]] || { echo "traces.sh: no traces directory at $TRACES (set SWAN_TRACES)" >&2; exit 1; }
cargo build --release -q -p swan-cli
swan=target/release/swan
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# 1 MiB segments, as when the reference output was made (swan sim's default is now the SSD's
# erase stripe, 64 MiB for this model): the README's finding on these traces is about them.
common=(--ssd harmonia --ssd-capacity 2GiB --chunk 4KiB --segment 1MiB --fill --age 0.9 --replay recorded --quiet)
schemes=("raid0 --rgroups 1 --ssds-per-rgroup 8"
  "harmonia-reactive --rgroups 1 --ssds-per-rgroup 8"
  "harmonia-proactive --rgroups 1 --ssds-per-rgroup 8"
  "harmonia-idle --rgroups 1 --ssds-per-rgroup 8"
  "swan0 --rgroups 4 --ssds-per-rgroup 2 --prefill --spare 0.15"
  "lograid0 --rgroups 1 --ssds-per-rgroup 8 --prefill --spare 0.15")

echo "Mean response time in ms (standard deviation, coefficient of variation); ${common[*]}; swan0 and lograid0 also --prefill --spare 0.15"
echo
printf '| trace | requests |'
for s in "${schemes[@]}"; do printf ' %s |' "${s%% *}"; done
printf '\n|---|---:|'
for _ in "${schemes[@]}"; do printf -- '---:|'; done
echo
for t in "$TRACES"/*; do
  [[ $(basename "$t") == README.md ]] && continue
  row="| $(basename "$t") |"
  n=""
  for s in "${schemes[@]}"; do
    name=${s%% *}
    # shellcheck disable=SC2086
    "$swan" sim --scheme $s "${common[@]}" --trace "$t" --out "$out/$name" >/dev/null 2>"$out/err" ||
      { cat "$out/err" >&2; exit 1; }
    cell=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
l = d["latency_us"]
print(d["requests"], "%.3f (%.3f, %.2f)" % (l["mean"] / 1000, l["stddev"] / 1000, l["cv"]))
' "$out/$name/summary.json")
    n=${cell%% *}
    row="$row ${cell#* } |"
  done
  echo "${row/|  /| } " | sed "s/^| \([^|]*\) |/| \1 | $n |/"
done
