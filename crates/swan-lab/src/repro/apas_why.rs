//! `swan repro apas-why`: experiments that show the causes `apas-sweep` left open.
//!
//! 1. Why msr-win favours Apas on 8 disks only: which periods carry the gap, reads against
//!    writes, and where each policy's lazy cleanings fall against the trace's burst; then the
//!    control: the same runs with each disk's starting headroom above the lazy threshold
//!    changed (`--fill-headroom`), which moves the first cleaning in or out of the burst.
//! 2. Why HWSR's greedy cleaner needs about twice Algorithm 2's lazy cleanings on TPC-C with
//!    8 MiB bands: the space each cleaning freed, how many victims were partly written bands,
//!    and the counterfactual greedy that leaves partly written bands out.
//! 3. What Apas's read gains are made of: reads served by the cache alone against reads that
//!    needed a disk.
//!
//! Every figure comes from the runs' cleaning logs and summaries (`PolicyReport`).

use crate::repro::apas::{Workload, WORKLOADS};
use crate::repro::args::ReproArgs;
use crate::repro::triple_a_traces::traces_dir;
use anyhow::Context;
use swan_sim::apas::cleaning_log::CleaningRecord;
use swan_sim::apas::run::DEFAULT_AUTO_HEADROOM;
use swan_sim::apas::{run_policy, ApasSimConfig, ApasTrace, DiskFill, Policy, PolicyReport};

const DISKS: [u32; 3] = [2, 4, 8];
const HEADROOM: [f64; 4] = [0.0625, 0.125, DEFAULT_AUTO_HEADROOM, 0.5];

fn workload(name: &str) -> &'static Workload {
    WORKLOADS.iter().find(|w| w.name == name).expect("a known workload")
}

fn open(w: &Workload) -> anyhow::Result<ApasTrace> {
    ApasTrace::open(&traces_dir().join(w.file), None, w.accel)
        .with_context(|| format!("the {} trace (set SWAN_TRACES to the traces directory)", w.name))
}

fn one(trace: &ApasTrace, cfg: &ApasSimConfig, p: Policy) -> anyhow::Result<PolicyReport> {
    Ok(run_policy(trace, cfg, p)?)
}

/// Per seed, (Apas, HWSR).
fn both(
    trace: &ApasTrace,
    w: &Workload,
    seeds: &[u64],
    set: impl Fn(&mut ApasSimConfig),
) -> anyhow::Result<Vec<(PolicyReport, PolicyReport)>> {
    seeds
        .iter()
        .map(|&seed| {
            let mut cfg = ApasSimConfig { seed, accel: w.accel, ..ApasSimConfig::default() };
            set(&mut cfg);
            Ok((one(trace, &cfg, Policy::Apas)?, one(trace, &cfg, Policy::Hwsr)?))
        })
        .collect()
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = v.collect();
    v.iter().fold(0.0, |a, b| a + b) / v.len().max(1) as f64
}

