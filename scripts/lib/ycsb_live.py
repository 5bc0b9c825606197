"""The tables of scripts/ycsb-live.sh: SWAN's Fig. 8-11 and Table 4, live and simulated.

Usage: ycsb_live.py DIR SCHEME... (DIR/SCHEME holds what ycsb-live.sh left: db_bench logs
per phase, the server's trace, windows.txt, and swan sim's runs sim-recorded/ and
sim-closed/). Prints the tables and writes them to DIR/ycsb.tsv.
"""

import json
import re
import sys
from pathlib import Path

PHASES = ["load", "a", "b", "c", "d"]
BENCH = {"load": "fillrandom", "a": "readrandomwriterandom", "b": "readrandomwriterandom",
         "c": "readrandom", "d": "readwhilewriting"}


def db_bench(log: Path, bench: str) -> dict:
    """ops/s, and the per-read histogram's mean and tail (µs) when db_bench printed one."""
    text = log.read_text(errors="replace")
    out = {"ops": float("nan"), "read_mean": float("nan"), "read_p99": float("nan"), "read_p999": float("nan")}
    for line in text.splitlines():
        line = line.rsplit("\r", 1)[-1]
        if line.startswith(bench) and "ops/sec" in line:
            out["ops"] = float(re.search(r"([0-9.]+) ops/sec", line).group(1))
    m = re.search(r"Microseconds per read:\s*\nCount: \d+ Average: ([0-9.]+).*?\nPercentiles: P50: [0-9.]+ P75: "
                  r"[0-9.]+ P99: ([0-9.]+) P99\.9: ([0-9.]+)", text, re.S)
    if m:
        out["read_mean"], out["read_p99"], out["read_p999"] = (float(g) for g in m.groups())
    return out


def trace_traffic(trace: Path, windows: dict) -> dict:
    """Per window: bytes the server received (reads and writes) and the window's wall seconds."""
    acc = {name: 0 for name in windows}
    bounds = sorted((s, e, n) for n, (s, e) in windows.items())
    for line in trace.open():
        f = line.split()
        if len(f) != 11 or f[5] != "D" or f[6][0] not in "RW":
            continue
        t = float(f[3])
        for s, e, n in bounds:
            if s <= t < e:
                acc[n] += int(f[9]) * 512
                break
    return {n: (acc[n], e - s) for n, (s, e) in windows.items()}


def main() -> None:
    d = Path(sys.argv[1])
    schemes = sys.argv[2:]
    rows = []
    roles = None
    for scheme in schemes:
        sd = d / scheme
        windows = {}
        for line in (sd / "windows.txt").read_text().splitlines():
            name, s, e = line.split()
            windows[name] = (float(s), float(e))
        traffic = trace_traffic(sd / "live.blkparse", windows)
        sim = {mode: {w["name"]: w for w in json.loads((sd / f"sim-{mode}" / "summary.json").read_text())["windows"]}
               for mode in ("recorded", "closed")}
        for phase in PHASES:
            live = db_bench(sd / f"{phase}.log", BENCH[phase])
            rec, closed = sim["recorded"][phase], sim["closed"][phase]
            lat = rec.get("read_latency_us") or {}
            byts, secs = traffic[phase]
            rows.append({
                "scheme": scheme, "phase": phase, "live_ops": live["ops"],
                "live_read_mean_us": live["read_mean"], "live_read_p99_us": live["read_p99"],
                "live_read_p999_us": live["read_p999"],
                "live_block_mbps": byts / secs / 1e6 if secs > 0 else float("nan"),
                "sim_capacity_mbps": closed["mbps"],
                "sim_read_mean_us": lat.get("mean", float("nan")), "sim_read_p99_us": lat.get("p99", float("nan")),
                "sim_read_p999_us": lat.get("p999", float("nan")),
            })
            if scheme.startswith("swan") and phase == "a":
                roles = (scheme, rec.get("read_roles"))
    cols = list(rows[0].keys())
    with open(d / "ycsb.tsv", "w") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + "\n")

    def table(title, key, fmt="{:>10.0f}"):
        print(f"\n{title}")
        print(f"{'phase':<6}" + "".join(f"{s:>10}" for s in schemes))
        for phase in PHASES:
            cells = [next(r[key] for r in rows if r["scheme"] == s and r["phase"] == phase) for s in schemes]
            print(f"{phase:<6}" + "".join(fmt.format(c) for c in cells))

    table("Fig. 8, live: db_bench ops/s", "live_ops")
    table("Fig. 8, simulated: the array's capacity for the phase's block requests (closed loop), MB/s",
          "sim_capacity_mbps", "{:>10.1f}")
    table("live: block MB/s the server received over the phase's wall time", "live_block_mbps", "{:>10.1f}")
    table("Fig. 9, live: db_bench mean read latency, µs", "live_read_mean_us", "{:>10.1f}")
    table("Fig. 9, simulated: mean block-read latency at the recorded arrivals, µs", "sim_read_mean_us",
          "{:>10.1f}")
    table("Fig. 10/11 tail, live: db_bench read p99.9, µs", "live_read_p999_us")
    table("Fig. 10/11 tail, simulated: block-read p99.9, µs", "sim_read_p999_us")
    if roles and roles[1]:
        print(f"\nTable 4, simulated ({roles[0]}, phase a, recorded arrivals): role, reads, share, mean µs")
        for r in roles[1]:
            print(f"  {r['role']:<20} {r['reads']:>9} {100 * r['share']:>6.1f} % {r['mean_latency_us']:>9.1f}")
    print(f"\nwritten to {d / 'ycsb.tsv'}")


if __name__ == "__main__":
    main()
