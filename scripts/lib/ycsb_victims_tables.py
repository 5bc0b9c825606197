"""The table of scripts/ycsb-victims.sh, as Markdown, from the runs it left in OUT.

    python3 scripts/lib/ycsb_victims_tables.py OUT SEED...

Every figure but the Load's MB/s is over the Load alone: the counters of the run cut at the
end of the Load less those of the run cut at the end of mkfs (summary.json `victim_choice`).
"""

import json
import statistics
import sys

out, seeds = sys.argv[1], sys.argv[2:]

LABELS = {
    "swan4-3x3": "SWAN4 3R-3SSD (the paper's rule)",
    "swan4-3x3-front": "SWAN4 3R-3SSD, GC also in the front-end",
    "swan4-3x3-groups1": "SWAN4 3R-3SSD, one collecting R-group",
    "swan4-3x3-front-groups1": "SWAN4 3R-3SSD, GC also in the front-end, one collecting R-group",
    "swan4-2x3": "SWAN4 2R-3SSD",
    "swan4-4x3": "SWAN4 4R-3SSD",
    "swan4-3x3-target1": "SWAN4 3R-3SSD, GC target 1 (no --array)",
    "lograid4-1x3": "Log-RAID4 over 3",
}


def summary(name, cut, seed):
    with open(f"{out}/{name}/{cut}/seed{seed}/summary.json") as f:
        return json.load(f)


def load_mbps(name, seed):
    return next(w for w in summary(name, "all", seed)["windows"] if w["name"] == "load")["mbps"]


def load_counters(name, seed):
    """The Load's victim counters (cut at its end less cut at the end of mkfs), and its stall."""
    a, b = summary(name, "mkfs", seed), summary(name, "load", seed)
    zero = {"victim_valid_blocks": 0, "victim_payload_blocks": 0}
    ca, cb = a.get("victim_choice") or zero, b.get("victim_choice") or zero
    d = {k: cb.get(k, 0) - ca.get(k, 0) for k in cb}
    d["victims"] = b["victims"] - a["victims"]
    d["stall_s"] = b["stall_s"] - a["stall_s"]
    return d


def span(xs, fmt):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def share(n, d):
    return n / d if d else float("nan")


print(f"SWAN4's recorded Load at equal log width (2 data SSDs), closed loop of 32, seeds {' '.join(seeds)}:")
print("Load MB/s per seed (mean); the rest over the Load alone, min–max over the seeds.\n")
print(
    "| array | Load MB/s | victims | victims' valid share | emptiest anywhere, valid share | "
    "picks passing over an emptier segment: in the front-end, in an R-group collecting, in one without room | "
    "victims GC wrote: share, valid share | victims user writes wrote: valid share | writes stalled ms |"
)
print("|---|---|---:|---:|---:|---|---|---:|---:|")
for name in [l.strip() for l in open(f"{out}/runs") if l.strip()]:
    mbps = [load_mbps(name, s) for s in seeds]
    cs = [load_counters(name, s) for s in seeds]
    per = [c["victim_payload_blocks"] / c["victims"] if c["victims"] else 0 for c in cs]
    valid = [share(c["victim_valid_blocks"], c["victim_payload_blocks"]) for c in cs]
    best = [share(c["best_anywhere_valid_blocks"], c["victim_payload_blocks"]) for c in cs]
    front = [share(c["emptier_in_front_end"], c["victims"]) for c in cs]
    busy = [share(c["emptier_in_collecting"], c["victims"]) for c in cs]
    room = [share(c["emptier_without_room"], c["victims"]) for c in cs]
    gcw = [share(c["gc_written_victims"], c["victims"]) for c in cs]
    gcv = [share(c["gc_written_valid_blocks"], c["gc_written_victims"] * p) for c, p in zip(cs, per)]
    usr = [
        share(c["victim_valid_blocks"] - c["gc_written_valid_blocks"], (c["victims"] - c["gc_written_victims"]) * p)
        for c, p in zip(cs, per)
    ]
    print(
        f"| {LABELS.get(name, name)} | {' / '.join(f'{m:.0f}' for m in mbps)} ({statistics.mean(mbps):.0f}) | "
        f"{span([c['victims'] for c in cs], '{}')} | {span(valid, '{:.2f}')} | {span(best, '{:.2f}')} | "
        f"{span([100 * x for x in front], '{:.0f} %')}, {span([100 * x for x in busy], '{:.0f} %')}, "
        f"{span([100 * x for x in room], '{:.0f} %')} | "
        f"{span([100 * x for x in gcw], '{:.0f} %')}, {span(gcv, '{:.2f}')} | {span(usr, '{:.2f}')} | "
        f"{span([1000 * c['stall_s'] for c in cs], '{:.0f}')} |"
    )
