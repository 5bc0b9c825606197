//! `swan host fit`: this machine's host model, from what a running server measured of itself.
//!
//! A measurement is two `swan status --json` snapshots of one server taken around a client's
//! run, and (optionally) the client's own fio JSON output for its CPU time. Each stage's
//! cost per request is its CPU time between the snapshots over the requests served; given
//! runs of different request sizes and read shares, a least-squares fit (no part negative)
//! splits it into a part per request, a part per KiB written and a part per KiB read.
//! docs/host-model.md says what each parameter is.

use anyhow::{bail, Context};
use serde_json::Value;
use std::path::{Path, PathBuf};
use swan_models::host::{HostModel, RunqWait, StageCost};

#[derive(clap::Args, Debug)]
pub struct HostArgs {
    #[command(subcommand)]
    pub command: HostCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum HostCommand {
    /// Fit a host model (JSON, for `swan sim --host`) to measurements of a running server.
    Fit(FitArgs),
}

#[derive(clap::Args, Debug)]
pub struct FitArgs {
    /// One measurement: BEFORE.json,AFTER.json[,FIO.json] — two `swan status --json`
    /// snapshots of one server around a client's run and, if the client was fio
    /// (`--output-format=json`), its output, whose CPU time becomes the client's stage
    /// (without it the client costs nothing). Repeat for runs of other request sizes and
    /// read shares: their spread splits each cost into parts per request, per KiB written
    /// and per KiB read (at least three runs for all three: e.g. 8 KiB and 64 KiB writes and
    /// an 8 KiB mix of reads and writes).
    #[arg(long = "run", required = true, value_name = "BEFORE,AFTER[,FIO]")]
    pub runs: Vec<String>,
    /// Cores the client and the server share (default: this machine's).
    #[arg(long)]
    pub cores: Option<u32>,
    /// The model's name in its file and in every run that uses it.
    #[arg(long, default_value = "this machine")]
    pub name: String,
    /// Where to write the model (default: print it).
    #[arg(long, short)]
    pub out: Option<PathBuf>,
}

/// What one measurement says per request of each stage, and its mean request size.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Sample {
    /// KiB written and read per request.
    write_kib: f64,
    read_kib: f64,
    client_ns: f64,
    reader_ns: f64,
    engine_in_ns: f64,
    engine_out_ns: f64,
    /// GC's engine time per KiB GC moved through the members (read and written).
    gc_ns_per_kib: Option<f64>,
    /// The readers' and the engine's run-queue wait per second of their CPU.
    reader_runq: f64,
    engine_runq: f64,
    requests: f64,
}

pub fn run(args: &HostArgs) -> anyhow::Result<()> {
    match &args.command {
        HostCommand::Fit(f) => fit_cmd(f),
    }
}

fn fit_cmd(args: &FitArgs) -> anyhow::Result<()> {
    let samples: Vec<Sample> = args.runs.iter().map(|r| sample_of(r)).collect::<anyhow::Result<_>>()?;
    let cores = match args.cores {
        Some(c) => c,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let model = fit(&samples, cores, &args.name);
    model.validate()?;
    let text = serde_json::to_string_pretty(&model)? + "\n";
    match &args.out {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!("swan host fit: {} written from {} run(s)", path.display(), samples.len());
        }
        None => print!("{text}"),
    }
    for s in &samples {
        eprintln!(
            "  run of {:.0} requests writing {:.1} KiB and reading {:.1} KiB each: client {:.1} µs, reader {:.1} µs, engine {:.1} + {:.1} µs per request; GC {} per KiB moved; run-queue wait per CPU second: reader {:.2} s, engine {:.2} s",
            s.requests,
            s.write_kib,
            s.read_kib,
            s.client_ns / 1e3,
            s.reader_ns / 1e3,
            s.engine_in_ns / 1e3,
            s.engine_out_ns / 1e3,
            s.gc_ns_per_kib.map_or("not measured (no GC)".into(), |g| format!("{g:.0} ns")),
            s.reader_runq,
            s.engine_runq,
        );
    }
    Ok(())
}

