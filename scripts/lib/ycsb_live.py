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
# Where the CPU went, in cpu.tsv's column order after the wall time.
CPU_PARTS = ("server", "nbdfuse", "db_bench", "machine", "stolen")
# ...and in the order ycsb.tsv and the CPU table give them.
CPU_SHOWN = ("machine", "server", "nbdfuse", "db_bench", "stolen")
BENCH = {"load": "fillrandom", "a": "readrandomwriterandom", "b": "readrandomwriterandom",
         "c": "readrandom", "d": "readwhilewriting"}


def db_bench(log: Path, bench: str) -> dict:
    """ops/s, and the per-read histogram's mean and tail (µs) when db_bench printed one."""
    text = log.read_text(errors="replace")
    out = {"ops": float("nan"), "reads": float("nan"), "read_mean": float("nan"), "read_p99": float("nan"),
           "read_p999": float("nan")}
    for line in text.splitlines():
        line = line.rsplit("\r", 1)[-1]
        if line.startswith(bench) and "ops/sec" in line:
            out["ops"] = float(re.search(r"([0-9.]+) ops/sec", line).group(1))
    m = re.search(r"Microseconds per read:\s*\nCount: (\d+) Average: ([0-9.]+).*?\nPercentiles: P50: [0-9.]+ P75: "
                  r"[0-9.]+ P99: ([0-9.]+) P99\.9: ([0-9.]+)", text, re.S)
    if m:
        out["reads"], out["read_mean"], out["read_p99"], out["read_p999"] = (float(g) for g in m.groups())
    return out


def trace_traffic(trace: Path, windows: dict) -> dict:
    """Per window: bytes the server received (reads and writes), its block reads, and the
    window's wall seconds."""
    acc = {name: 0 for name in windows}
    reads = {name: 0 for name in windows}
    bounds = sorted((s, e, n) for n, (s, e) in windows.items())
    for line in trace.open():
        f = line.split()
        if len(f) != 11 or f[5] != "D" or f[6][0] not in "RW":
            continue
        t = float(f[3])
        for s, e, n in bounds:
            if s <= t < e:
                acc[n] += int(f[9]) * 512
                reads[n] += f[6][0] == "R"
                break
    return {n: (acc[n], reads[n], e - s) for n, (s, e) in windows.items()}


def cpu_cores(path: Path) -> dict:
    """Per phase: cores busy on average (CPU seconds over wall seconds) for the server, nbdfuse,
    db_bench and the whole machine, and cores stolen by the hypervisor; empty for runs made
    before cpu.tsv was written."""
    if not path.exists():
        return {}
    out = {}
    lines = path.read_text().splitlines()
    for line in lines[1:]:
        name, wall, *cpu = line.split()
        wall = float(wall)
        out[name] = {k: float(v) / wall for k, v in zip(CPU_PARTS, cpu)}
    return out


