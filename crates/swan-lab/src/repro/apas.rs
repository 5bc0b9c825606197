//! `swan repro apas-fig3|apas-fig4|apas-fig5`: Apas's Figs. 3–5 (mean, read and write
//! response time in each of consecutive periods, Apas against HWSR) on the traces this
//! machine holds, and what the paper's claims ([`crate::claims::apas`]) are judged on.
//!
//! The paper's Financial and Exchange traces are not here. Stand-ins from `data/traces` (or
//! `$SWAN_TRACES`), each replayed open loop at its own times; the seed places the trace in
//! the striped volume (which disk each chunk lands on), the only thing it changes.

use crate::claims::Measures;
use crate::repro::args::{Experiment, ReproArgs};
use crate::repro::triple_a_traces::traces_dir;
use anyhow::Context;
use swan_sim::apas::run::PAPER_PERIOD_S;
use swan_sim::apas::{run_policy, ApasSimConfig, ApasTrace, DiskFill, PeriodRow, Policy, PolicyReport};

/// A workload: its trace, how fast it is replayed, and which of the paper's it stands for.
pub(crate) struct Workload {
    pub(crate) name: &'static str,
    pub(crate) file: &'static str,
    pub(crate) accel: f64,
    pub(crate) about: &'static str,
    /// The paper's trace it stands in for, if any.
    pub(crate) stands_for: Option<&'static str>,
}

pub(crate) const WORKLOADS: [Workload; 4] = [
    Workload {
        name: "msr-win",
        file: "msr-window-rw20.heimdall",
        accel: 1.0,
        about: "an MSR Cambridge volume, 10,000 requests over 243 s, 20 % reads, 1 application",
        stands_for: Some("Financial (19 % reads)"),
    },
    Workload {
        name: "tpcc",
        file: "tpcc-small.mqsim",
        accel: 0.01,
        about: "TPC-C on 16 disks (16 applications), 6,999 requests, 63 % reads, replayed 100× slower \
                (at its own speed, 50,000 requests/s, it overloads 4 disks a thousandfold)",
        stands_for: Some("Exchange (46 % reads, several applications)"),
    },
    Workload {
        name: "cloudphysics",
        file: "cloudphysics-vm.csv",
        accel: 1.0,
        about: "one VM's virtual disk, 113,872 requests over 2 h, 41 % reads; no application ids: \
                one application (the reader warns)",
        stands_for: Some("Exchange (46 % reads), as one application"),
    },
    Workload {
        name: "websearch",
        file: "websearch-small.mqsim",
        accel: 1.0,
        about: "UMass WebSearch, 24,783 requests over 60 s, 99.98 % reads, 6 ASUs",
        stands_for: None,
    },
];

#[derive(Clone, Copy)]
enum Metric {
    Mean,
    Read,
    Write,
}

impl Metric {
    fn of(self, r: &PeriodRow) -> Option<f64> {
        match self {
            Metric::Mean => r.mean_ms,
            Metric::Read => r.read_ms,
            Metric::Write => r.write_ms,
        }
    }

    fn of_run(self, r: &PolicyReport) -> Option<f64> {
        match self {
            Metric::Mean => r.summary.mean_ms,
            Metric::Read => r.summary.read_ms,
            Metric::Write => r.summary.write_ms,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Metric::Mean => "mean response time",
            Metric::Read => "read response time",
            Metric::Write => "write response time",
        }
    }
}

/// Mean and range over seeds of one period's value (`None` unless every seed has one).
fn over_seeds(values: &[Option<f64>]) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = values.iter().copied().collect::<Option<_>>()?;
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Some((mean, v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(0.0, f64::max)))
}

/// One workload's runs: per seed, (Apas, HWSR).
struct Runs {
    per_seed: Vec<(PolicyReport, PolicyReport)>,
    paper_period: (PolicyReport, PolicyReport),
    /// The first seed on disks holding the footprint alone (free space never near 20 %).
    empty_disks: (PolicyReport, PolicyReport),
}

fn run_workload(w: &Workload, seeds: &[u64]) -> anyhow::Result<Runs> {
    let path = traces_dir().join(w.file);
    let trace = ApasTrace::open(&path, None, w.accel)
        .with_context(|| format!("the {} trace (set SWAN_TRACES to the traces directory)", w.name))?;
    let both = |cfg: &ApasSimConfig| -> anyhow::Result<(PolicyReport, PolicyReport)> {
        let a = run_policy(&trace, cfg, Policy::Apas)?;
        let h = run_policy(&trace, cfg, Policy::Hwsr)?;
        Ok((a, h))
    };
    let per_seed = seeds
        .iter()
        .map(|&seed| both(&ApasSimConfig { seed, accel: w.accel, ..ApasSimConfig::default() }))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let paper = ApasSimConfig {
        seed: seeds[0],
        accel: w.accel,
        period_ns: Some((PAPER_PERIOD_S * 1e9) as u64),
        ..ApasSimConfig::default()
    };
    let empty = ApasSimConfig {
        seed: seeds[0],
        accel: w.accel,
        disk_fill: DiskFill::Fraction(0.0),
        ..ApasSimConfig::default()
    };
    Ok(Runs { per_seed, paper_period: both(&paper)?, empty_disks: both(&empty)? })
}