fn fit(samples: &[Sample], cores: u32, name: &str) -> HostModel {
    let line = |f: fn(&Sample) -> f64| {
        let [a, w, r] = nonnegative_fit(samples.iter().map(|s| ([1.0, s.write_kib, s.read_kib], f(s))).collect());
        StageCost { per_request_ns: a, per_kib_ns: w, per_read_kib_ns: r }
    };
    let gc_per_kib = mean(samples.iter().filter_map(|s| s.gc_ns_per_kib));
    HostModel {
        name: name.into(),
        cores,
        client: line(|s| s.client_ns),
        reader: line(|s| s.reader_ns),
        engine_in: line(|s| s.engine_in_ns),
        engine_out: line(|s| s.engine_out_ns),
        gc: StageCost { per_kib_ns: gc_per_kib, ..StageCost::default() },
        gc_on_engine: true,
        runq_per_cpu: RunqWait {
            reader: mean(samples.iter().map(|s| s.reader_runq)),
            engine: mean(samples.iter().map(|s| s.engine_runq)),
        },
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / f64::from(n)
    }
}

/// The coefficients `c ≥ 0` of `y ≈ c · x` nearest the points in least squares: of every
/// subset of the three regressors, the best fit whose coefficients are all ≥ 0 (the others
/// held at 0). A regressor the runs do not vary (every run writes, say) is left at 0 unless
/// it is the only way to fit; with one point, the fixed part takes it all.
fn nonnegative_fit(points: Vec<([f64; 3], f64)>) -> [f64; 3] {
    let mut best: Option<(f64, [f64; 3])> = None;
    // Fewer regressors first, so that a tie keeps the simpler model.
    let mut subsets: Vec<u8> = (1u8..8).collect();
    subsets.sort_by_key(|m| (m.count_ones(), *m));
    for mask in subsets {
        let idx: Vec<usize> = (0..3).filter(|i| mask & (1 << i) != 0).collect();
        let Some(c) = solve_normal(&points, &idx) else { continue };
        if c.iter().any(|v| *v < 0.0) {
            continue;
        }
        let mut full = [0.0; 3];
        for (k, &i) in idx.iter().enumerate() {
            full[i] = c[k];
        }
        let residual: f64 = points.iter().map(|(x, y)| (y - (0..3).map(|i| full[i] * x[i]).sum::<f64>()).powi(2)).sum();
        // Subsets come fewest regressors first, the fixed part first among equals: a later
        // one must fit clearly better to be kept.
        if best.as_ref().is_none_or(|(r, _)| residual < r * (1.0 - 1e-6) - 1e-12) {
            best = Some((residual, full));
        }
    }
    best.map_or([0.0; 3], |b| b.1)
}

/// Least squares over the regressors `idx` by the normal equations; `None` if they are not
/// independent over the points.
fn solve_normal(points: &[([f64; 3], f64)], idx: &[usize]) -> Option<Vec<f64>> {
    let n = idx.len();
    let mut a = vec![vec![0.0; n + 1]; n];
    for (x, y) in points {
        for r in 0..n {
            for c in 0..n {
                a[r][c] += x[idx[r]] * x[idx[c]];
            }
            a[r][n] += x[idx[r]] * y;
        }
    }
    // Gauss–Jordan with partial pivoting.
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-9 * (1.0 + a.iter().map(|r| r[col].abs()).fold(0.0, f64::max)) {
            return None;
        }
        a.swap(col, piv);
        let p = a[col][col];
        for v in &mut a[col] {
            *v /= p;
        }
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col];
                for (v, p) in row.iter_mut().zip(&pivot_row) {
                    *v -= f * p;
                }
            }
        }
    }
    Some(a.iter().map(|r| r[n]).collect())
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    // fio may print notes before its JSON.
    let start = text.find('{').with_context(|| format!("{}: no JSON object in it", path.display()))?;
    serde_json::from_str(&text[start..]).with_context(|| format!("{}: not JSON", path.display()))
}

fn num(v: &Value, path: &[&str], file: &Path) -> anyhow::Result<f64> {
    let mut x = v;
    for k in path {
        x = x.get(k).with_context(|| format!("{}: no field {}", file.display(), path.join(".")))?;
    }
    x.as_f64().with_context(|| format!("{}: {} is not a number", file.display(), path.join(".")))
}

