//! `swan repro triple-a-table2|fig9|fig10|fig11`: Triple-A's real-workload results (§6.1–§6.3)
//! as block-trace replays on the 4x16 network, the paper's printed values and claims beside
//! what swan measured.
//!
//! Every run: a trace of `data/traces` (or `$SWAN_TRACES`) in a closed loop of the depth
//! calibrated on Table 2's hm row ([`TRACE_DEPTH`]), looped, 1 simulated second measured from
//! 0.2 s; each seed puts the trace at another chunk of the array (the baseline and Triple-A
//! of one seed see the same placement, so their ratio is taken seed by seed).

use crate::repro::args::{Experiment, ReproArgs};
use crate::repro::triple_a::{run_cells, stat};
use anyhow::Context;
use std::path::PathBuf;
use swan_core::triple_a::AutonomicConfig;
use swan_models::fabric::preset;
use swan_sim::triple_a::{management_label, TraceWorkload, TripleAConfig, TripleADriver, TripleAReport, TRACE_DEPTH};

const SECONDS: f64 = 1.0;
const MEASURE_FROM_S: f64 = 0.2;

/// A row of Table 2 as printed (4x16 non-autonomic array).
#[derive(Clone, Copy, Debug)]
struct Table2Row {
    latency_us: f64,
    kiops: f64,
    link_us: f64,
    storage_us: f64,
    stall_us: f64,
}

/// A workload of ours: its trace and what it is.
struct Workload {
    name: &'static str,
    file: &'static str,
    about: &'static str,
    paper: Option<Table2Row>,
}

const WORKLOADS: [Workload; 3] = [
    Workload {
        name: "hm",
        file: "msr-hm_0-excerpt.csv",
        about: "MSR Cambridge hm_0, 1,000 consecutive requests",
        paper: Some(Table2Row {
            latency_us: 1806.0,
            kiops: 112.0,
            link_us: 1270.0,
            storage_us: 461.0,
            stall_us: 1731.0,
        }),
    },
    Workload {
        name: "web",
        file: "websearch-small.mqsim",
        about: "UMass WebSearch, 24,783 requests (about 60 s)",
        paper: Some(Table2Row {
            latency_us: 1148.0,
            kiops: 181.0,
            link_us: 239.0,
            storage_us: 768.0,
            stall_us: 1008.0,
        }),
    },
    Workload {
        name: "msr-win",
        file: "msr-window-rw20.heimdall",
        about: "an MSR Cambridge volume (which one is not recorded), 10,000 requests, 20 % reads; not in Table 2",
        paper: None,
    },
];

/// The paper's workloads with no trace reachable from here.
const NOT_HERE: &str = "cfs, fin, mds, msnfs, prn, proj, prxy, usr, websql, g-eigen, l-eigen";

/// One array on one workload.
#[derive(Clone, Copy)]
struct Cell {
    workload: usize,
    autonomic: AutonomicConfig,
}

fn arrays(e: Experiment) -> Vec<AutonomicConfig> {
    let ta = AutonomicConfig::triple_a();
    match e {
        Experiment::TripleATable2 => vec![AutonomicConfig::non_autonomic()],
        // Each half of Triple-A alone too: swan's ablation, to show which half moves the result.
        Experiment::TripleAFig9 => vec![
            AutonomicConfig::non_autonomic(),
            ta,
            AutonomicConfig { reshaping: false, ..ta },
            AutonomicConfig { migration: false, ..ta },
        ],
        Experiment::TripleAFig10 | Experiment::TripleAFig11 => vec![AutonomicConfig::non_autonomic(), ta],
        _ => unreachable!("not a Triple-A trace experiment"),
    }
}

/// Where the reproductions find the trace excerpts: `$SWAN_TRACES`, else `data/traces` here,
/// else the repository's.
pub(crate) fn traces_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SWAN_TRACES") {
        return dir.into();
    }
    let here = PathBuf::from("data/traces");
    if here.is_dir() {
        return here;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/traces")
}

