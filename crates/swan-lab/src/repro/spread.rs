//! `swan repro ssd-spread`: SWAN's Fig. 4(a)/(b) and Fig. 5 on SSDs that are not identical.
//!
//! The paper explains Log-RAID0's fall from 3 to 9 SSDs (Fig. 4(b)) by "the slowest SSD".
//! Here every run of `fig4b` and the uncapped runs of `fig5` are repeated with Hao et al.'s
//! field variation ([`Variation::TAIL_AT_STORE`]) under several seeds, beside one run of
//! each on identical SSDs. The cause is measured, not assumed: each run's slowest SSD, how
//! busy its flash was against the median SSD's, and how close the array comes to the
//! throughput the slowest SSDs allow (a striped log waits for its slowest member on every
//! stripe; SWAN's front-end waits for the slowest member of the R-group it is writing).

use crate::claims::Measures;
use crate::experiments;
use crate::repro::args::ReproArgs;
use crate::repro::min_max;
use crate::runner::{default_parallelism, run_all, Job};
use anyhow::Context;
use std::path::PathBuf;
use swan_core::scheme::SchemeKind;
use swan_models::ssd::Variation;
use swan_sim::engine::SimConfig;
use swan_sim::output::RunSummary;

/// The runs of one cell: a figure, a scheme and an SSD count.
fn cells(scale: experiments::Scale, seed: u64) -> Vec<(&'static str, SimConfig)> {
    let fig4b = experiments::fig4b(scale, seed).into_iter().map(|c| ("4(b)", c));
    let fig5 = experiments::fig5(scale, seed).into_iter().filter(|c| c.network_mbps == 0).map(|c| ("4(a)/5", c));
    fig4b.chain(fig5).collect()
}

fn label(fig: &str, cfg: &SimConfig, varied: bool) -> String {
    let a = &cfg.array;
    let shape = match a.kind {
        SchemeKind::Swan(_) => format!("{}R-{}SSD", a.rgroups, a.ssds_per_rgroup),
        _ => format!("{}SSD", a.members()),
    };
    let fig = if fig == "4(b)" { "fig4b" } else { "fig5" };
    let ssds = if varied { format!("varied-seed{}", cfg.seed) } else { "identical".into() };
    format!("{fig}-{}-{shape}-{ssds}", a.kind)
}

fn sustained(s: &RunSummary) -> f64 {
    s.user_write_mbps_after_gc_mean.unwrap_or(s.user_write_mbps_mean)
}

/// What limits a run: the SSDs' speed factors as the scheme meets them.
struct Cause {
    /// The slowest SSD's factor.
    slowest: f64,
    /// Whether the busiest SSD's flash is the slowest SSD's.
    busiest_is_slowest: bool,
    /// The slowest SSD's flash busy fraction, and the median SSD's.
    slowest_busy: f64,
    median_busy: f64,
    /// Throughput on identical SSDs divided by the slowdown the scheme should see from its
    /// slowest members: the largest factor for a striped log or in-place stripe; for SWAN,
    /// the mean over R-groups of each group's largest factor (the front-end writes one
    /// segment into each R-group in turn, at the pace of its slowest member).
    slowdown: f64,
}

