//! `swan repro harmonia-length`: how much reactive GGC cuts RAID0's mean and standard
//! deviation of response on HPC(W), 8 SSDs, as a function of the run's length, the warm-up
//! and the array layer (each SSD on its own link, or all on DiskSim's shared HBA bus). The
//! paper prints −70 % and −71 % from one run whose length it does not give; the table says
//! which cells give both, and the nearest one.

use crate::claims::Measures;
use crate::experiments::{self, HarmoniaScale};
use crate::repro::args::ReproArgs;
use crate::runner::{default_parallelism, run_all, Job};
use std::path::PathBuf;
use swan_sim::engine::SimConfig;
use swan_sim::output::RunSummary;

/// The paper's cuts (§V-C, Fig. 6: HPC(W), 8 SSDs).
const PAPER_MEAN_CUT: f64 = -0.70;
const PAPER_SD_CUT: f64 = -0.71;

/// A cell: warm-up, length, array layer; its runs by scheme, seed by seed.
struct Cell<'a> {
    warmup: &'static str,
    length_s: f64,
    bus: bool,
    baseline: Vec<&'a RunSummary>,
    ggc: Vec<&'a RunSummary>,
}

fn warmup(cfg: &SimConfig) -> &'static str {
    if cfg.age_fraction > 0.0 {
        "fill+90%"
    } else {
        "fill"
    }
}

fn job_name(cfg: &SimConfig) -> String {
    let bus = if cfg.hba_bus.is_some() { "hba" } else { "own-links" };
    format!(
        "{}-{}-{}s-{bus}-s{}",
        cfg.scheme_label(),
        warmup(cfg).replace(['+', '%'], ""),
        cfg.stop.sim_seconds.unwrap_or(0.0),
        cfg.seed
    )
}

/// GGC's change over the baseline of the same seed (−0.7 = −70 %), seed by seed.
fn changes(cell: &Cell, f: fn(&RunSummary) -> f64) -> Vec<f64> {
    cell.ggc.iter().zip(&cell.baseline).map(|(g, b)| f(g) / f(b) - 1.0).collect()
}

/// [`changes`] summed up: (mean, min, max).
fn change(cell: &Cell, f: fn(&RunSummary) -> f64) -> (f64, f64, f64) {
    let v = changes(cell, f);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    (mean, v.iter().copied().fold(f64::MAX, f64::min), v.iter().copied().fold(f64::MIN, f64::max))
}

fn mean_us(x: &RunSummary) -> f64 {
    x.latency_us.mean
}

fn sd_us(x: &RunSummary) -> f64 {
    x.latency_us.stddev
}

