//! `swan repro`: the paper's figures as runs, a comparison table, the paper's claims checked
//! against what swan measured, and the pictures. Also `swan bench`.

mod apas;
mod apas_sweep;
mod apas_why;
pub mod args;
mod fig12;
mod harmonia;
mod harmonia_drives;
mod harmonia_length;
mod read_rules;
mod spread;
mod triple_a;
mod triple_a_arrays;
mod triple_a_gc;
mod triple_a_traces;
mod ycsb;
mod zapraid;
mod zoned;

use crate::claims::Measures;
use crate::experiments::{self, Scale};
use crate::repro::args::{Experiment, ReproArgs};
use crate::runner::{default_parallelism, print_table, run_all, run_all_recording, Job};
use std::path::PathBuf;
use swan_sim::output::RunSummary;
use swan_sim::report::{ReportOptions, TimeSeries};

fn name(e: Experiment) -> &'static str {
    match e {
        Experiment::Fig5 => "fig5",
        Experiment::Fig4b => "fig4b",
        Experiment::SsdSpread => "ssd-spread",
        Experiment::Ycsb => "ycsb",
        Experiment::Fig12 => "fig12",
        Experiment::SimpleSsd => "simple-ssd",
        Experiment::ReadRules => "read-rules",
        Experiment::HarmoniaHpc => "harmonia-hpc",
        Experiment::HarmoniaFig7 => "harmonia-fig7",
        Experiment::HarmoniaFig8 => "harmonia-fig8",
        Experiment::HarmoniaFig9 => "harmonia-fig9",
        Experiment::HarmoniaBound => "harmonia-bound",
        Experiment::HarmoniaWarmup => "harmonia-warmup",
        Experiment::HarmoniaLength => "harmonia-length",
        Experiment::HarmoniaDrives => "harmonia-drives",
        Experiment::TripleAFig12 => "triple-a-fig12",
        Experiment::TripleAFig13 => "triple-a-fig13",
        Experiment::TripleAFig16 => "triple-a-fig16",
        Experiment::TripleATable2 => "triple-a-table2",
        Experiment::TripleAFig9 => "triple-a-fig9",
        Experiment::TripleAFig10 => "triple-a-fig10",
        Experiment::TripleAFig11 => "triple-a-fig11",
        Experiment::TripleAGc => "triple-a-gc",
        Experiment::TripleAArrays => "triple-a-arrays",
        Experiment::ApasFig3 => "apas-fig3",
        Experiment::ApasFig4 => "apas-fig4",
        Experiment::ApasFig5 => "apas-fig5",
        Experiment::ApasSweep => "apas-sweep",
        Experiment::ApasWhy => "apas-why",
        Experiment::Zoned => "zoned",
        Experiment::Zapraid => "zapraid",
    }
}

/// The mean of a reproduction's values over seeds (0 for none).
pub(crate) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The least and the greatest of a reproduction's values over seeds.
pub(crate) fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

fn run_label(s: &swan_sim::engine::SimConfig) -> String {
    let a = &s.array;
    let shape = match a.kind {
        swan_core::scheme::SchemeKind::Swan(_) => format!("{}R-{}SSD", a.rgroups, a.ssds_per_rgroup),
        _ => format!("{}SSD", a.members()),
    };
    let ftl = if s.ssd.name.contains("block") { "-blockftl" } else { "" };
    let net = if s.network_mbps > 0 { format!("-net{}", s.network_mbps) } else { String::new() };
    format!("{}-{shape}{ftl}{net}", a.kind)
}