def lsm_at_start(path: Path) -> dict:
    """Per phase: RocksDB's files per level as the previous phase left them (ycsb-live.sh's
    lsm.tsv: `files[L0 L1 ...]`, the tree a phase's reads start in)."""
    if not path.exists():
        return {}
    ends = [line.split("\t") for line in path.read_text().splitlines()]
    return {ends[i + 1][0]: ends[i][1] for i in range(len(ends) - 1) if len(ends[i]) == 2 and len(ends[i + 1]) == 2}


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
        cpu = cpu_cores(sd / "cpu.tsv")
        lsm = lsm_at_start(sd / "lsm.tsv")
        sim = {mode: {w["name"]: w for w in json.loads((sd / f"sim-{mode}" / "summary.json").read_text())["windows"]}
               for mode in ("recorded", "closed")}
        for phase in PHASES:
            live = db_bench(sd / f"{phase}.log", BENCH[phase])
            rec, closed = sim["recorded"][phase], sim["closed"][phase]
            lat = rec.get("read_latency_us") or {}
            byts, block_reads, secs = traffic[phase]
            rows.append({
                "scheme": scheme, "phase": phase, "live_ops": live["ops"],
                "live_read_mean_us": live["read_mean"], "live_read_p99_us": live["read_p99"],
                "live_read_p999_us": live["read_p999"],
                "live_block_mbps": byts / secs / 1e6 if secs > 0 else float("nan"),
                "live_block_reads_per_s": block_reads / secs if secs > 0 else float("nan"),
                "live_block_reads_per_db_read": block_reads / live["reads"] if live["reads"] > 0 else float("nan"),
                "sim_capacity_mbps": closed["mbps"],
                "sim_read_mean_us": lat.get("mean", float("nan")), "sim_read_p99_us": lat.get("p99", float("nan")),
                "sim_read_p999_us": lat.get("p999", float("nan")),
            })
            rows[-1]["lsm_at_start"] = lsm.get(phase, "")
            for part in CPU_SHOWN:
                rows[-1][f"cpu_{part}_cores"] = cpu.get(phase, {}).get(part, float("nan"))
            if scheme.startswith("swan") and phase == "a":
                roles = (scheme, rec.get("read_roles"))
    cols = list(rows[0].keys())
    with open(d / "ycsb.tsv", "w") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(f"{r[c]:.1f}" if isinstance(r[c], float) else str(r[c]) for c in cols) + "\n")

    def table(title, key, fmt="{:>10.0f}", width=10, phases=PHASES):
        """One row per phase, one column per scheme; `key` names a row's field or computes
        the cell from the row."""
        cell = key if callable(key) else (lambda r: r[key])
        print(f"\n{title}")
        print(f"{'phase':<6}" + "".join(f"{s:>{width}}" for s in schemes))
        for phase in phases:
            cells = [next(cell(r) for r in rows if r["scheme"] == s and r["phase"] == phase) for s in schemes]
            print(f"{phase:<6}" + "".join(fmt.format(c) for c in cells))

    table("Fig. 8, live: db_bench ops/s", "live_ops")
    table("Fig. 8, simulated: the array's capacity for the phase's block requests (closed loop), MB/s",
          "sim_capacity_mbps", "{:>10.1f}")
    table("live: block MB/s the server received over the phase's wall time", "live_block_mbps", "{:>10.1f}")
    table("live: block reads the server received per second", "live_block_reads_per_s")
    table("live: block reads per db_bench read (RocksDB's read amplification: index, filter and data blocks\n"
          "of each file a read looks in)", "live_block_reads_per_db_read", "{:>10.2f}")
    table("Fig. 9, live: db_bench mean read latency, µs", "live_read_mean_us", "{:>10.1f}")
    table("Fig. 9, simulated: mean block-read latency at the recorded arrivals, µs", "sim_read_mean_us",
          "{:>10.1f}")
    table("Fig. 10/11 tail, live: db_bench read p99.9, µs", "live_read_p999_us")
    table("Fig. 10/11 tail, simulated: block-read p99.9, µs", "sim_read_p999_us")
    table("live CPU, cores busy over the phase (of the machine's 2): machine / server / nbdfuse /\n"
          "db_bench / stolen by the hypervisor",
          lambda r: " ".join(f"{r[f'cpu_{p}_cores']:.2f}" for p in CPU_SHOWN), "{:>29}", 29)
    if any(r["lsm_at_start"] for r in rows):
        table("live: RocksDB's files per level at the phase's start (L0 files overlap: a read looks in each)",
              "lsm_at_start", "{:>29}", 29, PHASES[1:])
    if roles and roles[1]:
        print(f"\nTable 4, simulated ({roles[0]}, phase a, recorded arrivals): role, reads, share, mean µs")
        for r in roles[1]:
            print(f"  {r['role']:<20} {r['reads']:>9} {100 * r['share']:>6.1f} % {r['mean_latency_us']:>9.1f}")
    print(f"\nwritten to {d / 'ycsb.tsv'}")


if __name__ == "__main__":
    main()
