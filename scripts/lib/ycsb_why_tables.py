"""The tables of scripts/ycsb-why.sh, as Markdown, from the runs it left in OUT.

    python3 scripts/lib/ycsb_why_tables.py OUT SEED...
"""

import gzip
import json
import statistics
import sys

out, seeds = sys.argv[1], sys.argv[2:]
first = seeds[0]


def summary(name, seed):
    with open(f"{out}/{name}/seed{seed}/summary.json") as f:
        return json.load(f)


def window(s, phase):
    return next(w for w in s["windows"] if w["name"] == phase)


def role(w, name):
    return next(r for r in w.get("read_roles") or [] if r["role"] == name)


def load_flash(name):
    """Each SSD's flash busy fraction over the Load alone, from the two cut runs of the first
    seed (cumulative busy time at the end of the Load minus that at the end of mkfs), with
    the victims the array collected and the time writes waited for space over the Load."""
    a, b = summary(f"cut-mkfs-{name}", first), summary(f"cut-load-{name}", first)
    span = b["sim_s"] - a["sim_s"]
    busy = [
        (y["die_busy"] * b["sim_s"] - x["die_busy"] * a["sim_s"]) / span for x, y in zip(a["ssd_load"], b["ssd_load"])
    ]
    return busy, b["victims"] - a["victims"], b["stall_s"] - a["stall_s"], span


shapes = [line.split() for line in open(f"{out}/shapes")]
print("Load, closed loop of 32, MB/s (reads + writes) per seed; the rest from seed", first, "\n")
print(
    "| array | SSDs × member | volume MiB | log SSDs | trace | Load MB/s | mean | write MB/s | "
    "reads on the front-end: share, mean µs | flash busy: busiest SSD, median SSD | victims | writes stalled ms |"
)
print("|---|---|---:|---:|---|---|---:|---:|---|---|---:|---:|")
for name, scheme, rg, per, size, logs, trace in shapes:
    runs = [summary(f"load-{name}", s) for s in seeds]
    mbps = [window(r, "load")["mbps"] for r in runs]
    w = window(runs[0], "load")
    write_mbps = w["write_bytes"] / w["span_s"] / 1e6
    volume = runs[0]["volume_blocks"] * 4096 >> 20
    front = "—"
    if scheme.startswith("swan"):
        r = role(w, "front-end")
        front = f"{100 * r['share']:.0f} %, {r['mean_latency_us']:,.0f}"
    flash = victims = stalled = "—"
    if True:
        busy, v, st, _ = load_flash(name)
        flash = f"{100 * max(busy):.0f} %, {100 * statistics.median(busy):.0f} %"
        victims, stalled = str(v), f"{1000 * st:.0f}"
    shape = f"{scheme} {rg}R-{per}SSD" if scheme.startswith("swan") else f"{scheme} over {int(rg) * int(per)}"
    print(
        f"| {shape} | {int(rg) * int(per)} × {size} | {volume} | {logs} | {trace} | "
        f"{' / '.join(f'{m:.0f}' for m in mbps)} | {statistics.mean(mbps):.0f} | {write_mbps:.0f} | {front} | "
        f"{flash} | {victims} | {stalled} |"
    )

print("\nLoad with the fill's writes shuffled, closed loop of 32: MB/s per seed (mean); victims' valid share, writes stalled, seed", first, "\n")
print("| array | log SSDs | recorded order: MB/s | victims' valid share, whole run | stalled ms, whole run | fill shuffled: MB/s | victims' valid share, whole run | stalled ms, whole run |")
print("|---|---:|---|---:|---:|---|---:|---:|")
for name in ["swan4-3x3", "lograid4-1x3", "swan4-3x5", "lograid4-1x5", "lograid4-1x9"]:
    line = next(l for l in shapes if l[0] == f"{name}-swan4")
    cells = []
    for run in [f"load-{name}-swan4", f"shuffled-{name}"]:
        rs = [summary(run, s) for s in seeds]
        mbps = [window(r, "load")["mbps"] for r in rs]
        cells.append(
            f"{' / '.join(f'{m:.0f}' for m in mbps)} ({statistics.mean(mbps):.0f}) | "
            f"{rs[0]['victim_valid_fraction']:.2f} | {1000 * rs[0]['stall_s']:.0f}"
        )
    print(f"| {line[1]} {line[2]}×{line[3]} | {line[5]} | {cells[0]} | {cells[1]} |")