fn cause(s: &RunSummary) -> Cause {
    let load = &s.ssd_load;
    let factors: Vec<f64> = load.iter().map(|l| l.speed_factor).collect();
    let argmax = |v: &[f64]| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap_or(0);
    let slowest_i = argmax(&factors);
    let busy: Vec<f64> = load.iter().map(|l| l.die_busy).collect();
    let mut sorted = busy.clone();
    sorted.sort_by(f64::total_cmp);
    let a = &s.options.array;
    let slowdown = match a.kind {
        SchemeKind::Swan(_) => {
            let k = a.ssds_per_rgroup as usize;
            let maxima: Vec<f64> = factors.chunks(k).map(|g| g.iter().copied().fold(0.0, f64::max)).collect();
            maxima.iter().sum::<f64>() / maxima.len() as f64
        }
        _ => factors[slowest_i],
    };
    Cause {
        slowest: factors[slowest_i],
        busiest_is_slowest: argmax(&busy) == slowest_i,
        slowest_busy: busy[slowest_i],
        median_busy: sorted[sorted.len() / 2],
        slowdown,
    }
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let scale = args.scale();
    let seeds = args.seeds.unwrap_or(3);
    if seeds == 0 {
        anyhow::bail!("--seeds 0: give at least one seed");
    }
    let variation = Variation::TAIL_AT_STORE;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join("ssd-spread"));
    let mut jobs = Vec::new();
    for (fig, cfg) in cells(scale, args.seed) {
        let name = label(fig, &cfg, false);
        jobs.push(Job { dir: out.join(&name), name, cfg });
    }
    for seed in args.seed..args.seed + seeds {
        for (fig, mut cfg) in cells(scale, seed) {
            cfg.ssd_variation = variation;
            let name = label(fig, &cfg, true);
            jobs.push(Job { dir: out.join(&name), name, cfg });
        }
    }
    println!(
        "swan repro ssd-spread: {} runs, SSDs of {} GiB, footprint {}× capacity; identical SSDs (seed {}) and \
         varied SSDs (seeds {}..={}): speed spread σ = {}, slow {} % of the time at {}× in periods of {} ms on \
         average (results in {})",
        jobs.len(),
        scale.ssd_gib,
        scale.footprint,
        args.seed,
        args.seed,
        args.seed + seeds - 1,
        variation.speed_spread,
        variation.slow_fraction * 100.0,
        variation.slow_factor,
        variation.slow_period_ms,
        out.display()
    );
    let summaries = run_all(&jobs, args.jobs.unwrap_or_else(default_parallelism), args.quiet)?;
    let figs: Vec<&str> = jobs.iter().map(|j| if j.name.starts_with("fig4b") { "4(b)" } else { "4(a)/5" }).collect();
    print_runs(&summaries, &figs);
    let cells = summarise(&summaries, &figs);
    print_cells(&cells);
    let fronts = print_front_groups(&summaries, &jobs)?;
    println!();
    for c in causes(&cells) {
        println!("{c}");
    }
    println!(
        "cause of SWAN0's wider swings: in {} of {} varied SWAN0 runs the R-group with the slowest SSD writes slowest \
         while it is the front-end",
        fronts.0, fronts.1
    );
    crate::claims::publish(&out, &measures(&cells))?;
    Ok(())
}

/// SWAN0 on varied SSDs: user write throughput over the intervals after GC onset in which
/// each R-group was the front-end, beside its slowest SSD. Returns in how many runs the
/// R-group with the slowest SSD was the slowest front-end, and of how many runs.
fn print_front_groups(s: &[RunSummary], jobs: &[Job]) -> anyhow::Result<(usize, usize)> {
    println!(
        "\nSWAN0 on varied SSDs, after GC onset: each R-group's slowest SSD → user MB/s while it is the front-end"
    );
    let (mut matched, mut runs) = (0, 0);
    for (r, job) in s.iter().zip(jobs) {
        if r.options.ssd_variation.is_off() || !matches!(r.options.array.kind, SchemeKind::Swan(_)) {
            continue;
        }
        let run = swan_sim::report::load_run(&job.dir)?;
        let ts = run.timeseries.as_ref().ok_or_else(|| anyhow::anyhow!("{} has no time series", job.dir.display()))?;
        let front = super::front_groups(ts).with_context(|| job.dir.display().to_string())?;
        let Some(mbps) = ts.numeric("user_write_mbps") else {
            anyhow::bail!("{}: the time series has no user_write_mbps", job.dir.display());
        };
        let t = ts.time();
        let k = r.options.array.ssds_per_rgroup as usize;
        let groups = r.options.array.rgroups as usize;
        let slowest: Vec<f64> =
            r.ssd_load.chunks(k).map(|g| g.iter().map(|l| l.speed_factor).fold(0.0, f64::max)).collect();
        let onset = r.gc_onset_s.unwrap_or(0.0);
        let mut sum = vec![(0.0, 0usize); groups];
        for row in 0..ts.len() {
            let (Some(g), Some(m)) = (front[row], mbps[row]) else { continue };
            if t[row] > onset && g < groups {
                sum[g].0 += m;
                sum[g].1 += 1;
            }
        }
        let mean: Vec<f64> = sum.iter().map(|&(x, n)| if n > 0 { x / n as f64 } else { f64::NAN }).collect();
        let argmax = |v: &[f64]| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap_or(0);
        let argmin = |v: &[f64]| (0..v.len()).min_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap_or(0);
        runs += 1;
        matched += usize::from(argmax(&slowest) == argmin(&mean));
        let cells: Vec<String> = slowest.iter().zip(&mean).map(|(f, m)| format!("{f:.2}× → {m:.0}")).collect();
        println!("  {} {} SSDs seed {}: {}", r.scheme, r.options.array.members(), r.seed, cells.join(", "));
    }
    Ok((matched, runs))
}