pub fn run(args: &ReproArgs, exp: &str) -> anyhow::Result<()> {
    let dir = traces_dir();
    let workloads: Vec<TraceWorkload> = WORKLOADS
        .iter()
        .map(|w| {
            TraceWorkload::open(&dir.join(w.file), None, TRACE_DEPTH)
                .with_context(|| format!("the {} trace (set SWAN_TRACES to the traces directory)", w.name))
        })
        .collect::<anyhow::Result<_>>()?;
    let arrays = arrays(args.experiment);
    let cells: Vec<Cell> = (0..WORKLOADS.len())
        .flat_map(|w| arrays.iter().map(move |&autonomic| Cell { workload: w, autonomic }))
        .collect();
    let seeds = args.seeds.unwrap_or(3);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(exp));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    println!(
        "swan repro {exp}: {} workloads × {} arrays × {seeds} seeds on 4x16, each trace in a closed loop of depth \
         {TRACE_DEPTH} (calibrated on Table 2's hm row), its order kept and timestamps ignored, looped; {SECONDS} \
         simulated s measured from {MEASURE_FROM_S} s; each seed puts the trace at another chunk of the array \
         (results in {})",
        WORKLOADS.len(),
        arrays.len(),
        out.display()
    );
    for (w, t) in WORKLOADS.iter().zip(&workloads) {
        println!(
            "  {:<8} {}: {} ({} requests a pass, {:.0} % reads)",
            w.name,
            w.file,
            w.about,
            t.requests_per_pass(),
            100.0 * t.read_fraction()
        );
    }
    println!("  not run, no trace reachable from this machine: {NOT_HERE}");
    let name = |cell: &Cell| format!("{} / {}", WORKLOADS[cell.workload].name, management_label(&cell.autonomic));
    let by_cell = run_cells(&cells, seeds, args, &out, name, |cell, seed| {
        let mut cfg = TripleAConfig::new(preset("4x16").expect("a preset"), cell.autonomic, SECONDS);
        cfg.measure_from_s = MEASURE_FROM_S;
        Ok(TripleADriver::trace(cfg, &workloads[cell.workload], seed)?.run()?)
    })?;
    let per = arrays.len();
    let at = |w: usize, a: usize| &by_cell[w * per + a][..];
    println!();
    match args.experiment {
        Experiment::TripleATable2 => table2(&at),
        Experiment::TripleAFig9 => fig9(&at, &arrays),
        Experiment::TripleAFig10 => fig10(&at),
        Experiment::TripleAFig11 => fig11(&at),
        _ => unreachable!("not a Triple-A trace experiment"),
    }
    Ok(())
}

type At<'a> = dyn Fn(usize, usize) -> &'a [TripleAReport] + 'a;

fn lat(r: &TripleAReport) -> f64 {
    r.latency_us.mean
}

fn kiops(r: &TripleAReport) -> f64 {
    r.iops / 1e3
}

/// Array `a`'s measure over the baseline's (array 0), seed by seed: mean, min, max.
fn normalised(at: &At, w: usize, a: usize, f: fn(&TripleAReport) -> f64) -> (f64, f64, f64) {
    let v: Vec<f64> = at(w, a).iter().zip(at(w, 0)).map(|(r, b)| f(r) / f(b)).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (mean, v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "agrees"
    } else {
        "DISAGREES"
    }
}