pub fn run(args: &ReproArgs) -> anyhow::Result<()> {
    let swan_experiment =
        matches!(args.experiment, Experiment::Fig5 | Experiment::Fig4b | Experiment::Fig12 | Experiment::SimpleSsd);
    if args.age_spread != 0.0 && !swan_experiment {
        anyhow::bail!("--age-spread applies to the SWAN reproductions (fig5, fig4b, fig12, simple-ssd)");
    }
    if !(0.0..=1.0).contains(&args.age_spread) {
        anyhow::bail!("--age-spread {} is not a share between 0 and 1", args.age_spread);
    }
    if matches!(
        args.experiment,
        Experiment::HarmoniaHpc
            | Experiment::HarmoniaFig7
            | Experiment::HarmoniaFig8
            | Experiment::HarmoniaFig9
            | Experiment::HarmoniaBound
            | Experiment::HarmoniaWarmup
    ) {
        return crate::repro::harmonia::run(args);
    }
    if args.experiment == Experiment::HarmoniaLength {
        return crate::repro::harmonia_length::run(args);
    }
    if args.experiment == Experiment::HarmoniaDrives {
        return crate::repro::harmonia_drives::run(args);
    }
    if matches!(args.experiment, Experiment::TripleAFig12 | Experiment::TripleAFig13 | Experiment::TripleAFig16) {
        return crate::repro::triple_a::run(args, name(args.experiment));
    }
    if matches!(
        args.experiment,
        Experiment::TripleATable2 | Experiment::TripleAFig9 | Experiment::TripleAFig10 | Experiment::TripleAFig11
    ) {
        return crate::repro::triple_a_traces::run(args, name(args.experiment));
    }
    if args.experiment == Experiment::TripleAArrays {
        return crate::repro::triple_a_arrays::run(args, name(args.experiment));
    }
    if args.experiment == Experiment::TripleAGc {
        return crate::repro::triple_a_gc::run(args, name(args.experiment));
    }
    if matches!(args.experiment, Experiment::ApasFig3 | Experiment::ApasFig4 | Experiment::ApasFig5) {
        return crate::repro::apas::run(args, name(args.experiment));
    }
    if args.experiment == Experiment::ApasSweep {
        return crate::repro::apas_sweep::run(args);
    }
    if args.experiment == Experiment::ApasWhy {
        return crate::repro::apas_why::run(args);
    }
    if args.experiment == Experiment::Zoned {
        return crate::repro::zoned::run(args);
    }
    if args.experiment == Experiment::Zapraid {
        return crate::repro::zapraid::run(args);
    }
    if args.experiment == Experiment::SsdSpread {
        return crate::repro::spread::run(args);
    }
    if args.experiment == Experiment::Ycsb {
        return crate::repro::ycsb::run(args);
    }
    if args.experiment == Experiment::ReadRules {
        return crate::repro::read_rules::run(args);
    }
    if args.seeds.is_some_and(|n| n != 1) {
        anyhow::bail!("--seeds applies to the Harmonia reproductions; the SWAN ones run one seed (--seed)");
    }
    let scale = args.scale();
    let exp = name(args.experiment);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("out").join(exp));
    let mut configs = match args.experiment {
        Experiment::Fig5 => experiments::fig5(scale, args.seed),
        Experiment::Fig4b => experiments::fig4b(scale, args.seed),
        Experiment::Fig12 => experiments::fig12(scale, args.seed),
        Experiment::SimpleSsd => experiments::simple_ssd(scale, args.seed),
        _ => unreachable!("Harmonia, Triple-A, Apas and the other SWAN experiments returned above"),
    };
    let host = match args.experiment {
        Experiment::Fig5 | Experiment::Fig4b => Some(args.host_model()?),
        _ if args.host.is_some() => anyhow::bail!("--host applies to fig5, fig4b and ycsb"),
        _ => None,
    };
    for cfg in &mut configs {
        cfg.age_spread = args.age_spread;
        if let Some(h) = &host {
            cfg.host = h.clone();
        }
    }
    // Report the SSD size the runs really use (an experiment may need larger SSDs).
    let ssd_gib = configs.first().map_or(scale.ssd_gib, |c| c.ssd.user_pages as f64 / 262_144.0);
    let footprint = configs.first().and_then(|c| {
        let raw = u64::from(c.array.members()) * c.ssd.user_pages * swan_core::BLOCK_BYTES;
        c.stop.write_bytes.map(|b| b as f64 / raw as f64)
    });
    println!(
        "swan repro {exp}: {} runs, SSDs of {} GiB, footprint {}× capacity, seed {}{}{} (results in {})",
        configs.len(),
        ssd_gib,
        footprint.unwrap_or(scale.footprint),
        args.seed,
        if args.age_spread > 0.0 { format!(", SSD ages spread by {}", args.age_spread) } else { String::new() },
        if host.is_some() { format!(", {}", args.host_label()) } else { String::new() },
        out.display()
    );
    let jobs: Vec<Job> = configs
        .into_iter()
        .map(|cfg| {
            let label = run_label(&cfg);
            Job { dir: out.join(&label), name: label, cfg }
        })
        .collect();
    let parallel = args.jobs.unwrap_or_else(default_parallelism);
    // Fig. 12 as the paper measured it: every SSD's I/O recorded, to be replayed alone.
    let summaries = if args.experiment == Experiment::Fig12 {
        run_all_recording(&jobs, parallel, args.quiet)?
    } else {
        run_all(&jobs, parallel, args.quiet)?
    };
    print_table(&summaries);
    let dirs: Vec<PathBuf> = jobs.iter().map(|j| j.dir.clone()).collect();
    let measures = match args.experiment {
        Experiment::Fig5 => fig5_measures(&summaries, &dirs)?,
        Experiment::Fig4b => fig4b_measures(&summaries),
        Experiment::Fig12 => {
            let replays = fig12::replay_runs(&summaries, &dirs, parallel)?;
            fig12::print(&replays)?;
            let mut m = fig12_measures(&summaries);
            fig12::measures(&mut m, &replays);
            m
        }
        Experiment::SimpleSsd => simple_ssd_measures(&summaries),
        _ => unreachable!("Harmonia, Triple-A, Apas and the other SWAN experiments returned above"),
    };
    crate::claims::publish(&out, &measures)?;
    let figures = out.join("figures");
    let written = swan_sim::report::draw(&dirs, &ReportOptions { out_dir: figures.clone(), format: args.format })?;
    println!("\nfigures written to {}:", figures.display());
    for p in written {
        println!("  {}", p.display());
    }
    Ok(())
}