fn print_runs(s: &[RunSummary], figs: &[&str]) {
    println!(
        "\n{:<7} {:<9} {:>4} {:>9} {:>9} {:>7} {:>8} {:>13} {:>9} {:>10} {:>9}",
        "Fig.",
        "scheme",
        "SSDs",
        "seed",
        "after GC",
        "CV",
        "slowest",
        "busiest=slow",
        "its busy",
        "median busy",
        "÷ slowdown"
    );
    for (r, fig) in s.iter().zip(figs) {
        let c = cause(r);
        let varied = !r.options.ssd_variation.is_off();
        println!(
            "{:<7} {:<9} {:>4} {:>9} {:>9.0} {:>6.1}% {:>7.2}× {:>13} {:>8.0}% {:>10.0}% {:>9.2}",
            fig,
            r.scheme,
            r.options.array.members(),
            if varied { r.seed.to_string() } else { "identical".into() },
            sustained(r),
            r.user_write_mbps_after_gc_cv.unwrap_or(0.0) * 100.0,
            c.slowest,
            if varied {
                if c.busiest_is_slowest {
                    "yes"
                } else {
                    "no"
                }
            } else {
                "-"
            },
            c.slowest_busy * 100.0,
            c.median_busy * 100.0,
            c.slowdown,
        );
    }
}

/// One figure's scheme at one SSD count: identical SSDs against the varied seeds.
struct Cell {
    fig: String,
    scheme: String,
    ssds: u32,
    identical: f64,
    identical_cv: f64,
    varied: Vec<f64>,
    varied_cv: Vec<f64>,
    /// Per varied seed: measured throughput over identical ÷ slowdown.
    explained: Vec<f64>,
    busiest_is_slowest: usize,
}

impl Cell {
    fn mean(&self) -> f64 {
        self.varied.iter().sum::<f64>() / self.varied.len() as f64
    }
}

fn summarise(s: &[RunSummary], figs: &[&str]) -> Vec<Cell> {
    let mut cells: Vec<Cell> = Vec::new();
    for (r, fig) in s.iter().zip(figs) {
        let key = (fig.to_string(), r.scheme.clone(), r.options.array.members());
        if r.options.ssd_variation.is_off() {
            cells.push(Cell {
                fig: key.0,
                scheme: key.1,
                ssds: key.2,
                identical: sustained(r),
                identical_cv: r.user_write_mbps_after_gc_cv.unwrap_or(0.0),
                varied: Vec::new(),
                varied_cv: Vec::new(),
                explained: Vec::new(),
                busiest_is_slowest: 0,
            });
            continue;
        }
        let Some(cell) = cells.iter_mut().find(|c| (c.fig.clone(), c.scheme.clone(), c.ssds) == key) else {
            continue;
        };
        let c = cause(r);
        cell.varied.push(sustained(r));
        cell.varied_cv.push(r.user_write_mbps_after_gc_cv.unwrap_or(0.0));
        cell.explained.push(sustained(r) / (cell.identical / c.slowdown));
        cell.busiest_is_slowest += usize::from(c.busiest_is_slowest);
    }
    cells
}

