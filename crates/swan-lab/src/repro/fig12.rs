//! `swan repro fig12`, the paper's way: SWAN's authors traced each SSD of SWAN0 and RAID0
//! under fio and replayed every per-SSD trace on one open-channel SSD, measuring each
//! request there (§5.4). The runs record each member's I/O as the array sent it
//! (`RUN/member-io/ssdN.blkparse.gz`); each trace is then replayed at its recorded times
//! (open loop) on one SSD model alone, started as that member was (aged as the run aged
//! it), and each read's and write's latency split into service and queueing
//! ([`swan_sim::member_trace`]). The measures are the percentiles of all six SSDs' requests
//! together, as the paper's one CDF per scheme shows them.

use crate::claims::Measures;
use crate::runner::member_io_dir;
use anyhow::Context;
use hdrhistogram::Histogram;
use std::path::PathBuf;
use std::sync::Mutex;
use swan_sim::member_trace::{self, MemberReplay, Split};
use swan_sim::output::RunSummary;

/// The percentiles reported, as the measures' names and the tables give them.
pub const PERCENTILES: [(f64, &str, &str); 5] =
    [(0.5, "p50", "p50"), (0.9, "p90", "p90"), (0.95, "p95", "p95"), (0.99, "p99", "p99"), (0.999, "p999", "p99.9")];

/// One run's members replayed: each SSD's, and all of them together.
pub struct RunReplay {
    pub scheme: String,
    pub dir: PathBuf,
    pub per_ssd: Vec<MemberReplay>,
    pub all: MemberReplay,
}

/// Replays every member's trace of each run (`summaries` and their `dirs`, in the same
/// order), `parallel` at a time.
pub fn replay_runs(summaries: &[RunSummary], dirs: &[PathBuf], parallel: usize) -> anyhow::Result<Vec<RunReplay>> {
    let tasks: Vec<(usize, u32)> =
        summaries.iter().enumerate().flat_map(|(r, s)| (0..s.options.array.members()).map(move |m| (r, m))).collect();
    let next = Mutex::new(0usize);
    let results: Mutex<Vec<Option<anyhow::Result<MemberReplay>>>> = Mutex::new(tasks.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..parallel.clamp(1, tasks.len().max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().expect("lock");
                    *n += 1;
                    *n - 1
                };
                let Some(&(r, m)) = tasks.get(i) else { break };
                let path = member_trace::trace_path(&member_io_dir(&dirs[r]), m);
                let replayed = member_trace::member_ssd(&summaries[r].options, m)
                    .map_err(anyhow::Error::from)
                    .and_then(|mut ssd| Ok(member_trace::replay(&mut ssd, &path)?))
                    .with_context(|| format!("replaying {}", path.display()));
                results.lock().expect("lock")[i] = Some(replayed);
            });
        }
    });
    let mut results = results.into_inner().expect("lock").into_iter();
    let mut runs = Vec::new();
    for (r, s) in summaries.iter().enumerate() {
        let mut per_ssd = Vec::new();
        for _ in 0..s.options.array.members() {
            per_ssd.push(results.next().flatten().expect("every replay ran")?);
        }
        let mut all = MemberReplay::default();
        per_ssd.iter().for_each(|x| all.add(x));
        runs.push(RunReplay { scheme: s.scheme.clone(), dir: dirs[r].clone(), per_ssd, all });
    }
    Ok(runs)
}

/// `h`'s value at each of [`PERCENTILES`], µs.
fn percentiles(h: &Histogram<u64>) -> [u64; 5] {
    PERCENTILES.map(|(q, ..)| h.value_at_quantile(q))
}

/// A CDF's value at each of [`PERCENTILES`]: the first latency at which it reaches it.
fn cdf_percentiles(points: &[(f64, f64)]) -> [Option<f64>; 5] {
    PERCENTILES.map(|(q, ..)| points.iter().find(|(_, f)| *f >= q - 1e-9).map(|(us, _)| *us))
}

fn row(scheme: &str, op: &str, part: &str, requests: Option<u64>, v: [u64; 5]) -> String {
    let n = requests.map_or(String::new(), |n| n.to_string());
    let mut line = format!("{scheme:<7} {op:<6} {part:<9} {n:>9}");
    for x in v {
        line += &format!(" {x:>8}");
    }
    line
}

/// The latency row of one issuer's requests (dashes when it issued none).
fn issuer_row(part: &str, s: &Split) -> String {
    if s.requests() == 0 {
        return format!("{:<7} {:<6} {part:<9} {:>9}{}", "", "", 0, "        -".repeat(PERCENTILES.len()));
    }
    row("", "", part, Some(s.requests()), percentiles(&s.latency))
}

