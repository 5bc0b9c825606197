//! `swan repro apas-sweep`: beyond the paper, how Apas's lead over HWSR moves with the cache
//! size (5, 10 and 20 % of each trace's footprint), with the band size (8, 32 and 128 MiB)
//! while the stripe chunk stays at 32 MiB, so that a larger band changes the disks' cleaning
//! and not how a trace spreads over the disks, and with the number of disks (2, 4, 8; the
//! paper says "several"). Aged disks (`--disk-fill auto`) throughout, the stand-in traces of
//! Figs. 3–5 that carry a claim; every cell is the mean over seeds. The default cell (10 %,
//! 32 MiB, 4 disks) is one row of each sweep and is run once.

use crate::repro::apas::{Workload, WORKLOADS};
use crate::repro::args::ReproArgs;
use crate::repro::triple_a_traces::traces_dir;
use anyhow::Context;
use swan_models::smr::DEFAULT_BAND_BYTES;
use swan_sim::apas::{
    run_policy, ApasSimConfig, ApasTrace, Policy, PolicyReport, DEFAULT_CACHE_FRACTION, DEFAULT_DISKS,
};

const CACHE_PERCENT: [f64; 3] = [5.0, 10.0, 20.0];
const BAND_MIB: [u64; 3] = [8, 32, 128];
const DISKS: [u32; 3] = [2, DEFAULT_DISKS, 8];
/// The stripe chunk held fixed in the band sweep: the default band's size.
const CHUNK_MIB: u64 = 32;

/// One cell: per seed, (Apas, HWSR).
struct Cell(Vec<(PolicyReport, PolicyReport)>);

impl Cell {
    fn mean(&self, f: impl Fn(&PolicyReport) -> Option<f64>, apas: bool) -> Option<f64> {
        let v: Vec<f64> = self.0.iter().map(|(a, h)| f(if apas { a } else { h })).collect::<Option<_>>()?;
        Some(v.iter().sum::<f64>() / v.len() as f64)
    }

    fn row(&self, label: &str) -> (String, Option<bool>) {
        let mean = |r: &PolicyReport| r.summary.mean_ms;
        let write = |r: &PolicyReport| r.summary.write_ms;
        let (am, hm) = (self.mean(mean, true), self.mean(mean, false));
        let (aw, hw) = (self.mean(write, true), self.mean(write, false));
        let ratio = |a: Option<f64>, h: Option<f64>| match (a, h) {
            (Some(a), Some(h)) if h > 0.0 => Some(a / h),
            _ => None,
        };
        let f = |x: Option<f64>, w: usize| x.map_or(format!("{:>w$}", "-"), |v| format!("{v:>w$.3}"));
        let clean = |r: &PolicyReport| {
            let d = &r.summary.disk;
            format!(
                "{}/{}/{} {:.1} s",
                d.idle_cleanings,
                d.lazy_cleanings,
                d.forced_cleanings,
                (d.idle_cleaning_ns + d.lazy_cleaning_ns + d.forced_cleaning_ns) as f64 / 1e9
            )
        };
        let (a0, h0) = &self.0[0];
        let r = ratio(am, hm);
        let line = format!(
            "{label:<22} {} {} {}  {} {} {}  {} {}  {:>16}  {:>16}\n",
            f(am, 9),
            f(hm, 9),
            f(r, 6),
            f(aw, 9),
            f(hw, 9),
            f(ratio(aw, hw), 6),
            f(a0.summary.smr_write_amplification, 7),
            f(h0.summary.smr_write_amplification, 7),
            clean(a0),
            clean(h0),
        );
        (line, r.map(|r| r < 1.0))
    }
}