fn print_cells(cells: &[Cell]) {
    println!(
        "\n{:<7} {:<9} {:>4} {:>10} {:>22} {:>8} {:>15} {:>17} {:>13}",
        "Fig.",
        "scheme",
        "SSDs",
        "identical",
        "varied mean (min–max)",
        "varied÷id",
        "CV id → varied",
        "measured÷expected",
        "busiest=slow"
    );
    for c in cells {
        let (lo, hi) = min_max(&c.varied);
        let cv = c.varied_cv.iter().sum::<f64>() / c.varied_cv.len().max(1) as f64;
        let (elo, ehi) = min_max(&c.explained);
        println!(
            "{:<7} {:<9} {:>4} {:>10.0} {:>22} {:>8.2} {:>15} {:>17} {:>13}",
            c.fig,
            c.scheme,
            c.ssds,
            c.identical,
            format!("{:.0} ({:.0}–{:.0})", c.mean(), lo, hi),
            c.mean() / c.identical,
            format!("{:.1} → {:.1} %", c.identical_cv * 100.0, cv * 100.0),
            format!("{elo:.2}–{ehi:.2}"),
            format!("{}/{}", c.busiest_is_slowest, c.varied.len()),
        );
    }
}

/// The causes the cells show, in words: what variation costs each scheme and how often the
/// slowest SSD is the busiest. (The verdicts are the claims', from [`measures`].)
fn causes(cells: &[Cell]) -> Vec<String> {
    let find =
        |fig: &str, scheme: &str, n: u32| cells.iter().find(|c| c.fig == fig && c.scheme == scheme && c.ssds == n);
    let series = |scheme: &str| -> Vec<&Cell> { [3, 6, 9].iter().filter_map(|&n| find("4(b)", scheme, n)).collect() };
    let mut out = Vec::new();
    let (log, swan) = (series("lograid0"), series("swan0"));
    if log.len() == 3 && swan.len() == 3 {
        let seeds = log[0].varied.len();
        let falls_in =
            (0..seeds).filter(|&i| log[0].varied[i] > log[1].varied[i] && log[1].varied[i] > log[2].varied[i]).count();
        let cost = |v: &[&Cell]| {
            v.iter().map(|c| format!("{:.0} %", (1.0 - c.mean() / c.identical) * 100.0)).collect::<Vec<_>>().join(" → ")
        };
        out.push(format!(
            "cause: Fig. 4(b), varied SSDs: Log-RAID0 falls at every step in {falls_in} of {seeds} seeds; against identical \
             SSDs, variation costs Log-RAID0 {} and SWAN0 {} (3 → 6 → 9 SSDs); the slowest SSD is the busiest in {} of {} \
             Log-RAID0 runs",
            cost(&log),
            cost(&swan),
            log.iter().map(|c| c.busiest_is_slowest).sum::<usize>(),
            log.iter().map(|c| c.varied.len()).sum::<usize>()
        ));
    }
    out
}

/// What `swan repro ssd-spread` measured on varied SSDs, per seed, for the claims in
/// [`crate::claims::swan`] (Fig. 4(a), 4(b) and 5(b) with SSDs that vary as in the field).
fn measures(cells: &[Cell]) -> Measures {
    let mut m = Measures::new("ssd-spread");
    for c in cells {
        let (scheme, label) = match c.scheme.as_str() {
            "raid0" => ("raid0", "RAID0"),
            "lograid0" => ("lograid0", "Log-RAID0"),
            _ => ("swan0", "SWAN0"),
        };
        let n = c.ssds;
        m.set_seeds(&format!("{scheme}.{n}.varied_mbps"), &format!("{n} SSDs"), "MB/s", &c.varied);
        m.set(&format!("{scheme}.{n}.identical_mbps"), &format!("{label} on {n} identical"), "MB/s", c.identical);
        if n == 8 {
            m.set_seeds(&format!("{scheme}.8.varied_cv"), &format!("{label}'s CV, varied"), "%", &c.varied_cv);
            m.set(&format!("{scheme}.8.identical_cv"), "identical", "%", c.identical_cv);
        }
    }
    let log: Vec<&Cell> = cells.iter().filter(|c| c.scheme == "lograid0" && c.fig == "4(b)").collect();
    let runs: usize = log.iter().map(|c| c.varied.len()).sum();
    let busiest: usize = log.iter().map(|c| c.busiest_is_slowest).sum();
    if runs > 0 {
        m.set(
            "lograid0.busiest_is_slowest",
            "Log-RAID0 runs whose slowest SSD is the busiest",
            "%",
            busiest as f64 / runs as f64,
        );
    }
    m
}