/// Sum of the CPU seconds of the threads of `stages` in a status snapshot.
fn stage_cpu(st: &Value, stages: &[&str]) -> f64 {
    stage_sum(st, stages, "cpu_s")
}

/// Sum of field `field` of the threads of `stages` in a status snapshot.
fn stage_sum(st: &Value, stages: &[&str], field: &str) -> f64 {
    st.get("threads").and_then(Value::as_array).map_or(0.0, |ts| {
        ts.iter()
            .filter(|t| t.get("stage").and_then(Value::as_str).is_some_and(|s| stages.contains(&s)))
            .filter_map(|t| t.get(field).and_then(Value::as_f64))
            .sum()
    })
}

/// The run-queue wait of the threads of `stages` between two snapshots per second of their
/// CPU; 0 if they used none.
fn runq_per_cpu(before: &Value, after: &Value, stages: &[&str]) -> f64 {
    let d = |field| stage_sum(after, stages, field) - stage_sum(before, stages, field);
    let cpu = d("cpu_s");
    if cpu > 0.0 {
        (d("runq_wait_s") / cpu).max(0.0)
    } else {
        0.0
    }
}

fn gc_bytes(st: &Value) -> f64 {
    st.get("members").and_then(Value::as_array).map_or(0.0, |ms| {
        ms.iter()
            .map(|m| {
                ["gc_bytes_read", "gc_bytes_written"]
                    .iter()
                    .filter_map(|k| m.get(*k).and_then(Value::as_f64))
                    .sum::<f64>()
            })
            .sum()
    })
}

/// The stages of a connection's reader: the socket's, and TLS's when on.
const READERS: [&str; 2] = ["nbd-reader", "tls"];