fn table2(at: &At) {
    println!(
        "{:<9} {:>22} {:>20} {:>9} {:>9} {:>9}   {:>8} {:>7} {:>6} {:>8} {:>6}",
        "workload",
        "latency µs (min–max)",
        "kIOPS (min–max)",
        "link",
        "storage",
        "stall",
        "paper: µs",
        "kIOPS",
        "link",
        "storage",
        "stall"
    );
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let rs = at(w, 0);
        let (l, llo, lhi) = stat(rs, lat);
        let (k, klo, khi) = stat(rs, kiops);
        let m = |f: fn(&TripleAReport) -> f64| stat(rs, f).0;
        let paper = wl.paper.map_or("   (not in Table 2)".to_string(), |p| {
            format!(
                "{:>11.0} {:>7.0} {:>6.0} {:>8.0} {:>6.0}",
                p.latency_us, p.kiops, p.link_us, p.storage_us, p.stall_us
            )
        });
        println!(
            "{:<9} {:>7.0} ({:>5.0}–{:<5.0}) {:>7.1} ({:>4.1}–{:<4.1}) {:>9.0} {:>9.0} {:>9.0} {paper}",
            wl.name,
            l,
            llo,
            lhi,
            k,
            klo,
            khi,
            m(|r| r.link_contention_us),
            m(|r| r.storage_contention_us),
            m(|r| r.queue_stall_us.total),
        );
    }
    println!("(4x16 non-autonomic array; means over seeds; contention and stall in µs per request)");
    println!();
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let Some(p) = wl.paper else { continue };
        let rs = at(w, 0);
        let m = |f: fn(&TripleAReport) -> f64| stat(rs, f).0;
        let (link, storage) = (m(|r| r.link_contention_us), m(|r| r.storage_contention_us));
        println!(
            "Table 2 {}: latency {:.2}×, IOPS {:.2}× the paper's; link {:.0} % and storage {:.0} % of the stall \
             (paper: {:.0} % and {:.0} %) — {}",
            wl.name,
            m(lat) / p.latency_us,
            m(kiops) / p.kiops,
            100.0 * link / (link + storage),
            100.0 * storage / (link + storage),
            100.0 * p.link_us / p.stall_us,
            100.0 * p.storage_us / p.stall_us,
            verdict((0.8..1.25).contains(&(m(lat) / p.latency_us)) && (0.8..1.25).contains(&(m(kiops) / p.kiops)))
        );
    }
    println!(
        "In flight (latency × IOPS): paper hm {:.0}, web {:.0} requests; swan's closed loop keeps {TRACE_DEPTH}",
        1806e-6 * 112e3,
        1148e-6 * 181e3
    );
}

fn fig9(at: &At, arrays: &[AutonomicConfig]) {
    println!(
        "{:<9} {:<16} {:>26} {:>26}",
        "workload", "array", "latency / baseline (min–max)", "IOPS / baseline (min–max)"
    );
    for (w, wl) in WORKLOADS.iter().enumerate() {
        for (a, cfg) in arrays.iter().enumerate().skip(1) {
            let (l, llo, lhi) = normalised(at, w, a, lat);
            let (k, klo, khi) = normalised(at, w, a, kiops);
            println!(
                "{:<9} {:<16} {:>12.2} ({:.2}–{:.2}) {:>14.2} ({:.2}–{:.2})",
                wl.name,
                management_label(cfg),
                l,
                llo,
                lhi,
                k,
                klo,
                khi
            );
        }
    }
    println!(
        "(baseline: the non-autonomic array; migration-only and reshaping-only are swan's ablation, not in the paper)"
    );
    println!();
    let n = WORKLOADS.len() as f64;
    let avg = |f: fn(&TripleAReport) -> f64| (0..WORKLOADS.len()).map(|w| normalised(at, w, 1, f).0).sum::<f64>() / n;
    let (l, k) = (avg(lat), avg(kiops));
    println!(
        "Fig. 9 Triple-A on average over {} workloads: latency {l:.2}× ({}), IOPS {k:.2}× — paper: 5× shorter \
         latency, about 2× IOPS on average (over its 11 workloads): latency {}, IOPS {}",
        WORKLOADS.len(),
        if l < 1.0 { format!("{:.1}× shorter", 1.0 / l) } else { format!("{l:.1}× longer") },
        verdict(l < 0.5),
        verdict(k > 1.5)
    );
    let web = WORKLOADS.iter().position(|w| w.name == "web").expect("web is a workload");
    let (wl, wk) = (normalised(at, web, 1, lat).0, normalised(at, web, 1, kiops).0);
    println!(
        "Fig. 9 web: latency {wl:.2}×, IOPS {wk:.2}× — paper: no gain where there is no significant contention (cfs, \
         web): {}",
        verdict((0.9..1.1).contains(&wl) && (0.9..1.1).contains(&wk))
    );
}