/// One policy's cleanings: how many of each kind and the disk time they took.
fn cleanings(r: &PolicyReport) -> String {
    let d = &r.summary.disk;
    format!(
        "{} {}/{}/{} in {:.1}/{:.1}/{:.1} s",
        r.policy.name(),
        d.idle_cleanings,
        d.lazy_cleanings,
        d.forced_cleanings,
        d.idle_cleaning_ns as f64 / 1e9,
        d.lazy_cleaning_ns as f64 / 1e9,
        d.forced_cleaning_ns as f64 / 1e9
    )
}

fn ms(x: Option<(f64, f64, f64)>) -> String {
    x.map_or(format!("{:>26}", "-"), |(m, lo, hi)| format!("{m:>9.3} ({lo:>7.3}–{hi:<7.3})"))
}

/// Per period: Apas and HWSR (mean over seeds, range) and their ratio; returns the periods
/// where both have a value and how many of them Apas is below HWSR in, and by ≥ 20 %.
fn table(out: &mut String, runs: &Runs, metric: Metric) -> (usize, usize, usize) {
    let periods = runs.per_seed.iter().map(|(a, h)| a.rows.len().max(h.rows.len())).max().unwrap_or(0);
    *out += &format!("period  start_s  {:>26}  {:>26}  apas/hwsr\n", "apas ms (min–max)", "hwsr ms (min–max)");
    let (mut both, mut below, mut far_below) = (0, 0, 0);
    for p in 0..periods {
        let pick = |which: fn(&(PolicyReport, PolicyReport)) -> &PolicyReport| {
            let v: Vec<Option<f64>> =
                runs.per_seed.iter().map(|r| which(r).rows.get(p).and_then(|row| metric.of(row))).collect();
            over_seeds(&v)
        };
        let a = pick(|r| &r.0);
        let h = pick(|r| &r.1);
        let start = runs.per_seed[0].0.rows.get(p).map_or(0.0, |r| r.start_s);
        let ratio = match (a, h) {
            (Some((a, ..)), Some((h, ..))) if h > 0.0 => {
                both += 1;
                below += usize::from(a < h);
                far_below += usize::from(a <= 0.8 * h);
                format!("{:.2}", a / h)
            }
            _ => "-".into(),
        };
        *out += &format!("{p:>6} {start:>8.2}  {}  {}  {ratio:>9}\n", ms(a), ms(h));
    }
    (both, below, far_below)
}

fn run_mean(runs: &Runs, metric: Metric) -> (Option<f64>, Option<f64>) {
    let a: Vec<Option<f64>> = runs.per_seed.iter().map(|r| metric.of_run(&r.0)).collect();
    let h: Vec<Option<f64>> = runs.per_seed.iter().map(|r| metric.of_run(&r.1)).collect();
    (over_seeds(&a).map(|x| x.0), over_seeds(&h).map(|x| x.0))
}

/// Apas's whole-run value over HWSR's, seed by seed (empty unless every seed has both).
fn run_ratios(runs: &Runs, metric: Metric) -> Vec<f64> {
    runs.per_seed
        .iter()
        .map(|(a, h)| match (metric.of_run(a), metric.of_run(h)) {
            (Some(a), Some(h)) if h > 0.0 => Some(a / h),
            _ => None,
        })
        .collect::<Option<Vec<f64>>>()
        .unwrap_or_default()
}

