//! `swan repro triple-a-*`: Triple-A's micro-benchmark figures (§6.4, §6.5) as runs of the
//! non-autonomic array and Triple-A on the modelled PCIe network, several seeds per cell,
//! and the measures the paper's claims are judged on ([`crate::claims::triple_a`]).
//!
//! Every run: random 4 KB reads (§5.2), each hot cluster taking 10 % of requests on 32 MiB of
//! hot data, closed loop at depth 1024 (about the root complex's queue, 650–1000 entries),
//! 1 simulated second measured from 0.2 s (migration needs a moment to spread the heat).

use crate::claims::Measures;
use crate::repro::args::{Experiment, ReproArgs};
use crate::repro::mean;
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

/// Fig. 16's migrations: reading the page again (16(b)) and shadow cloning (16(c)).
const READ_AGAIN: &str = "migrate, read again";
const SHADOW_CLONE: &str = "migrate, shadow clone";

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
        // Fig. 16 at the reference cell (32 MiB of hot data per hot cluster, as every other
        // figure), then with 4 MiB, where the hot data leaves at once and migrations are many.
        Experiment::TripleAFig16 => [("32 MiB", 8192), ("4 MiB", 1024)]
            .into_iter()
            .flat_map(|(x, hot_pages)| {
                let spec = HotClusterSpec { hot_pages, ..HotClusterSpec::reads(4, DEPTH) };
                let migrate = AutonomicConfig { reshaping: false, ..AutonomicConfig::triple_a() };
                let read_again = AutonomicConfig { shadow_cloning: false, ..migrate };
                let cell = |autonomic, label| Cell { x: x.into(), preset: "4x16", autonomic, label, spec };
                [
                    cell(AutonomicConfig::non_autonomic(), None),
                    cell(read_again, Some(READ_AGAIN)),
                    cell(migrate, Some(SHADOW_CLONE)),
                ]
            })
            .collect(),
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
    let hot = if args.experiment == Experiment::TripleAFig16 { "32 MiB (then 4 MiB)" } else { "32 MiB" };
    println!(
        "swan repro {exp}: {} cells × {seeds} seeds, random 4 KB reads, 10 % of requests on each hot cluster's \
         {hot}, depth {DEPTH}, {SECONDS} simulated s measured from {MEASURE_FROM_S} s (results in {})",
        cells.len(),
        out.display()
    );
    let by_cell = run_cells(&cells, seeds, args, &out, |c| format!("{} / {}", c.x, c.label()), run_one)?;
    print_table(&cells, &by_cell);
    crate::claims::publish(&out, &measures(exp, &cells, &by_cell))?;
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

/// `f` of each seed's run in `rs`, in seed order.
pub(crate) fn seeds(rs: &[TripleAReport], f: impl Fn(&TripleAReport) -> f64) -> Vec<f64> {
    rs.iter().map(f).collect()
}

/// Seed by seed, `f` of `a`'s run over `f` of `b`'s (the cells of one figure run the same
/// seeds, so each pair saw the same requests).
pub(crate) fn ratio(a: &[TripleAReport], b: &[TripleAReport], f: impl Fn(&TripleAReport) -> f64) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| f(x) / f(y)).collect()
}

/// Seed by seed, `g` over the values several measures took in that seed.
pub(crate) fn across(series: &[Vec<f64>], g: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let n = series.first().map_or(0, Vec::len);
    (0..n).map(|s| g(&series.iter().map(|v| v[s]).collect::<Vec<f64>>())).collect()
}

