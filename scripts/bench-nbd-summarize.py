#!/usr/bin/env python3
"""Turn the raw fio JSON of scripts/bench-nbd.sh into its markdown report (standard library only).

Inputs (written by bench-nbd.sh):
  --results  TSV, one line per fio run (each on its own server process): server, mode, job,
             run, the server's place in that run's rotated order (1 = first), path of fio's
             JSON output, the server's VmHWM kB and VmRSS kB (read just before SIGTERM), its
             CPU ticks (utime+stime) at the end of fio's ramp and when fio had exited, the
             wall time (epoch seconds) of each, and for swan the paths of its `swan status
             --json` at each ("-" for the peers)
  --meta     TSV: key, value (machine and settings, in order)
  --clk-tck  clock ticks per second of the CPU figures (getconf CLK_TCK)
"""

import argparse
import json
import statistics
import sys

SEQ_JOBS = {"seqwrite-128k", "seqwrite-128k-wrapped"}
JOB_TITLES = {
    "randwrite-4k": "4 KiB random write",
    "randwrite-8k": "8 KiB random write",
    "seqwrite-128k": "128 KiB sequential write",
    "randread-4k": "4 KiB random read",
    "seqwrite-128k-wrapped": "128 KiB sequential write, log wrapped",
    "randwrite-4k-full": "4 KiB random write, full volume",
}
# Post-wrap job -> the pre-wrap job it is measured against.
PRE_WRAP = {"seqwrite-128k-wrapped": "seqwrite-128k", "randwrite-4k-full": "randwrite-4k"}
BLOCK = 4096  # swan's block: user_bytes_written / BLOCK are the user blocks written


