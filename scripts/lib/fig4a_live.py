"""Summarise and draw scripts/fig4a-live.sh's runs: user write MB/s per second, live (fio's
bandwidth log over NBD) beside simulated (swan sim's timeseries.csv).

    python3 scripts/lib/fig4a_live.py RUNS_DIR "SCHEMES" OUT_DIR
"""

import csv
import json
import statistics
import sys
from pathlib import Path

COLOURS = {"swan0": "#1f77b4", "swan4": "#17becf", "swan5": "#9467bd", "lograid0": "#ff7f0e",
           "lograid4": "#bcbd22", "raid0": "#d62728", "raid4": "#8c564b", "raid5": "#e377c2"}


def live_series(run):
    """fio's --write_bw_log with --log_avg_msec=1000: `msec, KiB/s, dir, bs, ...` per second."""
    logs = sorted(run.glob("live_bw*.log"))
    if not logs:
        sys.exit(f"fig4a_live: no fio bandwidth log in {run}")
    out = []
    for row in csv.reader(open(logs[0])):
        if len(row) >= 3 and row[2].strip() == "1":
            out.append((int(row[0]) / 1000.0, int(row[1]) * 1024 / 1e6))
    return out


def sim_series(run):
    with open(run / "sim" / "timeseries.csv") as f:
        return [(float(r["t_s"]), float(r["user_write_mbps"])) for r in csv.DictReader(f)]


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def second_half(series):
    end = max((t for t, _ in series), default=0)
    return [v for t, v in series if t > end / 2]


def fio_job(run):
    text = (run / "fio.json").read_text()
    job = json.loads(text[text.index("{"):])["jobs"][0]
    if job["error"]:
        sys.exit(f"fig4a_live: fio reports error {job['error']} in {run}")
    return job