fn avg(runs: &[&RunSummary], f: fn(&RunSummary) -> f64) -> f64 {
    runs.iter().map(|x| f(x)).sum::<f64>() / runs.len().max(1) as f64
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let scale =
        HarmoniaScale { ssd_gib: args.ssd_gib.unwrap_or(HarmoniaScale::DEFAULT.ssd_gib), ..HarmoniaScale::DEFAULT };
    let seeds = args.seeds.unwrap_or(3);
    if seeds == 0 {
        anyhow::bail!("--seeds must be at least 1");
    }
    let configs: Vec<SimConfig> =
        (args.seed..args.seed + seeds).flat_map(|seed| experiments::harmonia_length(scale, seed)).collect();
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("harmonia-length"));
    println!(
        "swan repro harmonia-length: {} runs, HPC(W) on 8 Harmonia SSDs of {:.1} GiB user, baseline and reactive GGC; \
         after the paper's fill for {:?} s, after the fill and 90 % overwritten for {:?} s (measured from 3 s); \
         each SSD on its own link and all on DiskSim's shared HBA bus; seeds {}..={} (results in {})",
        configs.len(),
        scale.ssd_gib,
        experiments::HARMONIA_LENGTHS_FILL_S,
        experiments::HARMONIA_LENGTHS_STEADY_S,
        args.seed,
        args.seed + seeds - 1,
        out.display()
    );
    let jobs: Vec<Job> =
        configs.into_iter().map(|cfg| Job { dir: out.join(job_name(&cfg)), name: job_name(&cfg), cfg }).collect();
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let cells = cells(&jobs, &summaries);
    println!();
    println!(
        "{:<9} {:>7} {:<10} {:>18} {:>18} {:>22} {:>22}",
        "warm-up",
        "length",
        "layer",
        "RAID0 mean/sd ms",
        "GGC mean/sd ms",
        "mean change (by seed)",
        "sd change (by seed)"
    );
    let mut m = Measures::new("harmonia-length");
    for c in &cells {
        let (mc, mlo, mhi) = change(c, mean_us);
        let (sc, slo, shi) = change(c, sd_us);
        let layer = if c.bus { "HBA bus" } else { "own links" };
        println!(
            "{:<9} {:>6.0}s {:<10} {:>8.2} / {:<7.2} {:>8.2} / {:<7.2} {:>+6.0} % ({:+.0}…{:+.0}) {:>+8.0} % ({:+.0}…{:+.0})",
            c.warmup,
            c.length_s,
            layer,
            avg(&c.baseline, mean_us) / 1e3,
            avg(&c.baseline, sd_us) / 1e3,
            avg(&c.ggc, mean_us) / 1e3,
            avg(&c.ggc, sd_us) / 1e3,
            100.0 * mc,
            100.0 * mlo,
            100.0 * mhi,
            100.0 * sc,
            100.0 * slo,
            100.0 * shi
        );
        let key = format!("{}.{}s.{}", c.warmup.replace(['+', '%'], ""), c.length_s, if c.bus { "hba" } else { "own" });
        let what = format!("{}, {} s, {layer}", c.warmup, c.length_s);
        m.set_seeds(&format!("{key}.mean_change"), &format!("{what}: GGC's mean change"), "%", &changes(c, mean_us));
        m.set_seeds(&format!("{key}.sd_change"), &format!("{what}: GGC's std dev change"), "%", &changes(c, sd_us));
    }
    println!(
        "(GGC over RAID0 of the same seed; the paper: mean {:+.0} %, std dev {:+.0} %)",
        100.0 * PAPER_MEAN_CUT,
        100.0 * PAPER_SD_CUT
    );
    // The cell nearest the paper's pair, and every cell within 10 points of both.
    let cuts: Vec<(f64, f64)> = cells.iter().map(|c| (change(c, mean_us).0, change(c, sd_us).0)).collect();
    let distance = |i: usize| ((cuts[i].0 - PAPER_MEAN_CUT).powi(2) + (cuts[i].1 - PAPER_SD_CUT).powi(2)).sqrt();
    if let Some(i) = (0..cells.len()).min_by(|&a, &b| distance(a).total_cmp(&distance(b))) {
        let best = &cells[i];
        println!(
            "Nearest the paper's pair: {}, {} s, {} ({:.0} points away)",
            best.warmup,
            best.length_s,
            if best.bus { "HBA bus" } else { "own links" },
            100.0 * distance(i)
        );
    }
    let within: Vec<String> = cells
        .iter()
        .zip(&cuts)
        .filter(|(_, &(mc, sc))| (mc - PAPER_MEAN_CUT).abs() <= 0.10 && (sc - PAPER_SD_CUT).abs() <= 0.10)
        .map(|(c, _)| format!("{} {} s {}", c.warmup, c.length_s, if c.bus { "HBA bus" } else { "own links" }))
        .collect();
    println!(
        "Cells within 10 points of both: {}",
        if within.is_empty() { "none".to_string() } else { within.join("; ") }
    );
    crate::claims::publish(&out, &m)?;
    Ok(())
}

/// The runs grouped by cell, in the order the experiment lists them.
fn cells<'a>(jobs: &[Job], summaries: &'a [RunSummary]) -> Vec<Cell<'a>> {
    let mut out: Vec<Cell<'a>> = Vec::new();
    for (job, x) in jobs.iter().zip(summaries) {
        let (w, len, bus) = (warmup(&job.cfg), job.cfg.stop.sim_seconds.unwrap_or(0.0), job.cfg.hba_bus.is_some());
        let i = match out.iter().position(|c| c.warmup == w && c.length_s == len && c.bus == bus) {
            Some(i) => i,
            None => {
                out.push(Cell { warmup: w, length_s: len, bus, baseline: Vec::new(), ggc: Vec::new() });
                out.len() - 1
            }
        };
        if job.cfg.ggc.is_some() {
            out[i].ggc.push(x);
        } else {
            out[i].baseline.push(x);
        }
    }
    out
}