/// The replay's table: every run's reads and writes, all SSDs together (latency, service,
/// queueing), then what the run itself measured on its SSDs, then each SSD's own.
pub fn print(runs: &[RunReplay]) -> anyhow::Result<()> {
    println!(
        "\nFig. 12 as the paper measured it: each SSD's I/O as the array sent it (RUN/member-io/ssdN.blkparse.gz), \
         replayed at its recorded times on one SSD alone, started as that SSD was; a trace carries no priority. \
         Latency = service (the request's own work on the SSD idle, GC it set off included) + queueing (waiting \
         behind earlier work); then the latency of the user requests' I/O and of the array GC's alone; µs, all \
         SSDs of a run together:"
    );
    let head: Vec<String> = PERCENTILES.iter().map(|(.., p)| format!(" {p:>8}")).collect();
    println!("\n{:<7} {:<6} {:<9} {:>9}{}", "scheme", "op", "part", "requests", head.concat());
    for r in runs {
        for (op, by) in [("read", &r.all.reads), ("write", &r.all.writes)] {
            let s = &by.all;
            println!("{}", row(&r.scheme, op, "latency", Some(s.requests()), percentiles(&s.latency)));
            println!("{}", row("", "", "service", None, percentiles(&s.service)));
            println!("{}", row("", "", "queueing", None, percentiles(&s.queueing)));
            println!("{}", issuer_row("user I/O", &by.user));
            println!("{}", issuer_row("GC I/O", &by.gc));
        }
    }
    println!(
        "\nThe same SSDs' latency as the array run measured them, where SWAN0's reads overtake its GC \
         (read off ssd_latency_cdf.csv, whose fractions have six decimals: a percentile may land one \
         histogram bucket from the replay's):"
    );
    for r in runs {
        let run = swan_sim::report::load_run(&r.dir)?;
        let cdf = run.ssd_latency_cdf.with_context(|| format!("{} has no SSD latency CDF", r.dir.display()))?;
        for op in ["read", "write"] {
            let v = cdf.get(op).map_or([None; 5], |s| cdf_percentiles(&s.points));
            let cells: Vec<String> =
                v.iter().map(|x| x.map_or("-".into(), |x| format!("{x:.0}"))).map(|x| format!(" {x:>8}")).collect();
            println!("{:<7} {op:<6} {:<9} {:>9}{}", r.scheme, "in array", "", cells.concat());
        }
    }
    println!("\nEach SSD replayed alone, µs:");
    println!(
        "{:<7} {:>3} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
        "scheme", "SSD", "reads", "p50", "p99", "writes", "p50", "p99", "discards"
    );
    for r in runs {
        for (i, m) in r.per_ssd.iter().enumerate() {
            let q = |s: &Split, x| s.latency.value_at_quantile(x);
            println!(
                "{:<7} {i:>3} {:>9} {:>8} {:>8} {:>9} {:>8} {:>8} {:>9}",
                r.scheme,
                m.reads.all.requests(),
                q(&m.reads.all, 0.5),
                q(&m.reads.all, 0.99),
                m.writes.all.requests(),
                q(&m.writes.all, 0.5),
                q(&m.writes.all, 0.99),
                m.discards
            );
        }
    }
    Ok(())
}

/// The replay's percentiles as measures: `SCHEME.replay.OP.PCT_us` (the latency of every
/// request, which the claims are judged on), its `service_us` and `queueing_us` parts, and
/// `SCHEME.replay.OP.user.PCT_us` and `.gc.PCT_us`, the latency of each issuer's requests
/// alone (when it issued any).
pub fn measures(m: &mut Measures, runs: &[RunReplay]) {
    for r in runs {
        let who = match r.scheme.as_str() {
            "raid0" => "RAID0",
            "swan0" => "SWAN0",
            other => other,
        };
        for (op, ops, by) in [("read", "reads", &r.all.reads), ("write", "writes", &r.all.writes)] {
            let s = &by.all;
            // Labels as a claims row reads: "reads: RAID0 615 µs; SWAN0 874 µs".
            let label = if r.scheme == "raid0" { format!("{ops}: {who}") } else { who.to_string() };
            for (i, (_, pct, shown)) in PERCENTILES.iter().enumerate() {
                let name = format!("{}.replay.{op}.{pct}", r.scheme);
                m.set(&format!("{name}_us"), &label, "µs", percentiles(&s.latency)[i] as f64);
                let service = percentiles(&s.service)[i] as f64;
                m.set(&format!("{name}.service_us"), &format!("{who} {ops}' {shown} service"), "µs", service);
                let queueing = percentiles(&s.queueing)[i] as f64;
                m.set(&format!("{name}.queueing_us"), &format!("{who} {ops}' {shown} queueing"), "µs", queueing);
                for (issuer, whose, x) in [("user", "user", &by.user), ("gc", "array GC", &by.gc)] {
                    if x.requests() > 0 {
                        let name = format!("{}.replay.{op}.{issuer}.{pct}_us", r.scheme);
                        let label = format!("{who} {ops}' {shown}, {whose} I/O alone");
                        m.set(&name, &label, "µs", percentiles(&x.latency)[i] as f64);
                    }
                }
            }
        }
    }
}
