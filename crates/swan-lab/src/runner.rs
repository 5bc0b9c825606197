//! Running simulations from the command line: wall-clock timing, progress bars, output
//! directories, and two runs at a time (the machine has two cores; runs are independent and
//! each is deterministic, so running them side by side changes no result).

use anyhow::Context;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;
use swan_sim::engine::SimConfig;
use swan_sim::member_trace::TraceFiles;
use swan_sim::output::{write_run, RunSummary};

pub struct Job {
    pub name: String,
    pub cfg: SimConfig,
    pub dir: PathBuf,
}

/// Where a run that records its members' I/O writes their traces (one
/// `ssdN.blkparse.gz` each, [`swan_sim::member_trace`]).
pub fn member_io_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("member-io")
}

/// Run one configuration into `dir`, its statement above `bar`; returns its summary.
pub fn run_one(cfg: &SimConfig, dir: &Path, bar: &ProgressBar, record: bool) -> anyhow::Result<RunSummary> {
    let say = |statement: &str| bar.println(statement);
    run_into_with(cfg, dir, &say, &mut |f| bar.set_position((f * 1000.0) as u64), record)
}

/// Run one configuration into `dir`, telling `say` what a trace run will do and `progress`
/// the fraction done; returns its summary.
pub fn run_into(
    cfg: &SimConfig,
    dir: &Path,
    say: &dyn Fn(&str),
    progress: &mut dyn FnMut(f64),
) -> anyhow::Result<RunSummary> {
    run_into_with(cfg, dir, say, progress, false)
}

/// [`run_into`], and with `record` each member's I/O written to [`member_io_dir`].
fn run_into_with(
    cfg: &SimConfig,
    dir: &Path,
    say: &dyn Fn(&str),
    progress: &mut dyn FnMut(f64),
    record: bool,
) -> anyhow::Result<RunSummary> {
    let start = Instant::now();
    // A trace run reads its trace here (format, errors, span) and states what it will do.
    let (mut engine, replay) = swan_sim::replay::engine(cfg)?;
    if record {
        let traces = member_io_dir(dir);
        let files = TraceFiles::create(&traces, cfg.array.members())
            .with_context(|| format!("creating the members' traces in {}", traces.display()))?;
        engine.record_member_io(Box::new(files));
    }
    if let Some(r) = &replay {
        say(&r.statement());
    }
    let setup_s = start.elapsed().as_secs_f64();
    let running = Instant::now();
    let out = engine.run(progress)?;
    let run_s = running.elapsed().as_secs_f64();
    let mut summary = RunSummary::new(cfg, &out, setup_s, run_s);
    summary.replay = replay;
    write_run(dir, &summary, &out).with_context(|| format!("writing run {}", dir.display()))?;
    Ok(summary)
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>22} [{bar:30}] {percent:>3}% {elapsed_precise} eta {eta}")
        .expect("static template")
        .progress_chars("=> ")
}

/// Run `jobs`, `parallel` at a time, with one progress bar each (hidden when `quiet`).
pub fn run_all(jobs: &[Job], parallel: usize, quiet: bool) -> anyhow::Result<Vec<RunSummary>> {
    run_all_with(jobs, parallel, quiet, false)
}

/// [`run_all`], each run also writing its members' traces ([`member_io_dir`]).
pub fn run_all_recording(jobs: &[Job], parallel: usize, quiet: bool) -> anyhow::Result<Vec<RunSummary>> {
    run_all_with(jobs, parallel, quiet, true)
}

fn run_all_with(jobs: &[Job], parallel: usize, quiet: bool, record: bool) -> anyhow::Result<Vec<RunSummary>> {
    let multi = MultiProgress::new();
    if quiet {
        multi.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<anyhow::Result<RunSummary>>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    // Quiet output is kept (references are made from it), so the statements come out in
    // job order, not in the order the runs happen to start.
    let statements: Mutex<Vec<String>> = Mutex::new(vec![String::new(); jobs.len()]);
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1).min(jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("lock");
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(job) = jobs.get(i) else { break };
                let bar = multi.add(ProgressBar::new(1000));
                bar.set_style(bar_style());
                bar.set_prefix(job.name.clone());
                let r = if quiet {
                    let keep = |statement: &str| statements.lock().expect("lock")[i] += &format!("{statement}\n");
                    run_into_with(&job.cfg, &job.dir, &keep, &mut |_| {}, record)
                } else {
                    run_one(&job.cfg, &job.dir, &bar, record)
                };
                bar.finish();
                results.lock().expect("lock")[i] = Some(r);
            });
        }
    });
    for statement in statements.into_inner().expect("lock") {
        print!("{statement}");
    }
    results
        .into_inner()
        .expect("lock")
        .into_iter()
        .zip(jobs)
        .map(|(r, job)| r.expect("every job ran").with_context(|| format!("run {}", job.name)))
        .collect()
}

/// The worker count: the machine's cores, at most two by default (see the module comment).
pub fn default_parallelism() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(2)
}

/// `v` with `digits` decimals, or `-` when there is none.
pub fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

/// The table every run prints: one row per run.
pub fn print_table(summaries: &[RunSummary]) {
    println!(
        "\n{:<10} {:>5} {:>9} {:>10} {:>10} {:>7} {:>6} {:>6} {:>9} {:>11} {:>8}",
        "scheme",
        "SSDs",
        "GC onset",
        "write MB/s",
        "after GC",
        "CV",
        "WAF-a",
        "WAF-s",
        "p99 µs",
        "req/wall-s",
        "wall s"
    );
    for s in summaries {
        let a = &s.options.array;
        println!(
            "{:<10} {:>5} {:>9} {:>10.1} {:>10} {:>7} {:>6} {:>6} {:>9} {:>11.0} {:>8.1}",
            s.scheme,
            a.members(),
            s.gc_onset_s.map_or("-".into(), |t| format!("{t:.0} s")),
            s.user_write_mbps_mean,
            opt(s.user_write_mbps_after_gc_mean, 1),
            s.user_write_mbps_after_gc_cv.map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
            opt(s.waf_array, 2),
            opt(s.waf_ssd, 2),
            s.latency_us.p99,
            s.requests_per_wall_s,
            s.wall_s
        );
    }
}