fn find<'a>(s: &'a [RunSummary], scheme: &str, ssds: u32) -> Option<&'a RunSummary> {
    find_net(s, scheme, ssds, 0)
}

fn find_net<'a>(s: &'a [RunSummary], scheme: &str, ssds: u32, network_mbps: u64) -> Option<&'a RunSummary> {
    s.iter().find(|x| x.scheme == scheme && x.options.array.members() == ssds && x.options.network_mbps == network_mbps)
}

fn sustained(s: &RunSummary) -> f64 {
    s.user_write_mbps_after_gc_mean.unwrap_or(s.user_write_mbps_mean)
}

/// The time series of summary `s`'s run, from its directory among `dirs` (same order as
/// the summaries), read once for every measure taken from it.
fn timeseries(summaries: &[RunSummary], dirs: &[PathBuf], s: &RunSummary) -> anyhow::Result<TimeSeries> {
    let i = summaries.iter().position(|x| std::ptr::eq(x, s)).expect("summary of this repro");
    let run = swan_sim::report::load_run(&dirs[i])?;
    run.timeseries.ok_or_else(|| anyhow::anyhow!("{} has no time series", dirs[i].display()))
}

/// Fig. 6: share of array-GC read traffic that landed on the front-end R-group's SSDs
/// (SWAN: should be ~0), and share of post-onset intervals in which *every* SSD read for GC
/// (Log-RAID: should be high).
fn gc_read_placement(ts: &TimeSeries, ssds_per_group: usize) -> anyhow::Result<(f64, f64)> {
    let n = ts.num_ssds();
    let front = front_groups(ts)?;
    let cols: Vec<&[Option<f64>]> = (0..n).filter_map(|i| ts.ssd_column(i, "gc_read_mbps")).collect();
    let (mut on_front, mut total, mut all_read, mut gc_rows) = (0.0, 0.0, 0usize, 0usize);
    for row in 0..ts.len() {
        let f = front.get(row).copied().flatten();
        let reads: Vec<f64> = cols.iter().map(|c| c[row].unwrap_or(0.0)).collect();
        let sum: f64 = reads.iter().sum();
        if sum <= 0.0 {
            continue;
        }
        gc_rows += 1;
        total += sum;
        if let Some(g) = f {
            on_front += reads[g * ssds_per_group..(g + 1) * ssds_per_group].iter().sum::<f64>();
        }
        if reads.iter().all(|&r| r > 0.0) {
            all_read += 1;
        }
    }
    Ok((if total > 0.0 { on_front / total } else { 0.0 }, all_read as f64 / gc_rows.max(1) as f64))
}

