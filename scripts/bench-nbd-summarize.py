#!/usr/bin/env python3
"""Turn the raw fio JSON of scripts/bench-nbd.sh into its markdown report (standard library only).

Inputs (written by bench-nbd.sh):
  --results  TSV, one line per fio run (each on its own server process): server, mode, job,
             run, the server's place in that run's rotated order (1 = first), path of fio's
             JSON output, the server's VmHWM kB and VmRSS kB (read just before SIGTERM)
  --meta     TSV: key, value (machine and settings, in order)
"""

import argparse
import json
import statistics
import sys

SEQ_JOBS = {"seqwrite-128k"}
JOB_TITLES = {
    "randwrite-4k": "4 KiB random write",
    "randwrite-8k": "8 KiB random write",
    "seqwrite-128k": "128 KiB sequential write",
    "randread-4k": "4 KiB random read",
}


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


def measure(path):
    """(IOPS, bytes per second) of the job's direction."""
    job = load_fio(path)
    rw = job.get("job options", {}).get("rw", "")
    side = job["read"] if "read" in rw else job["write"]
    return float(side["iops"]), float(side["bw_bytes"])


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                rows.append(line.split("\t"))
    return rows


def fmt_iops(v):
    return f"{v:,.0f}"


def fmt_mbs(bps):
    return f"{bps / 1e6:,.1f} MB/s"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", required=True)
    ap.add_argument("--meta", required=True)
    ap.add_argument("--servers", required=True)
    ap.add_argument("--modes", required=True)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--raw", default="")
    a = ap.parse_args()
    servers, modes, jobs = a.servers.split(), a.modes.split(), a.jobs.split()
    peers = [s for s in servers if s != "swan"]

    runs = {}  # (server, mode, job) -> [(iops, bps, slot)], in run order
    rss = {}  # (server, mode, job) -> largest VmHWM kB of its runs
    for server, mode, job, _run, slot, path, hwm, _cur in read_tsv(a.results):
        iops, bps = measure(path)
        runs.setdefault((server, mode, job), []).append((iops, bps, int(slot)))
        rss[(server, mode, job)] = max(rss.get((server, mode, job), 0), int(hwm or 0))
    med = {
        k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
        for k, v in runs.items()
    }
    meta = read_tsv(a.meta)

    out = []
    w = out.append
    w("# NBD servers over the same disk: swan vs nbdkit (file plugin) vs qemu-nbd")
    w("")
    w("Median IOPS of fio's nbd engine (1 job, iodepth 32); the sequential job also gives MB/s "
      "(10^6 bytes/s). `buffered` goes through the page cache, `direct` bypasses it "
      "(see the notes for what each server does).")
    w("")
    cols = [(m, s) for m in modes for s in servers]
    header = ["job"] + [f"{s} {m}" for m, s in cols]
    show_ratio = "swan" in servers and peers
    if show_ratio:
        header += [f"swan/best peer {m}" for m in modes]
    if "swan" in servers:
        header += [f"swan peak RSS {m}" for m in modes]
    w("| " + " | ".join(header) + " |")
    w("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for job in jobs:
        row = [JOB_TITLES.get(job, job)]
        for m, s in cols:
            v = med.get((s, m, job))
            if v is None:
                row.append("—")
            elif job in SEQ_JOBS:
                row.append(f"{fmt_iops(v[0])} ({fmt_mbs(v[1])})")
            else:
                row.append(fmt_iops(v[0]))
        if show_ratio:
            for m in modes:
                sw = med.get(("swan", m, job))
                best = max((med[(p, m, job)][0] for p in peers if (p, m, job) in med), default=None)
                row.append(f"{sw[0] / best:.2f}×" if sw and best else "—")
        if "swan" in servers:
            for m in modes:
                r = rss.get(("swan", m, job))
                row.append(f"{r / 1024:,.0f} MiB" if r else "—")
        w("| " + " | ".join(row) + " |")
    w("")

    # Every server's peak RSS, for scale.
    w("Peak RSS (VmHWM, read before SIGTERM; one server process per run, the largest of the "
      "runs; the read job's includes its pre-fill):")
    w("")
    h2 = ["job"] + [f"{s} {m}" for m, s in cols]
    w("| " + " | ".join(h2) + " |")
    w("|" + "|".join(["---"] + ["---:"] * (len(h2) - 1)) + "|")
    for job in jobs:
        row = [JOB_TITLES.get(job, job)]
        for m, s in cols:
            r = rss.get((s, m, job))
            row.append(f"{r / 1024:,.0f} MiB" if r else "—")
        w("| " + " | ".join(row) + " |")
    w("")

    if any(len(v) > 1 for v in runs.values()):
        w("Every run's IOPS (the spread behind each median), run 1 first; in brackets the "
          "server's place in that run's rotated order:")
        w("")
        for job in jobs:
            for m, s in cols:
                v = runs.get((s, m, job))
                if v:
                    w(f"- {job} {s} {m}: " + ", ".join(f"{fmt_iops(i)} [{p}]" for i, _, p in v))
        w("")

    w("Machine and settings:")
    w("")
    for k, v in meta:
        w(f"- {k}: `{v}`" if k == "command" or k.startswith("cmd ") else f"- {k}: {v}")
    if a.raw:
        w(f"- raw fio JSON: {a.raw}")
    w("")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