def load_fio(path):
    """fio's JSON, tolerating notes fio prints before it ('fio: connected to NBD server')."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise ValueError(f"{path}: no JSON object in fio output")
    data = json.loads(text[start:])
    jobs = data.get("jobs") or []
    if not jobs:
        raise ValueError(f"{path}: fio reported no jobs")
    job = jobs[0]
    if job.get("error", 0):
        raise ValueError(f"{path}: fio job error {job['error']}")
    return job


class Run:
    """One fio run against one fresh server process."""

    def __init__(self, row, clk_tck):
        (self.server, self.mode, self.job, run, slot, self.path, hwm, _cur,
         cpu0, t0, cpu1, t1, st0, st1) = row[:14]
        self.run, self.slot, self.hwm_kb = int(run), int(slot), int(hwm or 0)
        job = load_fio(self.path)
        rw = job.get("job options", {}).get("rw", "")
        side = job["read"] if "read" in rw else job["write"]
        self.iops, self.bps = float(side["iops"]), float(side["bw_bytes"])
        # total_ios and job_runtime both exclude the ramp.
        self.ios = int(job["read"]["total_ios"]) + int(job["write"]["total_ios"])
        self.fio_runtime_s = float(job.get("job_runtime", 0)) / 1000
        self.cpu_s = (int(cpu1) - int(cpu0)) / clk_tck
        self.window_s = float(t1) - float(t0)
        self.cpu_us_per_io = self.cpu_s * 1e6 / self.ios if self.ios else None
        # swan's counters over the window (None for the peers).
        self.written = self.moved = self.mw = self.verified_share = self.unverified = None
        self.gc_before = self.gc_by_end = None
        if st0 != "-" and st1 != "-":
            a, b = load_status(st0), load_status(st1)
            self.written = (b["user_bytes_written"] - a["user_bytes_written"]) // BLOCK
            self.moved = b["gc_blocks_moved"] - a["gc_blocks_moved"]
            self.mw = self.moved / self.written if self.written else None
            self.gc_before = a.get("gc_onset_user_bytes") is not None
            self.gc_by_end = b.get("gc_onset_user_bytes") is not None
            read = (b["user_bytes_read"] - a["user_bytes_read"]) // BLOCK
            if read:
                # reads_verified is counted when a block is checked, user_bytes_read when it
                # is answered, so the share can pass 100 % by the requests in flight.
                self.verified_share = (b["reads_verified"] - a["reads_verified"]) / read
                self.unverified = b["reads_unverified"] - a["reads_unverified"]


def load_status(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                rows.append(line.split("\t"))
    return rows


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt_iops(v):
    return f"{v:,.0f}"


def fmt_mbs(bps):
    return f"{bps / 1e6:,.1f} MB/s"


def fmt_us(v):
    return "—" if v is None else f"{v:,.1f}"


def fmt_mw(v):
    return "—" if v is None else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("--modes", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--clk-tck", type=int, required=True)
    ap.add_argument("--raw", default="")
    a = ap.parse_args()
    servers, modes, jobs = a.servers.split(), a.modes.split(), a.jobs.split()
    peers = [s for s in servers if s != "swan"]

    runs = {}  # (server, mode, job) -> [Run], in run order
    for row in read_tsv(a.results):
        r = Run(row, a.clk_tck)
        runs.setdefault((r.server, r.mode, r.job), []).append(r)
    med = {k: {"iops": median(r.iops for r in v), "bps": median(r.bps for r in v),
               "cpu": median(r.cpu_us_per_io for r in v),
               "mw": median(r.mw for r in v),
               "rss": max(r.hwm_kb for r in v)}
           for k, v in runs.items()}
    meta = read_tsv(a.meta)

    def cell(s, m, job, key):
        v = med.get((s, m, job))
        return None if v is None else v[key]

    def gc_cell(v, job):
        """swan's median moved/written, and whether the runs were on the right side of the wrap."""
        if not v:
            return "—"
        n = len(v)
        if all(r.written == 0 for r in v):
            rs = [r for r in v if r.verified_share is not None]
            if not rs:
                return "—"
            if all(r.unverified == 0 and r.verified_share >= 0.999 for r in rs):
                return "— (every read verified)"
            return (f"— (verified {100 * min(r.verified_share for r in rs):.1f} % at least, "
                    f"{sum(r.unverified for r in rs):,} unverified)")
        text = fmt_mw(median(r.mw for r in v))
        if job in PRE_WRAP:
            late = sum(1 for r in v if not r.gc_before)
            if late:
                text += f" (GC not yet begun when {late}/{n} windows began)"
        else:
            wrapped = sum(1 for r in v if r.gc_by_end)
            if wrapped:
                text += f" (GC had begun by the end of {wrapped}/{n} windows)"
        return text

    def own_ratios(m, job):
        """Each server's post-wrap median over its own pre-wrap median."""
        pre = PRE_WRAP[job]
        return {s: cell(s, m, job, "iops") / cell(s, m, pre, "iops")
                for s in servers if cell(s, m, job, "iops") and cell(s, m, pre, "iops")}

    def post_wrap_cell(m, job):
        if job not in PRE_WRAP:
            return "—"
        pre = PRE_WRAP[job]
        sw, pre_sw = cell("swan", m, job, "iops"), cell("swan", m, pre, "iops")
        if not sw or not pre_sw:
            return f"— ({pre} not run)"
        own = own_ratios(m, job)
        peers_text = ", ".join(f"{p} {own[p]:.2f}×" for p in peers if p in own)
        peers_text = f"; own pre-wrap ratio of {peers_text}" if peers_text else ""
        if job == "seqwrite-128k-wrapped":
            return f"{own['swan']:.2f}× own pre-wrap (≥ 0.90× asked){peers_text}"
        mw = cell("swan", m, job, "mw")
        if mw is None:
            return "— (no swan counters)"
        target = 0.8 * pre_sw / (1 + mw)
        return (f"{sw / target:.2f}× target (≥ 1.00× asked; target 0.8 × {fmt_iops(pre_sw)} / "
                f"(1 + {mw:.2f}) = {fmt_iops(target)}); {own['swan']:.2f}× own pre-wrap"
                f"{peers_text}")

    out = []
    w = out.append
    w("# NBD servers over the same disk: swan vs nbdkit (file plugin) vs qemu-nbd")
    w("")
    w("Median over runs of fio's nbd engine (1 job, iodepth 32): IOPS (the sequential job "
      "also MB/s, 10^6 bytes/s) and the server's CPU time per I/O in µs (utime+stime of the "
      "server process over fio's measured window, divided by the I/Os fio counted). Each run "
      "is a fresh server process; run r starts the servers in rotated order. `buffered` goes "
      "through the page cache, `direct` bypasses it (see the notes for what each server does).")
    w("")
    if "swan" in servers:
        w("Issue 20 Part B asks, in each mode: swan CPU/nbdkit CPU ≤ 1.00× on 4 KiB random "
          "writes and reads (every read verified); swan/best peer ≥ 1.00× on 4 and 8 KiB "
          "random writes and ≥ 0.80× on 128 KiB sequential writes and 4 KiB random reads, "
          "all before the log wraps; after it wraps, sequential writes ≥ 0.90× swan's own "
          "pre-wrap rate, and random writes on the full volume ≥ 0.8 × swan's pre-wrap "
          "4 KiB random-write rate / (1 + GC blocks moved per user block written). "
          "\"GC had begun\" is swan's gc_onset_user_bytes: GC takes its first victim when the "
          "log wraps.")
        w("")
    show_ratio = "swan" in servers and peers
    show_cpu_ratio = "swan" in servers and "nbdkit" in servers
    for m in modes:
        w(f"## {m}")
        w("")
        header = ["job"] + [f"{s} IOPS" for s in servers]
        if show_ratio:
            header.append("swan/best peer")
        header += [f"{s} µs CPU/I/O" for s in servers]
        if show_cpu_ratio:
            header.append("swan CPU/nbdkit CPU")
        if "swan" in servers:
            header += ["swan GC moved/written", "post-wrap", "swan peak RSS"]
        w("| " + " | ".join(header) + " |")
        w("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
        for job in jobs:
            row = [JOB_TITLES.get(job, job)]
            for s in servers:
                v = med.get((s, m, job))
                if v is None:
                    row.append("—")
                elif job in SEQ_JOBS:
                    row.append(f"{fmt_iops(v['iops'])} ({fmt_mbs(v['bps'])})")
                else:
                    row.append(fmt_iops(v["iops"]))
            if show_ratio:
                sw = cell("swan", m, job, "iops")
                best = max((cell(p, m, job, "iops") for p in peers if (p, m, job) in med),
                           default=None)
                row.append(f"{sw / best:.2f}×" if sw and best else "—")
            for s in servers:
                row.append(fmt_us(cell(s, m, job, "cpu")))
            if show_cpu_ratio:
                sc, nc = cell("swan", m, job, "cpu"), cell("nbdkit", m, job, "cpu")
                row.append(f"{sc / nc:.2f}×" if sc and nc else "—")
            if "swan" in servers:
                row.append(gc_cell(runs.get(("swan", m, job)), job))
                row.append(post_wrap_cell(m, job))
                r = cell("swan", m, job, "rss")
                row.append(f"{r / 1024:,.0f} MiB" if r else "—")
            w("| " + " | ".join(row) + " |")
        w("")

    # Every server's peak RSS, for scale.
    cols = [(m, s) for m in modes for s in servers]
    w("Peak RSS (VmHWM, read before SIGTERM; one server process per run, the largest of the "
      "runs; a pre-filled job's includes its pre-fill):")
    w("")
    h2 = ["job"] + [f"{s} {m}" for m, s in cols]
    w("| " + " | ".join(h2) + " |")
    w("|" + "|".join(["---"] + ["---:"] * (len(h2) - 1)) + "|")
    for job in jobs:
        row = [JOB_TITLES.get(job, job)]
        for m, s in cols:
            r = cell(s, m, job, "rss")
            row.append(f"{r / 1024:,.0f} MiB" if r else "—")
        w("| " + " | ".join(row) + " |")
    w("")

    w("Every run (the spread behind each median), run 1 first: IOPS / µs CPU per I/O "
      "[the server's place in that run's rotated order]; for swan also its GC blocks moved "
      "per user block written in the window (m/w; * if GC had begun, i.e. the log had "
      "wrapped, by the window's end), or the share of blocks read that were CRC-checked:")
    w("")

    def swan_note(r):
        if r.written:
            return f", m/w {fmt_mw(r.mw)}{'*' if r.gc_by_end else ''}"
        if r.verified_share is not None:
            return f", verified {100 * r.verified_share:.1f} %, {r.unverified:,} unverified"
        return ""

    for job in jobs:
        for m, s in cols:
            v = runs.get((s, m, job))
            if v:
                w(f"- {job} {s} {m}: " + ", ".join(
                    f"{fmt_iops(r.iops)} / {fmt_us(r.cpu_us_per_io)} [{r.slot}{swan_note(r)}]"
                    for r in v))
    w("")

    every = [r for v in runs.values() for r in v]
    drift = [abs(r.window_s - r.fio_runtime_s) for r in every if r.fio_runtime_s]
    w("Machine and settings:")
    w("")
    for k, v in meta:
        w(f"- {k}: `{v}`" if k == "command" or k.startswith("cmd ") else f"- {k}: {v}")
    if drift:
        w(f"- CPU window vs fio's measured runtime (job_runtime): they differ by "
          f"{statistics.median(drift) * 1000:,.0f} ms in the median run, "
          f"{max(drift) * 1000:,.0f} ms at most")
        long_ = [r for r in every if r.fio_runtime_s and r.window_s - r.fio_runtime_s > 0.1]
        if long_:
            w("- CPU windows more than 100 ms longer than fio's runtime (fio took that long to "
              "exit after its last measured I/O: the server's work on the last requests and "
              "the disconnect is in the window, its I/Os are not): " + ", ".join(
                  f"{r.job} {r.server} {r.mode} run {r.run} +{(r.window_s - r.fio_runtime_s) * 1000:,.0f} ms"
                  for r in long_))
    if a.raw:
        w(f"- raw fio JSON: {a.raw}")
    w("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
