//! `swan repro triple-a-*`: Triple-A's micro-benchmark figures (§6.4, §6.5) as runs of the
//! non-autonomic array and Triple-A on the modelled PCIe network, several seeds per cell,
//! and the paper's claims checked against what swan measured.
//!
//! Every run: random 4 KB reads (§5.2), each hot cluster taking 10 % of requests on 32 MiB of
//! hot data, closed loop at depth 1024 (about the root complex's queue, 650–1000 entries),
//! 1 simulated second measured from 0.2 s (migration needs a moment to spread the heat).

use crate::repro::args::{Experiment, ReproArgs};
use crate::runner::default_parallelism;
use anyhow::Context;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use swan_core::triple_a::AutonomicConfig;
use swan_models::fabric::preset;
use swan_sim::hot_clusters::HotClusterSpec;
use swan_sim::triple_a::{management_label, TripleAConfig, TripleADriver, TripleAReport};

const DEPTH: u32 = 1024;
const SECONDS: f64 = 1.0;
const MEASURE_FROM_S: f64 = 0.2;
/// Fig. 12's open-loop rate: below the non-autonomic array's closed-loop throughput (about
/// 1.7–1.8 M IOPS), so that it is not saturated.
const OPEN_RATE: f64 = 1.5e6;

/// One cell of a figure: a network, a management, a workload.
#[derive(Clone, Debug)]
struct Cell {
    /// The figure's x value, as printed.
    x: String,
    preset: &'static str,
    autonomic: AutonomicConfig,
    /// Printed instead of the management's own label when set.
    label: Option<&'static str>,
    spec: HotClusterSpec,
}

impl Cell {
    fn label(&self) -> String {
        self.label.unwrap_or(management_label(&self.autonomic)).to_string()
    }
}

fn both(x: String, preset: &'static str, spec: HotClusterSpec) -> [Cell; 2] {
    [
        Cell { x: x.clone(), preset, autonomic: AutonomicConfig::non_autonomic(), label: None, spec },
        Cell { x, preset, autonomic: AutonomicConfig::triple_a(), label: None, spec },
    ]
}

fn cells(e: Experiment) -> Vec<Cell> {
    match e {
        // Closed loop (the figure), then the same hot clusters in an open loop at 1.5 M IOPS,
        // where a request that meets no contention is not slowed by those that do.
        Experiment::TripleAFig12 => [None, Some(OPEN_RATE)]
            .into_iter()
            .flat_map(|rate| {
                [1u32, 2, 4, 6, 8].into_iter().flat_map(move |n| {
                    let spec = HotClusterSpec { rate_iops: rate, ..HotClusterSpec::reads(n, DEPTH) };
                    let x = if rate.is_some() { format!("{n} hot ol") } else { format!("{n} hot") };
                    both(x, "4x16", spec)
                })
            })
            .collect(),
        Experiment::TripleAFig13 => ["4x8", "4x12", "4x16", "4x20"]
            .into_iter()
            .flat_map(|p| both(p.to_string(), p, HotClusterSpec::reads(4, DEPTH)))
            .collect(),
        Experiment::TripleAFig16 => {
            let spec = HotClusterSpec::reads(4, DEPTH);
            let migrate = AutonomicConfig { reshaping: false, ..AutonomicConfig::triple_a() };
            let read_again = AutonomicConfig { shadow_cloning: false, ..migrate };
            vec![
                Cell {
                    x: "4x16".into(),
                    preset: "4x16",
                    autonomic: AutonomicConfig::non_autonomic(),
                    label: None,
                    spec,
                },
                Cell {
                    x: "4x16".into(),
                    preset: "4x16",
                    autonomic: read_again,
                    label: Some("migrate, read again"),
                    spec,
                },
                Cell {
                    x: "4x16".into(),
                    preset: "4x16",
                    autonomic: migrate,
                    label: Some("migrate, shadow clone"),
                    spec,
                },
            ]
        }
        _ => unreachable!("not a Triple-A experiment"),
    }
}

fn run_one(cell: &Cell, seed: u64) -> anyhow::Result<TripleAReport> {
    let mut cfg = TripleAConfig::new(preset(cell.preset).expect("a preset"), cell.autonomic, SECONDS);
    cfg.measure_from_s = MEASURE_FROM_S;
    let mut r = TripleADriver::hot_clusters(cfg, cell.spec, seed)?.run()?;
    r.label = cell.label();
    Ok(r)
}

