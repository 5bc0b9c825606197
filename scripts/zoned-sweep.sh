#!/usr/bin/env bash
# SWAN, Log-RAID, RAIZN and ZapRAID over the zoned presets, three seeds each (docs/zoned.md, "First
# measurements"). A benchmark, not a test: it prints what it measured and asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'USAGE'
Usage: scripts/zoned-sweep.sh [--help]

For each drive (pm1731a with 2 GiB per SSD and one zone a segment, pm1731a with 16 GiB and
8 zones a segment, zn540 with 16 GiB and one zone a segment), each of swan0, lograid0,
swan4, lograid4, lograid5, raizn and zapraid over 3 R-groups x 2 SSDs, and seeds 1, 2 and 3:
`swan sim` with 8 KiB random writes until twice the raw capacity is written. One line per
run: drive, zones per segment, scheme, seed, write MB/s (mean, after GC onset), interval CV
after GC onset, array WAF and device WAF. About 12 minutes on 2 cores.

Environment: SWAN (default target/release/swan), DIR for the runs (default /tmp/zoned).
USAGE
}

case "${1:-}" in
  "") ;;
  -h|--help) usage; exit 0 ;;
  *) echo "zoned-sweep.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

SWAN=${SWAN:-target/release/swan}
DIR=${DIR:-/tmp/zoned}
[ -x "$SWAN" ] || { echo "zoned-sweep.sh: $SWAN not found; build it with cargo build --release -p swan-cli" >&2; exit 1; }
for dev in "pm1731a 2GiB 1" "pm1731a 16GiB 8" "zn540 16GiB 1"; do
  set -- $dev
  for scheme in swan0 lograid0 swan4 lograid4 lograid5 raizn zapraid; do
    for seed in 1 2 3; do
      out=$DIR/$1-$3-$scheme-$seed
      "$SWAN" sim --scheme "$scheme" --rgroups 3 --ssds-per-rgroup 2 --ssd "$1" --ssd-capacity "$2" \
        --zones-per-segment "$3" --footprint 2 --seed "$seed" --out "$out" --quiet > /dev/null
      python3 - "$out/summary.json" "$1 x$3 $scheme $seed" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
after = s.get("user_write_mbps_after_gc_mean") or 0.0
cv = (s.get("user_write_mbps_after_gc_cv") or 0.0) * 100
print(f"{sys.argv[2]}  {s['user_write_mbps_mean']:.1f} {after:.1f} MB/s  CV {cv:.1f} %  WAF {s['waf_array'] or 0:.3f} / {s['waf_ssd'] or 0:.2f}")
PY
    done
  done
done
