//! `swan repro triple-a-arrays`: SWAN, Log-RAID and RAID over Triple-A's PCIe fabric,
//! beyond the paper (issue 21): each array member a cluster behind the 4x16 network, every
//! member I/O carried through root complex, switch and endpoint to the cluster's FIMMs, with
//! FIMMs that program in place (the paper's) and FIMMs that collect garbage.
//!
//! Every run: 8 members, clusters 0–7 under switch 0 (one up-link for all), FIMMs scaled to
//! 512 MiB (64 blocks per plane of 16 pages: the FTL maps take 8 bytes per 4 KiB of flash),
//! members of 1.75 GiB (87.5 % of their cluster's flash, so a GC-active FIMM keeps 12.5 %
//! spare), 4 KiB requests over 60 % of the array's data capacity, closed loop at depth 256,
//! 0.3 simulated seconds. Log-structured arrays are pre-filled (untimed) so their own GC is in
//! steady state; GC-active FIMMs start aged.

use crate::claims::Measures;
use crate::experiments::{run_config, sata_ssd};
use crate::repro::args::ReproArgs;
use crate::runner::{default_parallelism, run_all, Job};
use anyhow::Context;
use std::path::PathBuf;
use swan_core::scheme::SchemeKind;
use swan_sim::engine::{SimConfig, StopRule};
use swan_sim::fabric_array::{FabricReport, FabricSpec};
use swan_sim::output::RunSummary;
use swan_sim::workload::{Arrival, Distribution, Pattern, WorkloadSpec};

const PRESET: &str = "4x16";
const BLOCKS_PER_PLANE: u32 = 64;
const PAGES_PER_BLOCK: u32 = 16;
const MEMBER_GIB: f64 = 1.75;
const DEPTH: u32 = 256;
const SECONDS: f64 = 0.3;
const WORKING_SET: f64 = 0.6;
/// SWAN R-groups × members per R-group, and the stripe width of the others: 8 members each.
const SWAN_SHAPE: (u32, u32) = (4, 2);
const STRIPE: u32 = 8;

#[derive(Clone, Debug)]
struct Cell {
    scheme: SchemeKind,
    pattern: Pattern,
    gc: bool,
}

impl Cell {
    fn label(&self) -> String {
        let w = match self.pattern {
            Pattern::RandWrite => "randwrite",
            _ => "randrw 50/50",
        };
        format!("{} {w}{}", self.scheme, if self.gc { ", FIMM GC" } else { "" })
    }
}

fn cells() -> Vec<Cell> {
    let schemes =
        ["swan0", "swan4", "lograid0", "lograid4", "raid5"].map(|s| s.parse::<SchemeKind>().expect("a scheme"));
    let mut cells = Vec::new();
    for pattern in [Pattern::RandWrite, Pattern::RandRw] {
        for gc in [false, true] {
            cells.extend(schemes.iter().map(|&scheme| Cell { scheme, pattern, gc }));
        }
    }
    cells
}

fn config(cell: &Cell, seed: u64) -> SimConfig {
    let (g, n) = match cell.scheme {
        SchemeKind::Swan(_) => SWAN_SHAPE,
        _ => (1, STRIPE),
    };
    let workload = WorkloadSpec {
        pattern: cell.pattern,
        read_fraction: 0.5,
        block_blocks: 1,
        block_blocks_max: 0,
        region_start: 0,
        region_blocks: 0,
        distribution: Distribution::Uniform,
        arrival: Arrival::Closed { iodepth: DEPTH },
    };
    let ssd = sata_ssd(MEMBER_GIB, "sata850pro");
    let mut cfg = run_config(cell.scheme, g, n, ssd, workload, WORKING_SET, 0.0, 0.0, seed);
    cfg.stop = StopRule { sim_seconds: Some(SECONDS), write_bytes: None };
    cfg.interval_ms = 50;
    if cell.scheme.is_log_structured() {
        cfg.array.tuning.volume_blocks =
            Some(crate::experiments::spare_volume(&cfg.array, swan_core::scheme::log::DEFAULT_SPARE));
        cfg.prefill = Some(swan_sim::prefill::Prefill::STEADY);
    }
    cfg.fabric = Some(FabricSpec {
        preset: PRESET.into(),
        gc: cell.gc,
        blocks_per_plane: Some(BLOCKS_PER_PLANE),
        pages_per_block: Some(PAGES_PER_BLOCK),
        placement: swan_sim::fabric_array::Placement::SwitchMajor,
    });
    cfg
}