/// The front-end R-group of each interval (none where the scheme has none, or before the
/// first); an error if the run reported no such column, so no claim reads an absent one as
/// "never on the front-end". The column is numeric, or text where a row is blank.
pub(crate) fn front_groups(ts: &swan_sim::report::TimeSeries) -> anyhow::Result<Vec<Option<usize>>> {
    match (ts.numeric("front_group"), ts.text("front_group")) {
        (Some(v), _) => Ok(v.iter().map(|x| x.map(|g| g as usize)).collect()),
        (None, Some(t)) => Ok(t.iter().map(|x| x.parse().ok()).collect()),
        (None, None) => anyhow::bail!("the time series has no front_group column"),
    }
}

/// Fig. 7: victim utilization and free segments over the last half of the run: mean of the
/// third and fourth quarters (converged if they agree) and the CV of free segments.
fn convergence(ts: &TimeSeries) -> (f64, f64, f64) {
    let util = ts.numeric("victim_util").unwrap_or_default();
    let free = ts.numeric("free_segments").unwrap_or_default();
    let n = ts.len();
    let mean = |v: &[Option<f64>]| {
        let x: Vec<f64> = v.iter().flatten().copied().collect();
        x.iter().sum::<f64>() / x.len().max(1) as f64
    };
    let (q3, q4) = (mean(&util[n / 2..3 * n / 4]), mean(&util[3 * n / 4..]));
    let free_half: Vec<f64> = free[n / 2..].iter().flatten().copied().collect();
    let cv = swan_sim::metrics::mean_cv(&free_half).map_or(f64::NAN, |m| m.1);
    (q3, q4, cv)
}

/// What `swan repro fig5` measured, for SWAN's Fig. 1, 4(a), 5, 6 and 7 claims
/// ([`crate::claims::swan`]).
fn fig5_measures(s: &[RunSummary], dirs: &[PathBuf]) -> anyhow::Result<Measures> {
    let net = crate::experiments::FIG5_NETWORK_MBPS;
    let mut m = Measures::new("fig5");
    for (scheme, label) in [("raid0", "RAID0"), ("lograid0", "Log-RAID0"), ("swan0", "SWAN0")] {
        if let Some(x) = find(s, scheme, 8) {
            m.set(&format!("{scheme}.sustained_mbps"), label, "MB/s", sustained(x));
        }
        if let Some(x) = find_net(s, scheme, 8, net) {
            m.set(&format!("{scheme}.net.sustained_mbps"), &format!("{label} behind {net} MB/s"), "MB/s", sustained(x));
        }
    }
    if let Some(log) = find(s, "lograid0", 8) {
        let ts = timeseries(s, dirs, log)?;
        let before = mean_before(&ts, log.gc_onset_s)?;
        m.set("lograid0.before_gc_mbps", "Log-RAID0 before GC", "MB/s", before);
        m.set("lograid0.after_over_before", "Log-RAID0 after GC ÷ before", "", sustained(log) / before);
        m.set(
            "lograid0.after_gc_cv",
            "Log-RAID0's CV after GC",
            "%",
            log.user_write_mbps_after_gc_cv.unwrap_or(f64::NAN),
        );
        let (_, all_read) = gc_read_placement(&ts, 8)?;
        m.set("lograid0.gc_intervals_all_read", "Log-RAID0's GC intervals with all 8 SSDs reading", "%", all_read);
        m.set(
            "lograid0.onset_of_capacity",
            "Log-RAID0's writes before GC ÷ the array's capacity",
            "",
            onset_of_capacity(log),
        );
    }
    if let Some(swan) = find(s, "swan0", 8) {
        let two_ssds = 2.0 * swan.ssd_write_mbps;
        m.set("swan0.share_of_two_ssds", "SWAN0 after GC ÷ two SSDs' bandwidth", "%", sustained(swan) / two_ssds);
        m.set("swan0.after_gc_cv", "SWAN0's CV after GC", "%", swan.user_write_mbps_after_gc_cv.unwrap_or(f64::NAN));
        let ts = timeseries(s, dirs, swan)?;
        let (front, _) = gc_read_placement(&ts, 2)?;
        m.set("swan0.gc_reads_on_front", "SWAN0's GC reads on the front-end", "%", front);
        let (q3, q4, free_cv) = convergence(&ts);
        m.set(
            "swan0.victim_util_drift",
            "SWAN0's victim utilization change, third to last quarter",
            "",
            (q4 - q3).abs(),
        );
        m.set("swan0.free_segments_cv", "SWAN0's free segments CV", "%", free_cv);
        m.set(
            "swan0.onset_of_capacity",
            "SWAN0's writes before GC ÷ the array's capacity",
            "",
            onset_of_capacity(swan),
        );
        let (fronts, first_util) = before_and_at_onset(&ts, swan.gc_onset_s)?;
        let rgroups = swan.options.array.rgroups as f64;
        m.set(
            "swan0.fronts_before_gc",
            "R-groups that were the front-end before SWAN0's first GC ÷ all",
            "%",
            fronts / rgroups,
        );
        m.set("swan0.first_victim_util", "SWAN0's first victims' utilization", "", first_util);
        m.set("swan0.last_victim_util", "the last quarter's", "", q4);
    }
    Ok(m)
}