print(f"\nGC trigger: 3R-3SSD built by swan sim (no --array), 2325 MiB; Load MB/s per seed; victims' valid share and writes stalled over the whole run, seed {first}\n")
print("| array | GC target (segments) | Load MB/s | victims' valid share | stalled ms |")
print("|---|---|---|---:|---:|")
for run, label in [("target-swan4-default", "SWAN4 3R-3SSD | default"), ("target-swan4-1", "SWAN4 3R-3SSD | 1"),
                   ("target-swan4-3", "SWAN4 3R-3SSD | 3"), ("target-swan4-16", "SWAN4 3R-3SSD | 16"),
                   ("target-lograid4-default", "Log-RAID4 over 3 | its watermarks")]:
    rs = [summary(run, s) for s in seeds]
    mbps = [window(r, "load")["mbps"] for r in rs]
    print(f"| {label} | {' / '.join(f'{m:.0f}' for m in mbps)} | {rs[0]['victim_valid_fraction']:.2f} | {1000 * rs[0]['stall_s']:.0f} |")


def load_writes(trace, windows):
    """Where the Load's writes land in the address space (by sixth: the fill wrote it front to
    back, so in the log that is also by where the fill put them), and how many of the blocks
    they overwrite the fill last wrote rather than the Load itself or mkfs."""
    w = {l.split()[0]: tuple(map(float, l.split()[1:3])) for l in open(windows) if not l.startswith("#")}
    volume = 0
    for line in gzip.open(trace, "rt"):
        if line.startswith("# array") and "volume" in line:
            volume = int(line.split("volume")[1].split()[0]) // 4096
            break
    last, sixths, by_fill, total = {}, [0] * 6, 0, 0
    for line in gzip.open(trace, "rt"):
        f = line.split()
        if line.startswith("#") or len(f) < 10 or not f[6].startswith("W"):
            continue
        t, first, n = float(f[3]), int(f[7]) // 8, (int(f[7]) + int(f[9]) + 7) // 8 - int(f[7]) // 8
        phase = next((k for k, (a, b) in w.items() if a <= t <= b), None)
        for b in range(first, first + n):
            if phase == "load":
                sixths[min(5, b * 6 // volume)] += 1
                total += 1
                by_fill += last.get(b) == "fill"
            last[b] = phase
    return [x / total for x in sixths], by_fill / total


sixths, by_fill = load_writes("data/traces/ycsb/swan4.blkparse.gz", "data/traces/ycsb/swan4.windows")
print(
    "\nSWAN4's trace: the Load's writes by sixth of the address space:",
    " / ".join(f"{100 * x:.0f} %" for x in sixths),
    f"; blocks last written by the fill: {100 * by_fill:.1f} %",
)

print(f"\nTable 4: SWAN4's trace, phase A at the recorded times, seeds {' '.join(seeds)} (min–max over seeds)\n")
print(
    "| reads overtake user writes | role | share | mean µs | mean wait µs | found writes in flight | "
    "mean µs, those | mean µs, the others |"
)
print("|---|---|---|---|---|---|---|---|")


def span(xs, fmt):
    lo, hi = min(xs), max(xs)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


for name, label in [("table4-paper", "no (the paper's rule)"), ("table4-overtake", "yes (--reads-overtake-writes on)")]:
    ws = [window(summary(name, s), "a") for s in seeds]
    for r in ["front-end", "idle back-end", "collecting back-end"]:
        rs = [role(w, r) for w in ws]
        col = lambda k, f, scale=1.0: span([x[k] * scale for x in rs], f)  # noqa: E731
        behind = col("mean_latency_behind_writes_us", "{:,.0f}") if any(x["behind_writes_share"] for x in rs) else "—"
        print(
            f"| {label} | {r} | {col('share', '{:.0f}', 100)} % | {col('mean_latency_us', '{:,.0f}')} | "
            f"{col('mean_wait_us', '{:,.0f}')} | {col('behind_writes_share', '{:.1f}', 100)} % | {behind} | "
            f"{col('mean_latency_clear_us', '{:,.0f}')} |"
        )
    lat = [w["read_latency_us"]["mean"] for w in ws]
    print(f"| {label} | all reads | | {span(lat, '{:,.0f}')} | | | | |")
