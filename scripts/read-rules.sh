#!/usr/bin/env bash
# Reads that do not wait for GC (issue 23, part 2), in the simulator: SWAN's read priority
# on and off (reads per R-group role and their mean latency, as SWAN's Table 4), and reads
# around a busy SSD (--parity-reads) off and on (read p99, p99.9, the extra member reads).
#
#   scripts/read-rules.sh [SEEDS]     # default "1 2 3"; 1–6 min on 2 cores after the build
#
# SWAN4, 3 R-groups × 3 SSDs of 256 MiB (sata850pro, aged 60 %), 25 % spare, 4 KiB random
# reads and writes at queue depth 32 for 20 simulated s: 70/30 read/write, and a write-heavy
# 30/70; and the write-heavy mix over SSDs that collect on their own (segments smaller than
# their erase stripes). Runs go to out/read-rules/; the tables are printed as Markdown
# (docs/findings/swan.md).
set -euo pipefail
cd "$(dirname "$0")/.."
SCRIPT=read-rules.sh
# shellcheck source=scripts/lib/seeds.sh
source scripts/lib/seeds.sh
seeds_or_help "$@"
cargo build --release -q -p swan-cli
SWAN=target/release/swan
OUT=out/read-rules
BASE=(--scheme swan4 --rgroups 3 --ssds-per-rgroup 3 --ssd-capacity 256MiB
  --rw randrw --bs 4k --iodepth 32 --time 20 --quiet)
run() { # name, then options
  local name=$1; shift
  for s in $SEEDS; do
    "$SWAN" sim "${BASE[@]}" "$@" --seed "$s" --out "$OUT/$name/seed$s" >/dev/null
  done
}
run prio-on --spare 25 --rwmixread 0.7 --read-priority on
run prio-off --spare 25 --rwmixread 0.7 --read-priority off
for mix in 70 30; do
  r=$(awk "BEGIN { print $mix / 100 }")
  run "mix$mix-parity-off" --spare 25 --rwmixread "$r"
  run "mix$mix-parity-on" --spare 25 --rwmixread "$r" --parity-reads on
  run "mix$mix-noprio-parity-off" --spare 25 --rwmixread "$r" --read-priority off
  run "mix$mix-noprio-parity-on" --spare 25 --rwmixread "$r" --read-priority off --parity-reads on
done
# SSDs that collect on their own: 1 MiB segments against the model's 8 MiB erase stripes,
# 90 % aged, 10 % spare (the write-heavy mix).
SELF=(--rwmixread 0.3 --segment 1MiB --age 0.9 --spare 10)
run "ssdgc-parity-off" "${SELF[@]}"
run "ssdgc-parity-on" "${SELF[@]}" --parity-reads on
python3 - "$OUT" $SEEDS <<'PY'
import json, statistics, sys
out, seeds = sys.argv[1], sys.argv[2:]
def runs(name):
    return [json.load(open(f"{out}/{name}/seed{s}/summary.json")) for s in seeds]
def mean(xs):
    return statistics.mean(xs)
print(f"Read priority, SWAN4 70/30 random 4 KiB, mean of seeds {' '.join(seeds)}:\n")
print("| read priority | role | share of reads | mean latency µs | read p99 µs | read p99.9 µs |")
print("|---|---|---|---|---|---|")
for name in ["prio-on", "prio-off"]:
    rs = runs(name)
    for i, role in enumerate(["front-end", "idle back-end", "collecting back-end"]):
        share = mean([r["read_roles"][i]["share"] for r in rs]) * 100
        lat = mean([r["read_roles"][i]["mean_latency_us"] for r in rs])
        p99 = mean([r["read_latency_us"]["p99"] for r in rs]) if i == 0 else None
        p999 = mean([r["read_latency_us"]["p999"] for r in rs]) if i == 0 else None
        tail = f"{p99:.0f} | {p999:.0f}" if i == 0 else " | "
        print(f"| {name[5:] if i == 0 else ''} | {role} | {share:.1f} % | {lat:.0f} | {tail} |")
print(f"\nReads around a busy SSD (--parity-reads), SWAN4, mean of seeds {' '.join(seeds)} (range in brackets):\n")
print("| mix r/w | read priority | parity reads | read p99 µs | read p99.9 µs | read mean µs | blocks read around | extra member reads per 1000 user reads |")
print("|---|---|---|---|---|---|---|---|")
for mix in ["70", "30"]:
    for prio in ["", "noprio-"]:
        for par in ["off", "on"]:
            rs = runs(f"mix{mix}-{prio}parity-{par}")
            p99 = [r["read_latency_us"]["p99"] for r in rs]
            p999 = [r["read_latency_us"]["p999"] for r in rs]
            m = mean([r["read_latency_us"]["mean"] for r in rs])
            blocks = sum(r["parity_read_blocks"] for r in rs)
            reads = sum(sum(x["reads"] for x in r["read_roles"]) for r in rs)
            extra = sum(r["parity_extra_reads"] for r in rs)
            print(f"| {mix}/{100-int(mix)} | {'off' if prio else 'on'} | {par} | {mean(p99):.0f} [{min(p99)}–{max(p99)}] "
                  f"| {mean(p999):.0f} [{min(p999)}–{max(p999)}] | {m:.1f} | {blocks} | {1000*extra/reads:.2f} |")
print(f"\nSSDs collecting on their own (30/70, --segment 1MiB --age 0.9 --spare 10), seeds {' '.join(seeds)}:\n")
print("| parity reads | SSD WAF | write MB/s | read p99 µs | read p99.9 µs | read mean µs | blocks read around | extra member reads per 1000 user reads |")
print("|---|---|---|---|---|---|---|---|")
for par in ["off", "on"]:
    rs = runs(f"ssdgc-parity-{par}")
    p99 = [r["read_latency_us"]["p99"] for r in rs]
    p999 = [r["read_latency_us"]["p999"] for r in rs]
    m = mean([r["read_latency_us"]["mean"] for r in rs])
    waf = mean([r["waf_ssd"] for r in rs])
    w = mean([r["user_write_mbps_mean"] for r in rs])
    blocks = sum(r["parity_read_blocks"] for r in rs)
    reads = sum(sum(x["reads"] for x in r["read_roles"]) for r in rs)
    extra = sum(r["parity_extra_reads"] for r in rs)
    print(f"| {par} | {waf:.2f} | {w:.0f} | {mean(p99):.0f} [{min(p99)}–{max(p99)}] | {mean(p999):.0f} [{min(p999)}–{max(p999)}] "
          f"| {m:.1f} | {blocks} | {1000*extra/reads:.2f} |")
PY