/// Fig. 6(a): the user bytes written when the array's GC took its first victim, over the
/// capacity of the array's SSDs (the paper: "closely coincides with the total RAID
/// capacity").
fn onset_of_capacity(s: &RunSummary) -> f64 {
    let capacity = s.options.array.members() as f64 * s.options.ssd.user_pages as f64 * 4096.0;
    s.gc_onset_user_bytes.map_or(f64::NAN, |b| b as f64 / capacity)
}

/// Fig. 6(b) and 7: how many R-groups had been the front-end by GC's onset, and the mean
/// utilization of the victims of the first intervals with GC (the first tenth of those).
fn before_and_at_onset(ts: &TimeSeries, onset_s: Option<f64>) -> anyhow::Result<(f64, f64)> {
    let Some(onset) = onset_s else { return Ok((f64::NAN, f64::NAN)) };
    let mut seen = std::collections::BTreeSet::new();
    for (t, f) in ts.time().iter().zip(front_groups(ts)?) {
        if let (true, Some(g)) = (*t <= onset, f) {
            seen.insert(g);
        }
    }
    let util: Vec<f64> = ts.numeric("victim_util").unwrap_or_default().iter().flatten().copied().collect();
    let first = &util[..util.len().div_ceil(10)];
    let first_mean = if first.is_empty() { f64::NAN } else { first.iter().sum::<f64>() / first.len() as f64 };
    Ok((seen.len() as f64, first_mean))
}

/// Mean user write throughput of a run over the intervals before GC's onset (the whole run
/// if GC never started).
fn mean_before(ts: &TimeSeries, onset_s: Option<f64>) -> anyhow::Result<f64> {
    let w = ts.numeric("user_write_mbps").ok_or_else(|| anyhow::anyhow!("the time series has no user_write_mbps"))?;
    let v: Vec<f64> =
        ts.time().iter().zip(w).filter(|(t, _)| onset_s.is_none_or(|o| **t <= o)).filter_map(|(_, x)| *x).collect();
    Ok(if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 })
}

/// What `swan repro fig4b` measured: each scheme's sustained rate at 3, 6 and 9 SSDs.
fn fig4b_measures(s: &[RunSummary]) -> Measures {
    let mut m = Measures::new("fig4b");
    for n in [3, 6, 9] {
        for (scheme, label) in [("lograid0", "Log-RAID0"), ("swan0", "SWAN0")] {
            if let Some(x) = find(s, scheme, n) {
                m.set(&format!("{scheme}.{n}.sustained_mbps"), &format!("{label} on {n} SSDs"), "MB/s", sustained(x));
            }
        }
    }
    m
}

