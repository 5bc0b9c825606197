"""SWAN's GC target swept through the Python package on Dask (docs/python.md).

SWAN0, 4 R-groups x 2 SSDs of 2 GiB, 8 KiB random writes over 4x the array, three seeds per
target: user write throughput after GC onset and the two write amplifications, as the
finding "SWAN's GC target trades array WAF against SSD WAF" in docs/findings/swan.md. Prints the
table and the sweep's wall time, and draws the figure (needs matplotlib).

    python python/examples/gc_target_sweep.py --workers 2 --svg docs/figures/gc-target-sweep.svg
"""

import argparse
import time

import swan


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workers", type=int, default=2, help="Dask LocalCluster workers (default 2)")
    p.add_argument("--scheduler", help="a Dask scheduler address instead of a LocalCluster")
    p.add_argument("--seeds", type=int, default=3, help="seeds per target (default 3)")
    p.add_argument("--targets", default="8,16,32,64,128,256", help="GC targets, in segments")
    p.add_argument("--svg", help="draw the figure here")
    a = p.parse_args()

    grid = {"gc_target": [int(t) for t in a.targets.split(",")], "seed": list(range(1, a.seeds + 1))}
    common = dict(scheme="swan0", rgroups=4, ssds_per_rgroup=2, ssd_capacity="2GiB", bs="8k", footprint=4)
    start = time.monotonic()
    frame = swan.sweep(grid, scheduler=a.scheduler, n_workers=a.workers, **common)
    wall = time.monotonic() - start
    cols = ["user_write_mbps_after_gc_mean", "waf_array", "waf_ssd"]
    table = frame.groupby("gc_target")[cols].agg(["mean", "min", "max"])
    print(table.round(3).to_string())
    print(f"{len(frame)} runs in {wall:.1f} s of wall time on "
          f"{a.scheduler or f'a LocalCluster of {a.workers} worker(s)'}")

    if a.svg:
        import matplotlib

        matplotlib.use("svg")
        import matplotlib.pyplot as plt

        means = frame.groupby("gc_target")[cols].mean()
        fig, left = plt.subplots(figsize=(6, 3.6))
        left.plot(means.index, means[cols[0]], "o-", color="tab:blue", label="write MB/s after GC onset")
        left.set_xscale("log", base=2)
        left.set_xlabel("GC target (free back-end segments kept)")
        left.set_ylabel("MB/s", color="tab:blue")
        right = left.twinx()
        right.plot(means.index, means["waf_array"], "s--", color="tab:red", label="array WAF")
        right.plot(means.index, means["waf_ssd"], "^:", color="tab:green", label="SSD WAF")
        right.set_ylabel("write amplification")
        fig.legend(loc="lower center", ncol=3, fontsize="small")
        left.set_title(f"SWAN0 4R-2SSD, 2 GiB SSDs, {a.seeds} seeds per point (swan.sweep on Dask)", fontsize="small")
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        fig.savefig(a.svg)
        print(f"wrote {a.svg}")


# Dask starts its workers by spawning Python afresh, which imports this file again.
if __name__ == "__main__":
    main()