/// Mean, min and max of one measure over a cell's seeds.
pub(crate) fn stat(rs: &[TripleAReport], f: impl Fn(&TripleAReport) -> f64) -> (f64, f64, f64) {
    let v: Vec<f64> = rs.iter().map(f).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (mean, v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

pub fn run(args: &ReproArgs, exp: &str) -> anyhow::Result<()> {
    let cells = cells(args.experiment);
    let seeds = args.seeds.unwrap_or(3);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(exp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    println!(
        "swan repro {exp}: {} cells × {seeds} seeds, random 4 KB reads, 10 % of requests on each hot cluster's \
         32 MiB, depth {DEPTH}, {SECONDS} simulated s measured from {MEASURE_FROM_S} s (results in {})",
        cells.len(),
        out.display()
    );
    let by_cell = run_cells(&cells, seeds, args, &out, |c| format!("{} / {}", c.x, c.label()), run_one)?;
    print_table(&cells, &by_cell);
    println!();
    for claim in claims(args.experiment, &cells, &by_cell) {
        println!("{claim}");
    }
    Ok(())
}

/// Every cell over `seeds` seeds from `--seed`, on `--jobs` threads (saying which finished,
/// by `name`, unless `--quiet`); each cell's reports in seed order, also written to
/// `out/reports.json`.
pub(crate) fn run_cells<C: Sync>(
    cells: &[C],
    seeds: u64,
    args: &ReproArgs,
    out: &Path,
    name: impl Fn(&C) -> String + Sync,
    run: impl Fn(&C, u64) -> anyhow::Result<TripleAReport> + Sync,
) -> anyhow::Result<Vec<Vec<TripleAReport>>> {
    let work: Vec<(usize, u64)> = (0..cells.len()).flat_map(|c| (0..seeds).map(move |s| (c, args.seed + s))).collect();
    let threads = args.jobs.unwrap_or_else(default_parallelism).max(1);
    let results = in_parallel(&work, threads, |&(c, seed)| {
        let r = run(&cells[c], seed);
        if !args.quiet {
            eprintln!("  {} seed {seed}: done", name(&cells[c]));
        }
        r
    });
    let mut by_cell: Vec<Vec<TripleAReport>> = vec![Vec::new(); cells.len()];
    for (i, r) in results.into_iter().enumerate() {
        by_cell[work[i].0].push(r?);
    }
    std::fs::write(out.join("reports.json"), serde_json::to_string_pretty(&by_cell)?)
        .context("writing reports.json")?;
    Ok(by_cell)
}

/// `f` over every item of `work` on `threads` threads; the results in `work`'s order.
pub(crate) fn in_parallel<W: Sync, R: Send>(work: &[W], threads: usize, f: impl Fn(&W) -> R + Sync) -> Vec<R> {
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..work.len()).map(|_| None).collect());
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(w) = work.get(i) else { break };
                let r = f(w);
                results.lock().expect("no panics while holding it")[i] = Some(r);
            });
        }
    });
    results.into_inner().expect("threads joined").into_iter().map(|r| r.expect("every item ran")).collect()
}

fn print_table(cells: &[Cell], by_cell: &[Vec<TripleAReport>]) {
    println!(
        "\n{:<8} {:<22} {:>17} {:>19} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "",
        "array",
        "kIOPS (min–max)",
        "latency µs (min–max)",
        "p99",
        "link",
        "storage",
        "RC",
        "switch",
        "EP",
        "migrated"
    );
    for (cell, rs) in cells.iter().zip(by_cell) {
        let (iops, ilo, ihi) = stat(rs, |r| r.iops / 1e3);
        let (lat, llo, lhi) = stat(rs, |r| r.latency_us.mean);
        let m = |f: fn(&TripleAReport) -> f64| stat(rs, f).0;
        println!(
            "{:<8} {:<22} {:>6.0} ({:>4.0}–{:<4.0}) {:>7.0} ({:>4.0}–{:<4.0}) {:>8.0} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.0}",
            cell.x,
            cell.label(),
            iops,
            ilo,
            ihi,
            lat,
            llo,
            lhi,
            m(|r| r.latency_us.p99 as f64),
            m(|r| r.link_contention_us),
            m(|r| r.storage_contention_us),
            m(|r| r.queue_stall_us.root_complex),
            m(|r| r.queue_stall_us.switch),
            m(|r| r.queue_stall_us.endpoint),
            m(|r| r.autonomic.migrated_pages as f64),
        );
    }
    println!("(means over seeds; contention and stall in µs per request; stall by level = link + storage)");
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "agrees in direction"
    } else {
        "DISAGREES"
    }
}