/// What `swan repro fig12` measured: the SSDs' own GC copies under SWAN0 and RAID0.
fn fig12_measures(s: &[RunSummary]) -> Measures {
    let mut m = Measures::new("fig12");
    if let (Some(raid), Some(swan)) = (find(s, "raid0", 6), find(s, "swan0", 6)) {
        m.set("swan0.ssd_gc_copied_pages", "SWAN0's SSD-internal GC copies", "pages", swan.ssd_gc_copied_pages as f64);
        m.set("raid0.ssd_gc_copied_pages", "RAID0's", "pages", raid.ssd_gc_copied_pages as f64);
        let ratio = swan.ssd_gc_copied_pages as f64 / raid.ssd_gc_copied_pages.max(1) as f64;
        m.set("swan0.ssd_copies_over_raid0", "SWAN0's ÷ RAID0's", "%", ratio);
    }
    m
}

/// What `swan repro simple-ssd` measured: each scheme over block- and page-level-FTL SSDs,
/// and each FTL's map DRAM per TB.
fn simple_ssd_measures(s: &[RunSummary]) -> Measures {
    use crate::experiments::{PAPER_SEGMENT_ROWS, SMALL_OP};
    let mut m = Measures::new("simple-ssd");
    let lean =
        |x: &RunSummary| x.options.ssd.over_provisioning == SMALL_OP && x.options.array.tuning.swan_gc_target.is_none();
    let lean_ahead =
        |x: &RunSummary| x.options.ssd.over_provisioning == SMALL_OP && x.options.array.tuning.swan_gc_target.is_some();
    let small_segments = |x: &RunSummary| x.options.array.segment_rows == PAPER_SEGMENT_ROWS;
    let get = |scheme: &str, block: bool| {
        s.iter().find(|x| {
            x.scheme == scheme
                && x.ssd_ftl.contains("block") == block
                && !lean(x)
                && !lean_ahead(x)
                && !small_segments(x)
        })
    };
    for (scheme, label) in [("swan0", "SWAN0"), ("raid0", "RAID0")] {
        if let (Some(b), Some(p)) = (get(scheme, true), get(scheme, false)) {
            m.set(&format!("{scheme}.block_ftl_mbps"), &format!("{label} over block-level FTLs"), "MB/s", sustained(b));
            m.set(&format!("{scheme}.page_ftl_mbps"), &format!("{label} over page-level"), "MB/s", sustained(p));
            m.set(
                &format!("{scheme}.block_over_page"),
                &format!("{label} block ÷ page"),
                "%",
                sustained(b) / sustained(p),
            );
        }
    }
    let per_tb = |x: &RunSummary| {
        let cap = x.options.ssd.user_pages as f64 * 4096.0;
        x.ssd_map_dram_bytes as f64 * 1e12 / cap / 1e6
    };
    if let (Some(b), Some(p)) = (get("swan0", true), get("swan0", false)) {
        m.set("block_ftl.map_mb_per_tb", "block-level map per TB", "MB", per_tb(b));
        m.set("page_ftl.map_mb_per_tb", "page-level", "MB", per_tb(p));
    }
    for (scheme, label) in [("swan0", "SWAN0"), ("raid0", "RAID0")] {
        if let (Some(l), Some(p)) = (s.iter().find(|x| x.scheme == scheme && lean(x)), get(scheme, false)) {
            let name = format!("{scheme}.small_op_over_preset");
            m.set(&name, &format!("{label} {:.1} % ÷ 6.7 %", SMALL_OP * 100.0), "%", sustained(l) / sustained(p));
        }
    }
    if let (Some(l), Some(p)) = (s.iter().find(|x| lean_ahead(x)), get("swan0", false)) {
        m.set("swan0.small_op_ahead_over_preset", "with a whole R-group free", "%", sustained(l) / sustained(p));
        m.set("swan0.small_op_ahead_waf_ssd", "its SSD WAF", "", l.waf_ssd.unwrap_or(f64::NAN));
    }
    if let Some(x) = s.iter().find(|x| x.scheme == "swan0" && small_segments(x)) {
        m.set("swan0.1mib.share_of_two_ssds", "÷ two SSDs' bandwidth", "%", sustained(x) / (2.0 * x.ssd_write_mbps));
        m.set("swan0.1mib.waf_ssd", "SSD WAF", "", x.waf_ssd.unwrap_or(f64::NAN));
    }
    // §4.1, from the product's own layout: the map's bytes per 4 KiB block in an array past
    // 16 TiB (40-bit entries; smaller arrays pack them in 4), and a 1 MiB segment's summary
    // on one SSD (256 data slots).
    let entry = swan_core::l2p::PackedMap::for_values(1, 1 << 36).entry_bytes() as f64;
    m.set("swan.l2p_share", "swan's L2P map, bytes per block ÷ 4 KiB", "%", entry / 4096.0);
    let summary = swan_core::summary::blocks_needed(PAPER_SEGMENT_ROWS) as f64;
    m.set("swan.summary_share_1mib", "a 1 MiB segment's summary", "%", summary / PAPER_SEGMENT_ROWS as f64);
    m
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Capacity of each modelled SSD in GiB.
    #[arg(long, default_value_t = 2.0)]
    pub ssd_gib: f64,
    /// User bytes written, in multiples of the array's capacity.
    #[arg(long, default_value_t = 6.0)]
    pub footprint: f64,
    /// The seed that drives every random choice of the run.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory of the run.
    #[arg(long, default_value = "out/bench")]
    pub out: PathBuf,
    /// Threads that age the SSDs before the run [default: one per core]. Each SSD ages from
    /// its own seed, so every result is the same for any count; 1 ages them one after
    /// another on the main thread. The simulation loop itself runs on one thread.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
    /// A host model the requests cross (`paper`, or a file from `swan host fit`), to measure
    /// what modelling the host costs the simulator. Without it, no host: the speed the
    /// simulator's own work allows.
    #[arg(long, value_name = "NAME|FILE")]
    pub host: Option<PathBuf>,
}