fn sample_of(run: &str) -> anyhow::Result<Sample> {
    let parts: Vec<&str> = run.split(',').collect();
    if !(2..=3).contains(&parts.len()) {
        bail!("--run {run}: expected BEFORE.json,AFTER.json[,FIO.json]");
    }
    let (bp, ap) = (Path::new(parts[0]), Path::new(parts[1]));
    let (b, a) = (read_json(bp)?, read_json(ap)?);
    if a.get("uuid") != b.get("uuid") {
        bail!("--run {run}: the two snapshots are of different arrays");
    }
    let d = |path: &[&str]| -> anyhow::Result<f64> { Ok(num(&a, path, ap)? - num(&b, path, bp)?) };
    let requests = d(&["engine_cpu", "requests"])?;
    if requests < 1.0 {
        bail!("--run {run}: the server served no request between the snapshots");
    }
    let (written, read) = (d(&["user_bytes_written"])?, d(&["user_bytes_read"])?);
    let per = |s: f64| s * 1e9 / requests;
    let engine_in = d(&["engine_cpu", "receiving_s"])? + d(&["engine_cpu", "serving_s"])?;
    let engine_out =
        d(&["engine_cpu", "replies_s"])? + d(&["engine_cpu", "durability_s"])? + d(&["engine_cpu", "rebuild_s"])?;
    let reader = stage_cpu(&a, &READERS) - stage_cpu(&b, &READERS);
    let moved_kib = (gc_bytes(&a) - gc_bytes(&b)) / 1024.0;
    let gc_s = d(&["engine_cpu", "gc_s"])?;
    let client_ns = match parts.get(2) {
        Some(f) => {
            let path = Path::new(f);
            let fio = read_json(path)?;
            let job = fio.get("jobs").and_then(|j| j.get(0)).with_context(|| format!("{f}: no fio job"))?;
            let cpu_pct = num(job, &["usr_cpu"], path)? + num(job, &["sys_cpu"], path)?;
            let runtime_s = num(job, &["job_runtime"], path)? / 1e3;
            let ios =
                ["read", "write", "trim"].iter().filter_map(|k| job.get(*k)?.get("total_ios")?.as_f64()).sum::<f64>();
            if ios < 1.0 {
                bail!("{f}: fio did no I/O");
            }
            cpu_pct / 100.0 * runtime_s * 1e9 / ios
        }
        None => 0.0,
    };
    Ok(Sample {
        write_kib: written / requests / 1024.0,
        read_kib: read / requests / 1024.0,
        client_ns,
        reader_ns: per(reader),
        engine_in_ns: per(engine_in),
        engine_out_ns: per(engine_out),
        gc_ns_per_kib: (moved_kib > 1.0).then(|| gc_s * 1e9 / moved_kib),
        reader_runq: runq_per_cpu(&b, &a, &READERS),
        engine_runq: runq_per_cpu(&b, &a, &["engine"]),
        requests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 3], b: [f64; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    #[test]
    fn runs_of_other_sizes_and_mixes_split_the_cost() {
        // 8 000 ns + 250 per KiB written + 100 per KiB read, seen at three runs.
        let cost = |w: f64, r: f64| 8_000.0 + 250.0 * w + 100.0 * r;
        let runs = vec![
            ([1.0, 8.0, 0.0], cost(8.0, 0.0)),
            ([1.0, 64.0, 0.0], cost(64.0, 0.0)),
            ([1.0, 2.4, 5.6], cost(2.4, 5.6)),
        ];
        assert!(close(nonnegative_fit(runs), [8_000.0, 250.0, 100.0]));
        // One size: the fixed part takes it all.
        assert!(close(nonnegative_fit(vec![([1.0, 8.0, 0.0], 5.0), ([1.0, 8.0, 0.0], 7.0)]), [6.0, 0.0, 0.0]));
        // A cost that falls with size is a fixed cost, not a negative one per KiB.
        let f = nonnegative_fit(vec![([1.0, 8.0, 0.0], 9.0), ([1.0, 64.0, 0.0], 7.0)]);
        assert!(close(f, [8.0, 0.0, 0.0]), "{f:?}");
    }

    #[test]
    fn snapshots_of_a_server_become_costs_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let st = |req: f64, cpu: f64, reader: f64, gc_bytes: f64| {
            serde_json::json!({
                "uuid": "u", "user_bytes_written": req * 8192.0, "user_bytes_read": 0.0,
                "engine_cpu": {"requests": req, "receiving_s": cpu, "serving_s": cpu, "replies_s": cpu,
                               "durability_s": 0.0, "rebuild_s": 0.0, "gc_s": cpu},
                "threads": [{"stage": "nbd-reader", "cpu_s": reader, "runq_wait_s": reader},
                            {"stage": "engine", "cpu_s": 4.0 * cpu, "runq_wait_s": cpu}],
                "members": [{"gc_bytes_read": gc_bytes, "gc_bytes_written": gc_bytes}],
            })
        };
        let (b, a) = (dir.path().join("b.json"), dir.path().join("a.json"));
        std::fs::write(&b, st(0.0, 0.0, 0.0, 0.0).to_string()).unwrap();
        std::fs::write(&a, st(100_000.0, 1.0, 0.5, 512.0 * 1024.0 * 1024.0).to_string()).unwrap();
        let s = sample_of(&format!("{},{}", b.display(), a.display())).unwrap();
        assert!((s.write_kib - 8.0).abs() < 1e-9 && s.read_kib == 0.0);
        assert!((s.engine_in_ns - 20_000.0).abs() < 1e-6, "{s:?}");
        assert!((s.engine_out_ns - 10_000.0).abs() < 1e-6);
        assert!((s.reader_ns - 5_000.0).abs() < 1e-6);
        assert!((s.gc_ns_per_kib.unwrap() - 1e9 / (1024.0 * 1024.0)).abs() < 1e-6);
        assert!((s.reader_runq - 1.0).abs() < 1e-9 && (s.engine_runq - 0.25).abs() < 1e-9, "{s:?}");
        let m = fit(&[s], 2, "t");
        assert_eq!(m.cores, 2);
        assert_eq!(m.runq_per_cpu, RunqWait { reader: 1.0, engine: 0.25 });
        assert!((m.engine_in.per_request_ns - 20_000.0).abs() < 1e-6);
        let e = sample_of(&format!("{},{}", a.display(), a.display())).unwrap_err();
        assert!(e.to_string().contains("no request"), "{e}");
    }
}