/// Triple-A's mean of `f` over its baseline's, per x value (cells come in pairs).
fn ratios(cells: &[Cell], by_cell: &[Vec<TripleAReport>], f: fn(&TripleAReport) -> f64) -> Vec<(String, f64)> {
    cells.chunks(2).zip(by_cell.chunks(2)).map(|(c, r)| (c[0].x.clone(), stat(&r[1], f).0 / stat(&r[0], f).0)).collect()
}

fn claims(e: Experiment, cells: &[Cell], by_cell: &[Vec<TripleAReport>]) -> Vec<String> {
    let mean = |i: usize, f: fn(&TripleAReport) -> f64| stat(&by_cell[i], f).0;
    let lat = |r: &TripleAReport| r.latency_us.mean;
    let iops = |r: &TripleAReport| r.iops;
    let show = |v: &[(String, f64)]| v.iter().map(|(x, r)| format!("{x} {r:.2}×")).collect::<Vec<_>>().join(", ");
    match e {
        Experiment::TripleAFig12 => {
            let n = cells.len() / 2;
            let base_growth = mean(n - 2, lat) / mean(0, lat);
            let open_growth = mean(2 * n - 2, lat) / mean(n, lat);
            let ta_growth = mean(n - 1, lat) / mean(1, lat);
            let iops_r = ratios(&cells[..n], &by_cell[..n], iops);
            vec![
                format!(
                    "Fig. 12(a) non-autonomic latency from {} to {}, closed loop: {base_growth:.2}× — paper: worsens as hot clusters increase: {}",
                    cells[0].x,
                    cells[n - 2].x,
                    verdict(base_growth > 1.05)
                ),
                format!(
                    "Fig. 12(a) the same in an open loop at {:.1} M IOPS: {open_growth:.2}× — paper: worsens (more requests meet contention): {}",
                    OPEN_RATE / 1e6,
                    verdict(open_growth > 1.05)
                ),
                format!(
                    "Fig. 12(b) Triple-A latency over the same range: {ta_growth:.2}× — paper: stable: {}",
                    verdict(ta_growth < base_growth)
                ),
                format!(
                    "Fig. 12 Triple-A IOPS / non-autonomic: {} — paper: improved IOPS: {}",
                    show(&iops_r),
                    verdict(iops_r.iter().all(|(_, r)| *r > 1.0))
                ),
            ]
        }
        Experiment::TripleAFig13 => {
            let iops_r = ratios(cells, by_cell, iops);
            let lat_r = ratios(cells, by_cell, lat);
            let link_r = ratios(cells, by_cell, |r| r.link_contention_us);
            let storage_r = ratios(cells, by_cell, |r| r.storage_contention_us);
            let last = cells.len() - 1;
            let upper = mean(last, |r| r.queue_stall_us.root_complex + r.queue_stall_us.switch);
            vec![
                format!(
                    "Fig. 13 normalised IOPS: {}; latency: {} — paper: Triple-A better as the network grows: {}",
                    show(&iops_r),
                    show(&lat_r),
                    verdict(iops_r.last().unwrap().1 > iops_r[0].1 && lat_r.last().unwrap().1 < lat_r[0].1)
                ),
                format!(
                    "Fig. 14 normalised link contention: {} — paper: almost eliminated: {}",
                    show(&link_r),
                    verdict(link_r.iter().all(|(_, r)| *r < 0.5))
                ),
                format!(
                    "Fig. 14 normalised storage contention: {} — paper: steadily reduced: {}",
                    show(&storage_r),
                    verdict(storage_r.windows(2).all(|w| w[1].1 <= w[0].1) && storage_r.last().unwrap().1 < 1.0)
                ),
                format!(
                    "Fig. 15 Triple-A switch + RC stall at {}: {upper:.1} µs per request — paper: eliminated beyond 20 clusters per switch: {}",
                    cells[last].x,
                    verdict(upper < 1.0)
                ),
            ]
        }
        Experiment::TripleAFig16 => {
            let (base, again, shadow) = (mean(0, lat), mean(1, lat), mean(2, lat));
            vec![format!(
                "Fig. 16 mean latency: non-autonomic {base:.0} µs, migration reading again {again:.0} µs, with shadow cloning {shadow:.0} µs — paper: shadow cloning minimises the migration's overhead: {}",
                verdict(shadow < again)
            )]
        }
        _ => unreachable!("not a Triple-A experiment"),
    }
}