/// Simulated user requests per wall second for SWAN0 4R-2SSD under 8 KiB random writes,
/// with array GC and SSD GC both active (SSDs aged to 60 %, footprint far beyond capacity).
pub fn bench(args: &BenchArgs) -> anyhow::Result<()> {
    let scale = Scale { ssd_gib: args.ssd_gib, footprint: args.footprint };
    let mut cfg = experiments::fig5(scale, args.seed)
        .into_iter()
        .find(|c| matches!(c.array.kind, swan_core::scheme::SchemeKind::Swan(_)) && c.network_mbps == 0)
        .expect("fig5 has an uncapped SWAN0 run");
    cfg.setup_threads = args.threads.map_or(0, |n| n as usize);
    cfg.host = args.host.as_deref().map(crate::sim_cmd::read_host_model).transpose()?;
    let name = match &cfg.host {
        Some(h) => format!("bench swan0 4R-2SSD, host '{}'", h.name),
        None => "bench swan0 4R-2SSD".into(),
    };
    let job = Job { name, dir: args.out.clone(), cfg };
    let s = run_all(std::slice::from_ref(&job), 1, false)?.remove(0);
    print_table(std::slice::from_ref(&s));
    let full_requests = 12e12 / 8192.0;
    println!(
        "\nspeed: {:.0} simulated requests per wall second of the simulation loop ({} requests in {:.1} s, plus {:.1} s of setup aging the SSDs; {:.0} simulated seconds)",
        s.requests_per_wall_s,
        s.requests,
        s.wall_s - s.setup_wall_s,
        s.setup_wall_s,
        s.sim_s
    );
    println!(
        "the paper's full experiment (8 × 120 GB SSDs, 12 TB of 8 KiB writes = {:.2e} requests) would take ≈ {:.0} s at this speed",
        full_requests,
        full_requests / s.requests_per_wall_s.max(1.0)
    );
    println!(
        "memory: {:.2} bytes per modelled 4 KiB block (scheme metadata + SSD FTL state); SSD map DRAM per SSD {} bytes",
        s.bytes_per_modelled_block, s.ssd_map_dram_bytes
    );
    Ok(())
}