fn fig10(at: &At) {
    println!(
        "{:<9} {:>26} {:>26} {:>26}   {:>9} {:>9} {:>9}",
        "workload",
        "link cont. (min–max)",
        "storage cont. (min–max)",
        "queue stall (min–max)",
        "link µs",
        "storage",
        "stall"
    );
    let link = |r: &TripleAReport| r.link_contention_us;
    let storage = |r: &TripleAReport| r.storage_contention_us;
    let stall = |r: &TripleAReport| r.queue_stall_us.total;
    let cell = |v: (f64, f64, f64)| format!("{:.2} ({:.2}–{:.2})", v.0, v.1, v.2);
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let base = |f: fn(&TripleAReport) -> f64| stat(at(w, 0), f).0;
        println!(
            "{:<9} {:>26} {:>26} {:>26}   {:>9.0} {:>9.0} {:>9.0}",
            wl.name,
            cell(normalised(at, w, 1, link)),
            cell(normalised(at, w, 1, storage)),
            cell(normalised(at, w, 1, stall)),
            base(link),
            base(storage),
            base(stall)
        );
    }
    println!("(Triple-A over the non-autonomic array, seed by seed; the last three columns: the baseline's means)");
    println!();
    let n = WORKLOADS.len() as f64;
    let avg = |f: fn(&TripleAReport) -> f64| (0..WORKLOADS.len()).map(|w| normalised(at, w, 1, f).0).sum::<f64>() / n;
    let (l, s, q) = (avg(link), avg(storage), avg(stall));
    println!("Fig. 10a link contention, average {l:.2}× — paper: dramatically reduced: {}", verdict(l < 0.5));
    println!(
        "Fig. 10b storage contention, average {s:.2}× — paper: reduced by only 15 % (0.85×): {}",
        verdict((0.7..1.0).contains(&s))
    );
    println!("Fig. 10c queue stall, average {q:.2}× — paper: about 85 % shorter (0.15×): {}", verdict(q < 0.3));
}

fn fig11(at: &At) {
    let quantiles: Vec<f64> = at(0, 0)[0].cdf_us.iter().map(|&(p, _)| p).collect();
    let head: Vec<String> = quantiles.iter().map(|p| format!("{:>8}", format!("p{}", p * 100.0))).collect();
    println!("{:<9} {:<14} {} {:>8}", "workload", "array", head.join(" "), "max");
    let q = |rs: &[TripleAReport], i: usize| rs.iter().map(|r| r.cdf_us[i].1 as f64).sum::<f64>() / rs.len() as f64;
    for (w, wl) in WORKLOADS.iter().enumerate() {
        for a in 0..2 {
            let rs = at(w, a);
            let row: Vec<String> = (0..quantiles.len()).map(|i| format!("{:>8.0}", q(rs, i))).collect();
            println!(
                "{:<9} {:<14} {} {:>8.0}",
                wl.name,
                rs[0].label,
                row.join(" "),
                stat(rs, |r| r.latency_us.max as f64).0
            );
        }
    }
    println!("(latency in µs at each quantile, means over seeds: the CDF's points)");
    println!();
    for (w, wl) in WORKLOADS.iter().enumerate() {
        let (base, ta) = (at(w, 0), at(w, 1));
        let shorter = (0..quantiles.len()).filter(|&i| q(ta, i) < q(base, i)).count();
        let tail = quantiles.iter().position(|&p| p >= 0.99).expect("a p99 point");
        let tail_r = q(ta, tail) / q(base, tail);
        println!(
            "Fig. 11 {}: Triple-A shorter at {shorter} of {} quantiles, p99 {tail_r:.2}× — paper: shortens a large \
             portion of latencies, the long tail significantly improved: {}",
            wl.name,
            quantiles.len(),
            verdict(2 * shorter > quantiles.len() && tail_r < 0.8)
        );
    }
}