pub fn run(args: &ReproArgs, exp: &str) -> anyhow::Result<()> {
    let metric = match args.experiment {
        Experiment::ApasFig3 => Metric::Mean,
        Experiment::ApasFig4 => Metric::Read,
        Experiment::ApasFig5 => Metric::Write,
        _ => unreachable!("only the Apas experiments come here"),
    };
    let n = args.seeds.unwrap_or(3).max(1);
    let seeds: Vec<u64> = (args.seed..args.seed + n).collect();
    let d = ApasSimConfig::default();
    let mut out = format!(
        "swan repro {exp}: Apas Fig. {} ({} per period), Apas against HWSR, {} workloads × {n} seeds \
         (each seed places the trace in the volume; nothing else is random); {} SWDs (Atlas 10K IV, {} MiB \
         bands) striped in band-sized chunks, the apas-slc SSD cache at {:.0} % of each trace's footprint, \
         every trace cut into 25 periods of equal length (the paper's 10,000 s periods are longer than \
         every trace here: one run per workload with them follows the table); aged disks: each starts with \
         free space at the lazy-cleaning threshold (20 %) plus a quarter of the blocks the trace writes to it, \
         the rest older data the trace never touches (--disk-fill auto; one run per workload on disks \
         holding only the footprint follows the table)\n",
        match metric {
            Metric::Mean => 3,
            Metric::Read => 4,
            Metric::Write => 5,
        },
        metric.name(),
        WORKLOADS.len(),
        d.disks,
        d.band_bytes >> 20,
        d.cache_fraction * 100.0
    );
    out += "The paper's Financial and Exchange traces are not on this machine; stand-ins:\n";
    for w in &WORKLOADS {
        out += &format!(
            "  {:<13} {}: {}{}\n",
            w.name,
            w.file,
            w.about,
            w.stands_for.map_or(String::new(), |s| format!(" — for {s}"))
        );
    }
    let mut measures = Measures::new(exp);
    let what = match metric {
        Metric::Mean => "",
        Metric::Read => " reads",
        Metric::Write => " writes",
    };
    for w in &WORKLOADS {
        if !args.quiet {
            eprintln!("apas repro: {} ...", w.name);
        }
        let runs = run_workload(w, &seeds)?;
        let (a0, h0) = &runs.per_seed[0];
        out += &format!(
            "\n== {} ({} periods of {:.3} s; cache {} blocks; prefill {:.1} s before the run) — {}\n",
            w.name,
            a0.rows.len(),
            a0.period_s,
            a0.cache_blocks,
            a0.prefill_s,
            metric.name()
        );
        let (both, below, far) = table(&mut out, &runs, metric);
        let (ra, rh) = run_mean(&runs, metric);
        let ratio = match (ra, rh) {
            (Some(a), Some(h)) if h > 0.0 => Some(a / h),
            _ => None,
        };
        let fmt = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.3}"));
        out += &format!(
            "whole run: apas {} ms, hwsr {} ms (apas/hwsr {}); apas below hwsr in {below} of {both} periods, \
             ≥ 20 % below in {far}; SMR write amplification apas {} hwsr {}, idle cleanings apas {}\n",
            fmt(ra),
            fmt(rh),
            fmt(ratio),
            fmt(a0.summary.smr_write_amplification),
            fmt(h0.summary.smr_write_amplification),
            a0.summary.disk.idle_cleanings,
        );
        let free: Vec<f64> = a0.free_at_start.iter().map(|f| f * 100.0).collect();
        out += &format!(
            "disks at the start (seed {}): {:.3}–{:.3} % free; cleanings idle/lazy/forced and the disk time in them: \
             {}, {}\n",
            seeds[0],
            free.iter().copied().fold(f64::INFINITY, f64::min),
            free.iter().copied().fold(0.0, f64::max),
            cleanings(a0),
            cleanings(h0)
        );
        let (ea, eh) = &runs.empty_disks;
        out += &format!(
            "on disks holding only the footprint (seed {}): apas {} ms, hwsr {} ms; cleanings {}, {}\n",
            seeds[0],
            fmt(metric.of_run(ea)),
            fmt(metric.of_run(eh)),
            cleanings(ea),
            cleanings(eh)
        );
        let (pa, ph) = &runs.paper_period;
        out += &format!(
            "with the paper's 10,000 s period (seed {}; {} period: CPP never re-sizes within the trace): \
             apas {} ms, hwsr {} ms\n",
            seeds[0],
            pa.rows.len(),
            fmt(metric.of_run(pa)),
            fmt(metric.of_run(ph))
        );
        let n = w.name;
        if both > 0 {
            let share = |k: usize| k as f64 / both as f64;
            measures.set(&format!("{n}.periods_below"), "periods below HWSR", "%", share(below));
            measures.set(&format!("{n}.periods_far_below"), "periods ≥ 20 % below", "%", share(far));
        }
        measures.set_seeds(
            &format!("{n}.ratio"),
            &format!("Apas ÷ HWSR{what}, whole run"),
            "",
            &run_ratios(&runs, metric),
        );
        // §II's premise: Apas cleans in the disks' idle time (seed 1's run).
        let d = &a0.summary.disk;
        let all = d.idle_cleanings + d.lazy_cleanings + d.forced_cleanings;
        measures.set(&format!("{n}.idle_cleanings"), "Apas's cleanings in idle time", "", d.idle_cleanings as f64);
        if all > 0 {
            measures.set(&format!("{n}.idle_share"), "of all its cleanings", "%", d.idle_cleanings as f64 / all as f64);
        }
        if let (Some(a), Some(h)) = (metric.of_run(pa), metric.of_run(ph)) {
            if h > 0.0 {
                measures.set(&format!("{n}.paper_period.ratio"), n, "", a / h);
            }
        }
    }
    print!("{out}");
    let dir = args.out.clone().unwrap_or_else(|| std::path::PathBuf::from("out").join(exp));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if args.out.is_some() {
        let p = dir.join(format!("{exp}.txt"));
        std::fs::write(&p, &out).with_context(|| format!("cannot write {}", p.display()))?;
    }
    crate::claims::publish(&dir, &measures)?;
    Ok(())
}