pub fn run(args: &ReproArgs, exp: &str) -> anyhow::Result<()> {
    let cells = cells();
    let seeds = args.seeds.unwrap_or(3);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(exp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    println!(
        "swan repro {exp}: {} cells × {seeds} seeds; 8 members = clusters 0–7 under switch 0 of the {PRESET} fabric, \
         FIMMs of 512 MiB ({BLOCKS_PER_PLANE} blocks per plane of {PAGES_PER_BLOCK} pages), members of {MEMBER_GIB} \
         GiB; 4 KiB requests over {:.0} % of the data capacity, closed loop at depth {DEPTH}, {SECONDS} simulated s; \
         log-structured arrays pre-filled, GC-active FIMMs aged (results in {})",
        cells.len(),
        100.0 * WORKING_SET,
        out.display()
    );
    let mut jobs = Vec::new();
    for (i, cell) in cells.iter().enumerate() {
        for s in 0..seeds {
            let seed = args.seed + s;
            let name = format!("{:02}-{}-seed{seed}", i, cell.label().replace([' ', ',', '/'], "_"));
            jobs.push(Job { name: name.clone(), cfg: config(cell, seed), dir: out.join(name) });
        }
    }
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let by_cell: Vec<&[RunSummary]> = summaries.chunks(seeds as usize).collect();
    print_table(&cells, &by_cell);
    println!();
    for line in findings(&cells, &by_cell) {
        println!("{line}");
    }
    crate::claims::publish(&out, &measures(exp, &cells, &by_cell))?;
    Ok(())
}

/// Each cell's IOPS and mean latency, seed by seed (beyond the paper: no claim is judged on
/// them; they are kept beside the others in `repro/measures/`).
fn measures(exp: &str, cells: &[Cell], by_cell: &[&[RunSummary]]) -> Measures {
    let mut m = Measures::new(exp);
    for (cell, rs) in cells.iter().zip(by_cell) {
        let key = cell.label().replace([',', ' ', '/'], "_");
        let k: Vec<f64> = rs.iter().map(kiops).collect();
        let lat: Vec<f64> = rs.iter().map(|r| r.latency_us.mean).collect();
        m.set_seeds(&format!("{key}.kiops"), &cell.label(), "kIOPS", &k);
        m.set_seeds(&format!("{key}.latency_us"), &cell.label(), "µs", &lat);
    }
    m
}

/// Mean and (min, max) of `f` over a cell's seeds.
fn stat(rs: &[RunSummary], f: impl Fn(&RunSummary) -> f64) -> (f64, f64, f64) {
    let v: Vec<f64> = rs.iter().map(f).collect();
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

fn fabric(r: &RunSummary) -> &FabricReport {
    r.fabric.as_ref().expect("a fabric run")
}

fn kiops(r: &RunSummary) -> f64 {
    r.requests as f64 / r.sim_s / 1e3
}

fn print_table(cells: &[Cell], by_cell: &[&[RunSummary]]) {
    println!(
        "\n{:<34} {:>18} {:>20} {:>6} {:>6} {:>7} {:>6} {:>6} {:>7} {:>7} {:>7} {:>8}",
        "array",
        "kIOPS (min–max)",
        "latency µs (min–max)",
        "p99",
        "link",
        "storage",
        "bus %",
        "GC %",
        "met GC",
        "clear",
        "copies",
        "arr. GC"
    );
    for (cell, rs) in cells.iter().zip(by_cell) {
        let (k, k0, k1) = stat(rs, kiops);
        let (l, l0, l1) = stat(rs, |r| r.latency_us.mean);
        let m = |f: &dyn Fn(&RunSummary) -> f64| stat(rs, f).0;
        let gc = |f: fn(&swan_sim::fabric_array::FimmGc) -> f64, digits: usize| {
            if cell.gc {
                format!("{:.*}", digits, m(&|r| fabric(r).fimm_gc.as_ref().map_or(0.0, f)))
            } else {
                "–".to_string()
            }
        };
        let met = if cell.gc { format!("{:.0}", m(&|r| fabric(r).user_meeting_gc.latency_us)) } else { "–".into() };
        println!(
            "{:<34} {:>6.1} ({:>4.1}–{:>4.1}) {:>7.0} ({:>4.0}–{:>5.0}) {:>6.0} {:>6.1} {:>7.1} {:>6.1} {:>6} {:>7} {:>7.0} {:>7} {:>8.0}",
            cell.label(),
            k,
            k0,
            k1,
            l,
            l0,
            l1,
            m(&|r| r.latency_us.p99 as f64),
            m(&|r| user_mean(fabric(r), |t| t.link_contention_us)),
            m(&|r| user_mean(fabric(r), |t| t.storage_contention_us)),
            100.0 * m(&|r| fabric(r).local_bus_busy),
            gc(|g| 100.0 * g.collecting_share, 1),
            met,
            m(&|r| fabric(r).user_clear_of_gc.latency_us),
            gc(|g| g.copied_slots as f64, 0),
            m(&|r| r.fabric.as_ref().map_or(0.0, |f| f.array_gc.ops as f64)),
        );
    }
    println!(
        "\nkIOPS: user requests per simulated ms; latency: user requests (µs), mean and p99; link / storage: mean \
         contention per user page operation (µs; link = PCIe links, local bus, FIMM channel; storage = busy die or \
         full write buffer); bus %: the members' local buses busy; GC %: FIMMs collecting (sampled each ms); met GC \
         / clear: mean latency of user page operations whose FIMM was / was not collecting; copies: slots the FIMMs' \
         collections copied; arr. GC: page operations of the array's own GC. Means over the seeds; ranges min–max."
    );
}

/// Mean of `f` over a run's user page operations, reads and writes together.
fn user_mean(f: &FabricReport, g: impl Fn(&swan_sim::fabric_array::OpTally) -> f64) -> f64 {
    let (r, w) = (&f.user_read, &f.user_write);
    let n = (r.ops + w.ops).max(1) as f64;
    (g(r) * r.ops as f64 + g(w) * w.ops as f64) / n
}

/// What the table says, each line computed from it.
fn findings(cells: &[Cell], by_cell: &[&[RunSummary]]) -> Vec<String> {
    let mut lines = vec!["Findings (means over seeds):".to_string()];
    let find = |scheme: SchemeKind, pattern: Pattern, gc: bool| {
        cells.iter().position(|c| c.scheme == scheme && c.pattern == pattern && c.gc == gc).map(|i| by_cell[i])
    };
    for cell in cells.iter().filter(|c| c.gc) {
        let (Some(on), Some(off)) = (find(cell.scheme, cell.pattern, true), find(cell.scheme, cell.pattern, false))
        else {
            continue;
        };
        let k = |rs: &[RunSummary]| stat(rs, kiops).0;
        let lat = |rs: &[RunSummary]| stat(rs, |r| r.latency_us.mean).0;
        let met = stat(on, |r| fabric(r).user_meeting_gc.latency_us).0;
        let clear = stat(on, |r| fabric(r).user_clear_of_gc.latency_us).0;
        let met_link = stat(on, |r| fabric(r).user_meeting_gc.link_contention_us).0;
        let met_storage = stat(on, |r| fabric(r).user_meeting_gc.storage_contention_us).0;
        let clear_link = stat(on, |r| fabric(r).user_clear_of_gc.link_contention_us).0;
        let clear_storage = stat(on, |r| fabric(r).user_clear_of_gc.storage_contention_us).0;
        let copies = stat(on, |r| fabric(r).fimm_gc.as_ref().map_or(0.0, |g| g.copied_slots as f64)).0;
        lines.push(format!(
            "- {}: FIMM GC takes IOPS {:.2}× and mean latency {:.2}× of in-place FIMMs; {:.0} slots copied per run; \
             page ops meeting a collection {met:.0} µs (link {met_link:.1}, storage {met_storage:.1}) vs clear \
             {clear:.0} µs (link {clear_link:.1}, storage {clear_storage:.1})",
            cell.label(),
            k(on) / k(off).max(1e-9),
            lat(on) / lat(off).max(1e-9),
            copies
        ));
    }
    lines
}