fn lowest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn highest(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn lat(r: &TripleAReport) -> f64 {
    r.latency_us.mean
}

fn iops(r: &TripleAReport) -> f64 {
    r.iops
}

/// What a micro-benchmark reproduction measured, for Triple-A's Fig. 12–16 claims
/// ([`crate::claims::triple_a`]): every value seed by seed (mean and spread), ratios taken
/// seed by seed against the non-autonomic array of the same cell.
fn measures(exp: &str, cells: &[Cell], by_cell: &[Vec<TripleAReport>]) -> Measures {
    let mut m = Measures::new(exp);
    let at = |x: &str, label: &str| {
        let i = cells.iter().position(|c| c.x == x && c.label() == label).expect("a cell of cells()");
        &by_cell[i][..]
    };
    let (base, ta) = ("non-autonomic", "triple-a");
    match exp {
        "triple-a-fig12" => {
            let hot = [1u32, 2, 4, 6, 8];
            let (mut iops_r, mut lat_r) = (Vec::new(), Vec::new());
            for n in hot {
                let (x, ol) = (format!("{n} hot"), format!("{n} hot ol"));
                let (b, t) = (at(&x, base), at(&x, ta));
                // Shown as a pair in one row (1 hot, 8 hot): the first label says which array.
                let which = if n == 1 { "non-autonomic, " } else { "" };
                m.set_seeds(
                    &format!("non_autonomic.{n}hot.latency_us"),
                    &format!("{which}{n} hot"),
                    "µs",
                    &seeds(b, lat),
                );
                m.set_seeds(
                    &format!("triple_a.{n}hot.latency_us"),
                    &format!("Triple-A, {n} hot"),
                    "µs",
                    &seeds(t, lat),
                );
                m.set_seeds(
                    &format!("non_autonomic.{n}hot.kiops"),
                    &format!("non-autonomic, {n} hot"),
                    "kIOPS",
                    &seeds(b, |r| r.iops / 1e3),
                );
                m.set_seeds(
                    &format!("triple_a.{n}hot.kiops"),
                    &format!("Triple-A, {n} hot"),
                    "kIOPS",
                    &seeds(t, |r| r.iops / 1e3),
                );
                m.set_seeds(
                    &format!("non_autonomic.{n}hot.open.latency_us"),
                    &format!("{which}{n} hot, open loop"),
                    "µs",
                    &seeds(at(&ol, base), lat),
                );
                m.set_seeds(
                    &format!("triple_a.{n}hot.open.latency_us"),
                    &format!("Triple-A, {n} hot, open loop"),
                    "µs",
                    &seeds(at(&ol, ta), lat),
                );
                iops_r.push(ratio(t, b, iops));
                lat_r.push(ratio(t, b, lat));
                m.set_seeds(
                    &format!("iops_ratio.{n}hot"),
                    &format!("normalised IOPS, {n} hot"),
                    "",
                    &iops_r[iops_r.len() - 1],
                );
                m.set_seeds(
                    &format!("latency_ratio.{n}hot"),
                    &format!("normalised latency, {n} hot"),
                    "",
                    &lat_r[lat_r.len() - 1],
                );
            }
            m.set_seeds("iops_ratio.lowest", "normalised IOPS, lowest of 1–8 hot", "", &across(&iops_r, lowest));
            m.set_seeds("iops_ratio.highest", "highest", "", &across(&iops_r, highest));
            m.set_seeds("iops_ratio.mean", "normalised IOPS, mean of 1–8 hot", "", &across(&iops_r, mean));
            m.set_seeds("latency_ratio.mean", "latency", "", &across(&lat_r, mean));
            m.set_seeds(
                "triple_a.latency_8hot_over_1hot",
                "Triple-A's latency, 8 hot ÷ 1 hot",
                "",
                &ratio(at("8 hot", ta), at("1 hot", ta), lat),
            );
        }
        "triple-a-fig13" => {
            let upper = |r: &TripleAReport| r.queue_stall_us.root_complex + r.queue_stall_us.switch;
            for p in ["4x8", "4x12", "4x16", "4x20"] {
                let (b, t) = (at(p, base), at(p, ta));
                // A series is shown in one row: its first label says what, the rest which network.
                let label = |what: &str| if p == "4x8" { format!("normalised {what}, {p}") } else { p.to_string() };
                m.set_seeds(&format!("iops_ratio.{p}"), &label("IOPS"), "", &ratio(t, b, iops));
                m.set_seeds(&format!("latency_ratio.{p}"), &label("latency"), "", &ratio(t, b, lat));
                m.set_seeds(
                    &format!("link_ratio.{p}"),
                    &label("link contention"),
                    "",
                    &ratio(t, b, |r| r.link_contention_us),
                );
                m.set_seeds(
                    &format!("storage_ratio.{p}"),
                    &label("storage contention"),
                    "",
                    &ratio(t, b, |r| r.storage_contention_us),
                );
                m.set_seeds(
                    &format!("triple_a.{p}.rc_switch_stall_us"),
                    &format!("Triple-A's RC + switch stall, {p}"),
                    "µs",
                    &seeds(t, upper),
                );
                m.set_seeds(
                    &format!("non_autonomic.{p}.rc_switch_stall_us"),
                    &format!("non-autonomic's RC + switch stall, {p}"),
                    "µs",
                    &seeds(b, upper),
                );
                m.set_seeds(
                    &format!("rc_switch_stall_ratio.{p}"),
                    &format!("÷ non-autonomic's, {p}"),
                    "%",
                    &ratio(t, b, upper),
                );
            }
        }
        "triple-a-fig16" => {
            // The reference cell's labels name no cell; the 4 MiB cell's say so.
            for (x, key, hot) in [("32 MiB", "", ""), ("4 MiB", "hot4mib.", ", 4 MiB hot")] {
                for (label, name, shown) in [
                    (base, "non_autonomic", "non-autonomic"),
                    (READ_AGAIN, "read_again", "read again"),
                    (SHADOW_CLONE, "shadow_clone", "shadow clone"),
                ] {
                    let rs = at(x, label);
                    m.set_seeds(&format!("{key}{name}.latency_us"), &format!("{shown}{hot}"), "µs", &seeds(rs, lat));
                    m.set_seeds(
                        &format!("{key}{name}.kiops"),
                        &format!("{shown}{hot}"),
                        "kIOPS",
                        &seeds(rs, |r| r.iops / 1e3),
                    );
                    m.set_seeds(
                        &format!("{key}{name}.p99_us"),
                        &format!("{shown}{hot}, p99"),
                        "µs",
                        &seeds(rs, |r| r.latency_us.p99 as f64),
                    );
                }
                m.set_seeds(
                    &format!("{key}read_again.pages_read_again"),
                    &format!("pages read again{hot}"),
                    "",
                    &seeds(at(x, READ_AGAIN), |r| r.copy_reads as f64),
                );
            }
        }
        _ => unreachable!("not a Triple-A micro-benchmark experiment"),
    }
    m
}
