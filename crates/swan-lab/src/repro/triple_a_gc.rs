//! `swan repro triple-a-gc`: Triple-A under GC-active FIMMs, beyond the paper (issue
//! "Triple-A"): the same hot-cluster micro-benchmark with writes, on FIMMs that program in
//! place (the paper's) and on FIMMs whose FTL collects garbage, for the non-autonomic array
//! and Triple-A with each way of treating a collecting FIMM under laggard detection.
//!
//! Every run: 4x16 with FIMMs scaled to 512 MiB (64 blocks per plane of 16 pages: the FTL
//! maps take 8 bytes per 4 KiB slot), random 4 KB requests, half of them writes, 4 hot
//! clusters of 10 % each on 32 MiB of hot data, closed loop at depth 1024, 0.5 simulated
//! seconds measured from 0.1 s; GC-active FIMMs start aged (filled, then overwritten once at
//! random), so GC is in steady state from the first write.

use crate::claims::Measures;
use crate::repro::args::ReproArgs;
use crate::repro::triple_a::{ratio, run_cells, seeds, stat};
use anyhow::Context;
use std::path::PathBuf;
use swan_core::triple_a::{AutonomicConfig, GcLaggard};
use swan_models::fabric::{preset, FabricConfig};
use swan_sim::hot_clusters::HotClusterSpec;
use swan_sim::triple_a::{GcConfig, TripleAConfig, TripleADriver, TripleAReport};

const DEPTH: u32 = 1024;
const SECONDS: f64 = 0.5;
const MEASURE_FROM_S: f64 = 0.1;
const WRITE_SHARE: f64 = 0.5;
const BLOCKS_PER_PLANE: u32 = 64;
const PAGES_PER_BLOCK: u32 = 16;
/// Eq. 3's t_SLA swept over the GC-active array with a blind detector: the paper's 3.3 µs,
/// then decades up to 33 ms (3.3 ms: the paper's figure read as milliseconds, the scale of
/// Table 2's latencies).
const T_SLA_SWEEP_NS: [u64; 4] = [33_000, 330_000, 3_300_000, 33_000_000];

#[derive(Clone, Debug)]
struct Cell {
    label: String,
    autonomic: AutonomicConfig,
    gc: bool,
}

fn cells() -> Vec<Cell> {
    let ta = AutonomicConfig::triple_a();
    let with = |gc_laggard| AutonomicConfig { gc_laggard, ..ta };
    let cell = |label: &str, autonomic, gc| Cell { label: label.to_string(), autonomic, gc };
    let mut cells = vec![
        cell("non-autonomic", AutonomicConfig::non_autonomic(), false),
        cell("triple-a", ta, false),
        cell("non-autonomic, gc", AutonomicConfig::non_autonomic(), true),
        cell("triple-a, gc blind", with(GcLaggard::Blind), true),
        cell("triple-a, gc laggard", with(GcLaggard::Laggard), true),
        cell("triple-a, gc exempt", with(GcLaggard::Exempt), true),
        // The ablation: which half of Triple-A carries what it does under GC.
        cell("migration-only, gc", AutonomicConfig { reshaping: false, ..ta }, true),
        cell("reshaping-only, gc", AutonomicConfig { migration: false, ..ta }, true),
    ];
    for t_sla in T_SLA_SWEEP_NS {
        cells.push(cell(&format!("triple-a, gc blind, t_SLA {}", sla(t_sla)), AutonomicConfig { t_sla, ..ta }, true));
    }
    let t_sla = 3_300_000;
    let laggard = AutonomicConfig { t_sla, ..with(GcLaggard::Laggard) };
    cells.push(cell(&format!("triple-a, gc laggard, t_SLA {}", sla(t_sla)), laggard, true));
    cells
}

/// A t_SLA as printed: µs below a millisecond, ms above.
fn sla(ns: u64) -> String {
    if ns >= 1_000_000 {
        format!("{} ms", ns as f64 / 1e6)
    } else {
        format!("{} µs", ns as f64 / 1e3)
    }
}

fn fabric() -> FabricConfig {
    let mut f = preset("4x16").expect("a preset");
    f.fimm.blocks_per_plane = BLOCKS_PER_PLANE;
    f.fimm.pages_per_block = PAGES_PER_BLOCK;
    f
}

fn run_one(cell: &Cell, seed: u64) -> anyhow::Result<TripleAReport> {
    let mut cfg = TripleAConfig::new(fabric(), cell.autonomic, SECONDS);
    cfg.measure_from_s = MEASURE_FROM_S;
    cfg.gc = cell.gc.then(GcConfig::default);
    let spec = HotClusterSpec { write_share: WRITE_SHARE, ..HotClusterSpec::reads(4, DEPTH) };
    let mut r = TripleADriver::hot_clusters(cfg, spec, seed)?.run()?;
    r.label = cell.label.clone();
    Ok(r)
}