def where_time_went(run):
    """Blocks GC moved per user block written, live (swan status) and simulated (its array
    WAF less one); an emulated request's mean model time and the engine's lateness after it."""
    st = json.loads((run / "status.json").read_text())
    sim = json.loads((run / "sim" / "summary.json").read_text())
    user_blocks = max(st["user_bytes_written"] // 4096, 1)
    timing = st.get("emulation") or {}
    return (st["gc_blocks_moved"] / user_blocks, (sim.get("waf_array") or 1.0) - 1,
            timing.get("mean_model_us", float("nan")), timing.get("mean_late_us", float("nan")))


def draw(panels, path, runtime):
    """Two panels (live, simulated) of lines, one per scheme, on one y scale."""
    W, H, L, B, T, GAP = 440, 260, 48, 30, 26, 30
    top = max((v for _, lines in panels for _, pts in lines for _, v in pts), default=1) * 1.1
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W + GAP}" height="{H + 40}" '
             'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>']
    for p, (title, lines) in enumerate(panels):
        x0 = p * (W + GAP)
        x = lambda t: x0 + L + (W - L - 10) * t / runtime
        y = lambda v: T + (H - T - B) * (1 - v / top)
        parts.append(f'<text x="{x0 + L}" y="16" font-size="13" font-weight="bold">{title}</text>')
        parts.append(f'<line x1="{x0 + L}" y1="{H - B}" x2="{x0 + W - 10}" y2="{H - B}" stroke="#888"/>')
        parts.append(f'<line x1="{x0 + L}" y1="{T}" x2="{x0 + L}" y2="{H - B}" stroke="#888"/>')
        for frac in (0, 0.25, 0.5, 0.75, 1):
            v = top / 1.1 * frac
            parts.append(f'<text x="{x0 + L - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
        for s in range(0, runtime + 1, max(runtime // 6, 1)):
            parts.append(f'<text x="{x(s):.1f}" y="{H - B + 14}" text-anchor="middle">{s}</text>')
        parts.append(f'<text x="{x0 + L + (W - L) / 2}" y="{H - 2}" text-anchor="middle">seconds</text>')
        parts.append(f'<text x="{x0 + 12}" y="{T + (H - T - B) / 2}" transform="rotate(-90 {x0 + 12} '
                     f'{T + (H - T - B) / 2})" text-anchor="middle">user writes, MB/s</text>')
        for scheme, pts in lines:
            if pts:
                d = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts if t <= runtime)
                parts.append(f'<polyline points="{d}" fill="none" stroke-width="1.6" '
                             f'stroke="{COLOURS.get(scheme, "#333")}"/>')
    for i, (scheme, _) in enumerate(panels[0][1]):
        lx = L + i * 110
        parts.append(f'<rect x="{lx}" y="{H + 18}" width="12" height="4" fill="{COLOURS.get(scheme, "#333")}"/>')
        parts.append(f'<text x="{lx + 16}" y="{H + 24}">{scheme}</text>')
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n")


def main():
    runs, schemes, out = Path(sys.argv[1]), sys.argv[2].split(), Path(sys.argv[3])
    rows, table = [], {}
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        rnd, scheme = run.name.split("-", 1)
        live, sim = live_series(run), sim_series(run)
        job = fio_job(run)
        before, after, engine_before, engine_after = map(float, (run / "cpu").read_text().split())
        cpu_us = (after - before) * 1e6 / max(job["write"]["total_ios"], 1)
        engine_share = (engine_after - engine_before) / max(job["elapsed"], 1)
        table.setdefault(scheme, []).append(
            (mean([v for _, v in live]), mean(second_half(live)), mean([v for _, v in sim]),
             mean(second_half(sim)), cpu_us, int(rnd), live, sim, engine_share, *where_time_went(run)))
        rows += [(t, rnd, scheme, "live", v) for t, v in live] + [(t, rnd, scheme, "sim", v) for t, v in sim]
    with open(out / "fig4a-live.tsv", "w") as f:
        f.write("t_s\tround\tscheme\tface\tuser_write_mbps\n")
        f.writelines(f"{t:.1f}\t{r}\t{s}\t{face}\t{v:.1f}\n" for t, r, s, face, v in rows)

    print(f"\n{'scheme':<10} {'live MB/s':>10} {'2nd half':>9} {'sim MB/s':>9} {'2nd half':>9} "
          f"{'live/sim':>9} {'CPU µs/req':>11}   (median over {len(next(iter(table.values())))} round(s))")
    for scheme in schemes:
        r = table.get(scheme, [])
        if not r:
            continue
        med = [statistics.median(x[i] for x in r) for i in range(5)]
        print(f"{scheme:<10} {med[0]:>10.1f} {med[1]:>9.1f} {med[2]:>9.1f} {med[3]:>9.1f} "
              f"{med[1] / med[3] if med[3] else float('nan'):>9.2f} {med[4]:>11.1f}")
    print(f"\n{'scheme':<10} {'engine core':>12} {'moved/user live':>16} {'moved/user sim':>15} "
          f"{'model µs':>9} {'late µs':>8}   (where the live run's time went, median)")
    for scheme in schemes:
        r = table.get(scheme, [])
        if r:
            med = [statistics.median(x[i] for x in r) for i in range(8, 13)]
            print(f"{scheme:<10} {med[0]:>12.2f} {med[1]:>16.3f} {med[2]:>15.3f} {med[3]:>9.0f} {med[4]:>8.0f}")
    first = [(s, next(x for x in table[s] if x[5] == min(y[5] for y in table[s]))) for s in schemes if s in table]
    runtime = int(max(t for _, x in first for t, _ in x[6] + x[7]) + 0.5)
    draw([("live: swan serve --emulate, fio over NBD", [(s, x[6]) for s, x in first]),
          ("simulated: swan sim --array, same arrays", [(s, x[7]) for s, x in first])],
         out / "fig4a-live.svg", runtime)
    print(f"\nwrote {out / 'fig4a-live.tsv'} and {out / 'fig4a-live.svg'}")


if __name__ == "__main__":
    main()