fn ms(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// The period with the most reads (the same in both runs: rows count arriving requests).
fn burst(r: &PolicyReport) -> (u64, f64, f64) {
    let row = r.rows.iter().max_by_key(|w| (w.reads, std::cmp::Reverse(w.period))).expect("a run has periods");
    (row.period, row.start_s, row.start_s + r.period_s)
}

/// Cleanings queued within `[from, to)` s, the host operations they held up and the wait.
fn held_up(c: &[CleaningRecord], from: f64, to: f64) -> (usize, u64, f64) {
    let inside: Vec<&CleaningRecord> = c.iter().filter(|r| (from..to).contains(&(r.queued_ns as f64 / 1e9))).collect();
    (
        inside.len(),
        inside.iter().map(|r| u64::from(r.host_ops_behind)).sum(),
        inside.iter().map(|r| r.host_wait_ns).sum::<u64>() as f64 / 1e9,
    )
}

fn total_wait(c: &[CleaningRecord]) -> (u64, f64) {
    (c.iter().map(|r| u64::from(r.host_ops_behind)).sum(), c.iter().map(|r| r.host_wait_ns).sum::<u64>() as f64 / 1e9)
}

fn first(c: &[CleaningRecord]) -> String {
    c.iter().min_by_key(|r| r.queued_ns).map_or("none".into(), |r| {
        format!("{:.1} s (disk {}, {} ops behind)", r.queued_ns as f64 / 1e9, r.disk, r.host_ops_behind)
    })
}

fn msr_win(seeds: &[u64], quiet: bool) -> anyhow::Result<String> {
    let w = workload("msr-win");
    let trace = open(w)?;
    if !quiet {
        eprintln!("apas why: msr-win ...");
    }
    let mut out = format!("\n== 1. msr-win ({}): why Apas leads on 8 disks only\n", w.about);
    out += "per seed: whole-run mean ms apas / hwsr (the seed relabels the disks of a trace this small)\n";
    let mut default_runs = Vec::new();
    for d in DISKS {
        let runs = both(&trace, w, seeds, |c| c.disks = d)?;
        let per: Vec<String> =
            runs.iter().map(|(a, h)| format!("{:.3} / {:.3}", ms(a.summary.mean_ms), ms(h.summary.mean_ms))).collect();
        out += &format!("  {d} disks: {}\n", per.join(", "));
        default_runs.push((d, runs));
    }
    out += "\nseed 1: reads and writes (ms), read hit ratio, lazy cleanings and their disk time, apas | hwsr\n";
    for (d, runs) in &default_runs {
        let (a, h) = &runs[0];
        let row = |r: &PolicyReport| {
            let s = &r.summary;
            format!(
                "read {:>7.2} write {:>6.2} hits {:.3} lazy {} ({:.1} s)",
                ms(s.read_ms),
                ms(s.write_ms),
                s.read_hit_ratio.unwrap_or(f64::NAN),
                s.disk.lazy_cleanings,
                s.disk.lazy_cleaning_ns as f64 / 1e9
            )
        };
        out += &format!("  {d} disks: {} | {}\n", row(a), row(h));
    }
    // Which periods carry the gap: each period's share of the whole-run mean.
    out += "\nseed 1: the periods carrying the gap (each period's requests × its mean / all requests, ms of the \
            whole-run mean; the three largest differences)\n";
    for (d, runs) in &default_runs {
        let (a, h) = &runs[0];
        let n = a.summary.requests as f64;
        let part = |r: &PolicyReport, i: usize| {
            let w = &r.rows[i];
            (w.reads + w.writes) as f64 * w.mean_ms.unwrap_or(0.0) / n
        };
        let mut diff: Vec<(usize, f64, f64)> = (0..a.rows.len()).map(|i| (i, part(a, i), part(h, i))).collect();
        diff.sort_by(|x, y| (y.1 - y.2).abs().total_cmp(&(x.1 - x.2).abs()));
        let gap = ms(a.summary.mean_ms) - ms(h.summary.mean_ms);
        let top: Vec<String> =
            diff.iter().take(3).map(|(i, pa, ph)| format!("period {i}: {pa:.2} / {ph:.2}")).collect();
        out += &format!("  {d} disks (gap {gap:+.2} ms): {}\n", top.join("; "));
    }
    let (bp, from, to) = burst(&default_runs[0].1[0].1);
    let dest = |r: &PolicyReport| r.rows.iter().take(bp as usize).map(|w| w.destaged_blocks).sum::<u64>();
    let (a1, h1) = &default_runs[0].1[0];
    out += &format!(
        "\nthe burst: period {bp}, {from:.1}–{to:.1} s, {} reads of the trace's {}; blocks destaged before it: apas {}, \
         hwsr {} (CPP gives this write-heavy trace's writes most of the cache, so Apas destages later)\n",
        a1.rows[bp as usize].reads,
        a1.rows.iter().map(|w| w.reads).sum::<u64>(),
        dest(a1),
        dest(h1),
    );
    out += "seed 1: the first lazy cleaning, the cleanings queued in the burst (how many, host operations \
            held up, their wait in s) and over the whole run (operations, wait), apas | hwsr\n";
    for (d, runs) in &default_runs {
        let (a, h) = &runs[0];
        let row = |r: &PolicyReport| {
            let (n, ops, wait) = held_up(&r.cleanings, from, to);
            let (tops, twait) = total_wait(&r.cleanings);
            format!("first {}; burst {n}, {ops} ops, {wait:.1} s; run {tops} ops, {twait:.1} s", first(&r.cleanings))
        };
        out += &format!("  {d} disks: {} | {}\n", row(a), row(h));
    }

    out += "\ncontrol: each disk's free space at the start set to the 20 % threshold plus SHARE of the trace's writes \
            to it (--fill-headroom; 0.25 is the default above), which moves when each disk first cleans; \
            whole-run mean ms apas / hwsr (ratio), mean of the seeds; the first cleaning and the burst's \
            cleanings (ops held up, wait) for seed 1, apas | hwsr\n";
    for d in DISKS {
        for k in HEADROOM {
            let runs = if k == DEFAULT_AUTO_HEADROOM {
                default_runs.iter().find(|(x, _)| *x == d).expect("run above").1.clone()
            } else {
                both(&trace, w, seeds, |c| {
                    c.disks = d;
                    c.auto_headroom = k;
                })?
            };
            let am = mean(runs.iter().map(|(a, _)| ms(a.summary.mean_ms)));
            let hm = mean(runs.iter().map(|(_, h)| ms(h.summary.mean_ms)));
            let (a, h) = &runs[0];
            let cell = |r: &PolicyReport| {
                let (_, ops, wait) = held_up(&r.cleanings, from, to);
                let f = r.cleanings.iter().map(|c| c.queued_ns).min();
                format!("{:>6} {:>4} {:>6.1}", f.map_or("-".into(), |t| format!("{:.1}", t as f64 / 1e9)), ops, wait)
            };
            out += &format!(
                "  {d} disks, share {k:<6} {am:>8.3} / {hm:>8.3} ({:.2})   first s, burst ops, wait s: {} | {}\n",
                am / hm,
                cell(a),
                cell(h)
            );
        }
    }
    let empty = both(&trace, w, seeds, |c| {
        c.disks = 8;
        c.disk_fill = DiskFill::Fraction(0.0);
    })?;
    let am = mean(empty.iter().map(|(a, _)| ms(a.summary.mean_ms)));
    let hm = mean(empty.iter().map(|(_, h)| ms(h.summary.mean_ms)));
    out += &format!(
        "  8 disks, holding only the footprint (--disk-fill 0, no lazy cleaning): {am:.3} / {hm:.3} ({:.2})\n",
        am / hm
    );
    Ok(out)
}

/// Quantiles of the blocks freed per cleaning.
fn spread(mut v: Vec<u32>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.sort_unstable();
    let q = |p: usize| v[(v.len() - 1) * p / 100];
    format!("{} / {} / {} / {} / {}", v[0], q(10), q(50), q(90), v[v.len() - 1])
}

/// Cleanings whose victim is the band the previous cleaning on the same disk wrote to.
fn ping_pong(c: &[CleaningRecord]) -> usize {
    let mut last = std::collections::HashMap::new();
    let mut n = 0;
    for r in c {
        if last.get(&r.disk) == Some(&Some(r.band)) {
            n += 1;
        }
        last.insert(r.disk, r.destination);
    }
    n
}

fn tpcc_bands(seeds: &[u64], quiet: bool) -> anyhow::Result<String> {
    let w = workload("tpcc");
    let trace = open(w)?;
    if !quiet {
        eprintln!("apas why: tpcc, 8 MiB bands ...");
    }
    let mut out = "\n== 2. tpcc, 8 MiB bands (stripe chunk 32 MiB): why HWSR's greedy cleaner cleans twice as often\n\
                   per run: lazy cleanings; victims partly written (unwritten blocks left), of type B (≥ 90 % of \
                   written blocks valid), and the band the previous cleaning on that disk wrote to; blocks freed \
                   per cleaning (its invalid blocks) min / p10 / median / p90 / max, in all and by the partly \
                   written victims; blocks moved; whole-run mean ms\n"
        .to_string();
    for &seed in seeds {
        let cfg = ApasSimConfig {
            seed,
            accel: w.accel,
            band_bytes: 8 << 20,
            chunk_bytes: Some(32 << 20),
            ..ApasSimConfig::default()
        };
        let whole = ApasSimConfig { hwsr_whole_bands_only: true, ..cfg.clone() };
        let runs = [
            ("apas", one(&trace, &cfg, Policy::Apas)?),
            ("hwsr", one(&trace, &cfg, Policy::Hwsr)?),
            ("hwsr, whole bands only", one(&trace, &whole, Policy::Hwsr)?),
        ];
        for (name, r) in &runs {
            let c = &r.cleanings;
            let partly: Vec<&CleaningRecord> = c.iter().filter(|x| x.unwritten > 0).collect();
            let b = c.iter().filter(|x| x.class == Some(swan_core::apas::BandClass::B)).count();
            out += &format!(
                "  seed {seed} {name:<23} {:>3} cleanings ({} forced), {:>2} partly written, {:>2} type B, {:>2} \
                 the last destination; freed {} (sum {}), partly written {} (sum {}); moved {}; {:.1} ms\n",
                c.len(),
                r.summary.disk.forced_cleanings,
                partly.len(),
                b,
                ping_pong(c),
                spread(c.iter().map(|x| x.invalid).collect()),
                c.iter().map(|x| u64::from(x.invalid)).sum::<u64>(),
                spread(partly.iter().map(|x| x.invalid).collect()),
                partly.iter().map(|x| u64::from(x.invalid)).sum::<u64>(),
                r.summary.disk.moved_blocks,
                ms(r.summary.mean_ms),
            );
        }
    }
    Ok(out)
}

fn reads(seeds: &[u64], quiet: bool) -> anyhow::Result<String> {
    let mut out =
        "\n== 3. what Apas's read gains are made of (4 disks, 32 MiB bands, the Fig. 4 setting), mean of the \
                   seeds: read ms; share of reads served by the cache alone; their mean ms and that of the reads \
                   that needed a disk; apas | hwsr. Then apas − hwsr read ms split exactly into the cache's \
                   share (more reads served by the cache alone), the disk side (reads that needed a disk, \
                   faster or slower) and the cache side (cached reads faster or slower)\n"
            .to_string();
    for name in ["tpcc", "cloudphysics"] {
        let w = workload(name);
        if !quiet {
            eprintln!("apas why: {name} reads ...");
        }
        let trace = open(w)?;
        let runs = both(&trace, w, seeds, |_| {})?;
        let stats = |pick: fn(&(PolicyReport, PolicyReport)) -> &PolicyReport| {
            let f = mean(runs.iter().map(|x| 1.0 - pick(x).summary.disk_reads as f64 / reads_of(pick(x)) as f64));
            let c = mean(runs.iter().map(|x| pick(x).summary.cached_read_ms.unwrap_or(0.0)));
            let d = mean(runs.iter().map(|x| ms(pick(x).summary.disk_read_ms)));
            let r = mean(runs.iter().map(|x| ms(pick(x).summary.read_ms)));
            (r, f, c, d)
        };
        let (ra, fa, ca, da) = stats(|x| &x.0);
        let (rh, fh, ch, dh) = stats(|x| &x.1);
        let cached = |f: f64, c: f64| if f > 0.0 { format!("{c:.2} ms") } else { "-".into() };
        out += &format!(
            "  {name}: {ra:.2} ms, {:.1} % cached ({}), disk {da:.2} ms | {rh:.2} ms, {:.1} % cached ({}), disk \
             {dh:.2} ms\n    apas − hwsr = {:+.2} ms: cache's share {:+.2}, disk side {:+.2}, cache side {:+.2}\n",
            fa * 100.0,
            cached(fa, ca),
            fh * 100.0,
            cached(fh, ch),
            ra - rh,
            (fa - fh) * (ch - dh),
            (1.0 - fa) * (da - dh),
            fa * (ca - ch),
        );
    }
    Ok(out)
}

fn reads_of(r: &PolicyReport) -> u64 {
    r.rows.iter().map(|w| w.reads).sum()
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let n = args.seeds.unwrap_or(3).max(1);
    let seeds: Vec<u64> = (args.seed..args.seed + n).collect();
    let mut out = format!(
        "swan repro apas-why: the causes docs/apas.md left open, by experiment ({n} seeds from {}). SWDs: Atlas 10K \
         IV, 4 unless said, 32 MiB bands unless said, aged (free space at 20 % plus a quarter of the trace's writes \
         per disk); 25 periods per trace.\n",
        seeds[0]
    );
    out += &msr_win(&seeds, args.quiet)?;
    out += &tpcc_bands(&seeds, args.quiet)?;
    out += &reads(&seeds, args.quiet)?;
    print!("{out}");
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let p = dir.join("apas-why.txt");
        std::fs::write(&p, &out).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}