pub fn run(args: &ReproArgs, exp: &str) -> anyhow::Result<()> {
    let cells = cells();
    let seeds = args.seeds.unwrap_or(3);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(exp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    println!(
        "swan repro {exp}: {} cells × {seeds} seeds, 4x16 with 512 MiB FIMMs ({BLOCKS_PER_PLANE} blocks per plane of \
         {PAGES_PER_BLOCK} pages), random 4 KB requests {:.0} % writes, 4 hot clusters of 10 % on 32 MiB each, depth \
         {DEPTH}, {SECONDS} simulated s measured from {MEASURE_FROM_S} s; GC: {:.0} % over-provisioning, greedy, aged \
         (results in {})",
        cells.len(),
        100.0 * WRITE_SHARE,
        100.0 * GcConfig::default().over_provisioning,
        out.display()
    );
    let by_cell = run_cells(&cells, seeds, args, &out, |c| c.label.clone(), run_one)?;
    print_table(&cells, &by_cell);
    println!();
    for line in findings(&cells, &by_cell) {
        println!("{line}");
    }
    crate::claims::publish(&out, &measures(exp, &cells, &by_cell))?;
    Ok(())
}

/// What the cells measured, seed by seed: Eq. 3's t_SLA as the runs use it and what each
/// t_SLA finds (the claim on §5.1's 3.3 µs, [`crate::claims::triple_a`]), and the ratios the
/// findings give (beyond the paper: no claim).
fn measures(exp: &str, cells: &[Cell], by_cell: &[Vec<TripleAReport>]) -> Measures {
    let mut m = Measures::new(exp);
    let at = |label: &str| &by_cell[cells.iter().position(|c| c.label == label).expect("a cell of cells()")][..];
    let t_sla = AutonomicConfig::triple_a().t_sla;
    m.set("t_sla_us", "t_SLA used", "µs", t_sla as f64 / 1e3);
    let laggards = |l: &str| seeds(at(l), |r| r.autonomic.laggards_by_latency as f64);
    let on_gc = |l: &str| {
        seeds(at(l), |r| r.autonomic.laggards_collecting as f64 / r.autonomic.laggards_by_latency.max(1) as f64)
    };
    let blind = "triple-a, gc blind";
    m.set_seeds("laggards.default", &format!("laggards under GC at {}", sla(t_sla)), "", &laggards(blind));
    m.set_seeds("laggards.default.collecting", &format!("of them collecting, at {}", sla(t_sla)), "%", &on_gc(blind));
    for ns in T_SLA_SWEEP_NS {
        let l = format!("{blind}, t_SLA {}", sla(ns));
        m.set_seeds(&format!("laggards.t_sla_{ns}ns"), &format!("at {}", sla(ns)), "", &laggards(&l));
        m.set_seeds(
            &format!("laggards.t_sla_{ns}ns.collecting"),
            &format!("of them collecting, at {}", sla(ns)),
            "%",
            &on_gc(&l),
        );
    }
    let (base, gc) = ("non-autonomic", "non-autonomic, gc");
    let iops = |r: &TripleAReport| r.iops;
    let lat = |r: &TripleAReport| r.latency_us.mean;
    m.set_seeds(
        "gc_over_in_place.iops_ratio",
        "non-autonomic IOPS, GC ÷ in-place FIMMs",
        "",
        &ratio(at(gc), at(base), iops),
    );
    m.set_seeds(
        "triple_a.in_place.iops_ratio",
        "Triple-A ÷ non-autonomic IOPS, in-place FIMMs",
        "",
        &ratio(at("triple-a"), at(base), iops),
    );
    for c in cells.iter().filter(|c| c.gc && c.label != gc) {
        let key = c.label.replace([',', ' ', '.'], "_");
        m.set_seeds(
            &format!("{key}.iops_ratio"),
            &format!("{} ÷ non-autonomic, gc: IOPS", c.label),
            "",
            &ratio(at(&c.label), at(gc), iops),
        );
        m.set_seeds(
            &format!("{key}.latency_ratio"),
            &format!("{} ÷ non-autonomic, gc: latency", c.label),
            "",
            &ratio(at(&c.label), at(gc), lat),
        );
    }
    m
}

fn print_table(cells: &[Cell], by_cell: &[Vec<TripleAReport>]) {
    println!(
        "\n{:<36} {:>17} {:>19} {:>7} {:>6} {:>7} {:>7} {:>6} {:>8} {:>8} {:>9} {:>8} {:>7} {:>8}",
        "array",
        "kIOPS (min–max)",
        "latency µs (min–max)",
        "p99",
        "link",
        "storage",
        "stall",
        "GC %",
        "met GC",
        "clear",
        "laggards",
        "at GC",
        "queue",
        "reshaped"
    );
    for (cell, rs) in cells.iter().zip(by_cell) {
        let (iops, ilo, ihi) = stat(rs, |r| r.iops / 1e3);
        let (lat, llo, lhi) = stat(rs, |r| r.latency_us.mean);
        let m = |f: &dyn Fn(&TripleAReport) -> f64| stat(rs, f).0;
        let gc = |f: fn(&swan_sim::triple_a::GcReport) -> f64, digits: usize| match rs[0].gc {
            Some(_) => format!("{:.*}", digits, m(&|r| r.gc.as_ref().map_or(0.0, f))),
            None => "—".to_string(),
        };
        println!(
            "{:<36} {:>6.0} ({:>4.0}–{:<4.0}) {:>7.0} ({:>4.0}–{:<4.0}) {:>7.0} {:>6.0} {:>7.0} {:>7.0} {:>6} {:>8} {:>8} {:>9.0} {:>8.0} {:>7.0} {:>8.0}",
            cell.label,
            iops,
            ilo,
            ihi,
            lat,
            llo,
            lhi,
            m(&|r| r.latency_us.p99 as f64),
            m(&|r| r.link_contention_us),
            m(&|r| r.storage_contention_us),
            m(&|r| r.queue_stall_us.total),
            gc(|g| 100.0 * g.collecting_share, 1),
            gc(|g| g.latency_meeting_gc_us, 0),
            gc(|g| g.latency_clear_of_gc_us, 0),
            m(&|r| r.autonomic.laggards_by_latency as f64),
            m(&|r| r.autonomic.laggards_collecting as f64),
            m(&|r| r.autonomic.laggards_by_queue as f64),
            m(&|r| r.autonomic.reshaped_pages as f64),
        );
    }
    println!(
        "(means over seeds; µs per request; GC % = FIMMs collecting, sampled each ms; met GC / clear = mean latency \
         of requests that had / had no page on a collecting FIMM; laggards = Eq. 3 detections, at GC = on a \
         collecting FIMM; queue = laggards found by examining a full switch queue, Fig. 8)"
    );
}

/// What the cells show against each other: no paper has these numbers, so each line is a
/// measured ratio, not a verdict. Precision: the share of Eq. 3's detections that fell on a
/// collecting FIMM, the one laggard whose cause is known.
fn findings(cells: &[Cell], by_cell: &[Vec<TripleAReport>]) -> Vec<String> {
    let at = |label: &str| &by_cell[cells.iter().position(|c| c.label == label).expect("a cell of cells()")];
    let lat = |l: &str| stat(at(l), |r| r.latency_us.mean).0;
    let iops = |l: &str| stat(at(l), |r| r.iops).0;
    let share = |l: &str| stat(at(l), |r| r.gc.as_ref().map_or(0.0, |g| g.collecting_share)).0;
    let vs = |l: &str, base: &str| format!("{:.2}× / {:.2}×", lat(l) / lat(base), iops(l) / iops(base));
    let (base, gc) = ("non-autonomic", "non-autonomic, gc");
    let mut lines = vec![
        format!(
            "GC on the non-autonomic array: latency / IOPS {} of in-place FIMMs ({:.1} % of FIMMs collecting)",
            vs(gc, base),
            100.0 * share(gc)
        ),
        format!("Triple-A / non-autonomic, in-place FIMMs: latency / IOPS {}", vs("triple-a", base)),
    ];
    lines.push(format!("migration-only, gc / non-autonomic, gc: latency / IOPS {}", vs("migration-only, gc", gc)));
    let swept = cells.iter().filter(|c| c.gc && c.autonomic.reshaping);
    for c in swept {
        let rs = at(&c.label);
        let detections = stat(rs, |r| r.autonomic.laggards_by_latency as f64).0;
        let on_gc = stat(rs, |r| r.autonomic.laggards_collecting as f64).0;
        let reshaped = stat(rs, |r| r.autonomic.reshaped_pages as f64).0;
        lines.push(format!(
            "{} / non-autonomic, gc: latency / IOPS {}; {:.0} laggards, {:.0} % of them collecting; {:.0} pages reshaped",
            c.label,
            vs(&c.label, gc),
            detections,
            100.0 * on_gc / detections.max(1.0),
            reshaped
        ));
    }
    lines
}