fn cell(trace: &ApasTrace, w: &Workload, seeds: &[u64], set: impl Fn(&mut ApasSimConfig)) -> anyhow::Result<Cell> {
    let runs = seeds
        .iter()
        .map(|&seed| {
            let mut cfg = ApasSimConfig { seed, accel: w.accel, ..ApasSimConfig::default() };
            set(&mut cfg);
            let a = run_policy(trace, &cfg, Policy::Apas)?;
            let h = run_policy(trace, &cfg, Policy::Hwsr)?;
            Ok((a, h))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Cell(runs))
}

fn header(first: &str) -> String {
    format!(
        "{first:<22} {:>9} {:>9} {:>6}  {:>9} {:>9} {:>6}  {:>7} {:>7}  {:>16}  {:>16}\n",
        "apas_ms",
        "hwsr_ms",
        "ratio",
        "apas_wr",
        "hwsr_wr",
        "ratio",
        "apas_WA",
        "hwsr_WA",
        "apas cleanings",
        "hwsr cleanings"
    )
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let n = args.seeds.unwrap_or(3).max(1);
    let seeds: Vec<u64> = (args.seed..args.seed + n).collect();
    let mut out = format!(
        "swan repro apas-sweep: beyond the paper (it gives no sizes), Apas against HWSR as the cache size, the band \
         size and the number of disks vary; whole-run mean and write response times (ms, mean over {n} seeds) and their ratio \
         apas/hwsr; the SWDs' write amplification and each policy's cleanings (idle/lazy/forced, and their disk \
         time) for seed {}. SWDs: Atlas 10K IV, 4 unless a row says otherwise, aged (free space at 20 % plus a \
         quarter of the trace's writes per disk); 25 periods per trace.\n",
        seeds[0]
    );
    let (mut below, mut cells) = (0, 0);
    let mut tally = |lb: Option<bool>| {
        cells += 1;
        below += usize::from(lb == Some(true));
    };
    for w in WORKLOADS.iter().filter(|w| w.stands_for.is_some()) {
        if !args.quiet {
            eprintln!("apas sweep: {} ...", w.name);
        }
        let trace = ApasTrace::open(&traces_dir().join(w.file), None, w.accel)
            .with_context(|| format!("the {} trace (set SWAN_TRACES to the traces directory)", w.name))?;
        out += &format!("\n== {}: {}\n", w.name, w.about);
        let base = cell(&trace, w, &seeds, |_| {})?;
        // The default cell is a row of each sweep but counts once: in the cache sweep.
        let mut row = |c: &Cell, label: String, out: &mut String, counted: bool| {
            let (line, lb) = c.row(&label);
            *out += &line;
            if counted {
                tally(lb);
            }
        };
        out += &header("cache (32 MiB bands)");
        for p in CACHE_PERCENT {
            let label = format!("{p:.0} % of the footprint");
            if p / 100.0 == DEFAULT_CACHE_FRACTION {
                row(&base, label, &mut out, true);
            } else {
                row(&cell(&trace, w, &seeds, |cfg| cfg.cache_fraction = p / 100.0)?, label, &mut out, true);
            }
        }
        out += &header(&format!("band (chunk {CHUNK_MIB} MiB)"));
        for b in BAND_MIB {
            let label = format!("{b} MiB");
            if b << 20 == DEFAULT_BAND_BYTES && CHUNK_MIB << 20 == DEFAULT_BAND_BYTES {
                row(&base, label, &mut out, false);
            } else {
                let c = cell(&trace, w, &seeds, |cfg| {
                    cfg.band_bytes = b << 20;
                    cfg.chunk_bytes = Some(CHUNK_MIB << 20);
                })?;
                row(&c, label, &mut out, true);
            }
        }
        out += &header("disks (32 MiB bands)");
        for d in DISKS {
            let label = format!("{d} disks");
            if d == DEFAULT_DISKS {
                row(&base, label, &mut out, false);
            } else {
                row(&cell(&trace, w, &seeds, |cfg| cfg.disks = d)?, label, &mut out, true);
            }
        }
    }
    out += &format!(
        "\nApas's whole-run mean below HWSR's in {below} of {cells} cells, the default cell counted once (no claim in \
         the paper).\n"
    );
    print!("{out}");
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let p = dir.join("apas-sweep.txt");
        std::fs::write(&p, &out).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}
