//! End-to-end tests of the `swan` binary: help, `sim` output files (crates/swan-sim/OUTPUT.md),
//! determinism, `report`, `plan`, `repro`, and clear errors (never a panic) for bad input.
//!
//! Every run is small: 8 SSDs of 256 MiB (the smallest the SATA preset accepts) and a
//! footprint of 1× the array's capacity, well under a second of wall time each.

use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SWAN: &str = env!("CARGO_BIN_EXE_swan");
const SMALL: &[&str] = &["--ssd-capacity", "256MiB", "--footprint", "1", "--quiet"];
const PRESETS: &[&str] = &["sata850pro", "sata850pro-blockftl", "harmonia", "openchannel", "apas-slc"];
const SCHEMES: &[&str] = &["raid0", "raid4", "raid5", "lograid0", "lograid4", "lograid5", "swan0", "swan4", "swan5"];

/// A fresh directory under the system temp dir, named after the test and this process,
/// removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("swan-cli-test-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        Self(dir)
    }

    fn join(&self, p: &str) -> PathBuf {
        self.0.join(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// No command here takes more than a second or two; a run that goes on is a hang.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `swan args` to completion, killing it (and failing) after [`DEADLINE`].
fn swan(args: &[&str]) -> Output {
    let mut child = Command::new(SWAN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the swan binary");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for swan") {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("swan {} still running after {DEADLINE:?}: killed", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Output { status, stdout: stdout.join().expect("stdout reader"), stderr: stderr.join().expect("stderr reader") }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(args: &[&str], out: &Output) -> String {
    format!(
        "swan {}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        args.join(" "),
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn assert_no_panic(args: &[&str], out: &Output) {
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"), "panic: {}", describe(args, out));
    // 101 is a panic's exit status; 134 an abort (e.g. stack overflow).
    assert!(!matches!(out.status.code(), Some(101 | 134) | None), "crashed: {}", describe(args, out));
}

/// Runs `swan args`, asserts success; returns stdout.
fn ok(args: &[&str]) -> String {
    let out = swan(args);
    assert_no_panic(args, &out);
    assert!(out.status.success(), "expected success: {}", describe(args, &out));
    text(&out.stdout)
}

/// Runs `swan args`, asserts a clean failure whose stderr contains every one of `needles`;
/// returns stderr.
fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = swan(args);
    assert_no_panic(args, &out);
    assert!(!out.status.success(), "expected failure: {}", describe(args, &out));
    let stderr = text(&out.stderr);
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks {n:?}: {}", describe(args, &out));
    }
    stderr
}

/// `swan sim` with a bad argument: fails before simulating anything (no output directory).
fn sim_fails(extra: &[&str], needles: &[&str]) -> String {
    let tmp = TempDir::new("bad-input");
    let out_dir = tmp.join("run");
    let out = out_dir.to_str().expect("utf-8 temp path");
    // The small defaults, except those `extra` gives itself.
    let mut args = vec!["sim"];
    for pair in [&["--ssd-capacity", "256MiB"][..], &["--footprint", "1"], &["--quiet"]] {
        if !extra.contains(&pair[0]) {
            args.extend_from_slice(pair);
        }
    }
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", out]);
    let stderr = fails(&args, needles);
    assert!(!out_dir.join("summary.json").exists(), "a failed run wrote a summary: swan {}", args.join(" "));
    stderr
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("`{key}` is not a number: {}", v[key]))
}

fn num_or_null(v: &Value, key: &str) -> Option<f64> {
    assert!(v.get(key).is_some(), "`{key}` missing");
    if v[key].is_null() {
        None
    } else {
        Some(num(v, key))
    }
}

fn svgs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    v.sort();
    for p in &v {
        let t = read(p);
        assert!(t.contains("<svg") && t.trim_end().ends_with("</svg>"), "{} is not an SVG document", p.display());
    }
    v
}

// ---------------------------------------------------------------------------------------------
// help

fn help_mentions(args: &[&str], needles: &[&str]) {
    let out = ok(args);
    for n in needles {
        assert!(out.contains(n), "`swan {}` does not mention {n:?}:\n{out}", args.join(" "));
    }
}

#[test]
fn help_top_level() {
    help_mentions(&["--help"], &["Usage: swan", "sim", "repro", "report", "plan", "bench", "--version"]);
}

#[test]
fn help_sim() {
    help_mentions(
        &["sim", "--help"],
        &[
            "--scheme",
            "swan0",
            "lograid0",
            "--rgroups",
            "--ssds-per-rgroup",
            "--ssd ",
            "--ssd-capacity",
            "--rw",
            "--bs",
            "--dist",
            "--working-set",
            "--footprint",
            "--time",
            "--seed",
            "--out",
            "--quiet",
            "--ssd-speed-spread",
            "--ssd-slow-fraction",
            "Hao et al.",
            "--fabric",
            "--fimm-gc",
            "switch-major",
        ],
    );
}

#[test]
fn help_repro() {
    help_mentions(
        &["repro", "--help"],
        &[
            "fig5",
            "fig4b",
            "ssd-spread",
            "ycsb",
            "fig12",
            "simple-ssd",
            "--ssd-gib",
            "--footprint",
            "--full",
            "--seed",
            "--out",
            "--format",
        ],
    );
}

#[test]
fn help_plan() {
    help_mentions(
        &["plan", "--help"],
        &[
            "--erase-ms",
            "--block-read-us",
            "--block-write-us",
            "--segment-blocks",
            "--disk-utilization",
            "--segment-utilization",
            "--network-mbps",
            "--raid",
            "--json",
        ],
    );
}

#[test]
fn help_report() {
    help_mentions(&["report", "--help"], &["RUNS", "--out", "--format"]);
}

// ---------------------------------------------------------------------------------------------
// sim

/// Runs `swan sim --scheme <scheme>` on 4 × 2 SSDs of 256 MiB and checks everything
/// OUTPUT.md promises; returns the run directory's summary.
fn check_sim(scheme: &str) -> Value {
    let tmp = TempDir::new(&format!("sim-{scheme}"));
    let dir = tmp.join("run");
    let d = dir.to_str().expect("utf-8 temp path");
    let mut args = vec!["sim", "--scheme", scheme, "--rgroups", "4", "--ssds-per-rgroup", "2", "--seed", "7"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--out", d]);
    let stdout = ok(&args);

    // The seed and every option, as JSON, on the first line.
    let first = stdout.lines().next().unwrap_or_default();
    let prefix = "swan sim: seed 7 with options ";
    assert!(first.starts_with(prefix), "first line should give the seed and options: {first}");
    let printed: Value = serde_json::from_str(&first[prefix.len()..]).expect("options line is JSON");
    assert!(stdout.contains(&format!("\n{scheme} ")), "table has no {scheme} row:\n{stdout}");

    for f in ["summary.json", "timeseries.csv", "latency_cdf.csv", "ssd_latency_cdf.csv"] {
        assert!(dir.join(f).is_file(), "{f} missing from {}", dir.display());
    }

    // summary.json: every key of OUTPUT.md, with sane values.
    let s: Value = serde_json::from_str(&read(&dir.join("summary.json"))).expect("summary.json parses");
    assert_eq!(s["scheme"], scheme);
    assert_eq!(s["seed"], 7);
    assert_eq!(s["options"], printed, "summary.options differs from the printed options");
    assert_eq!(s["options"]["array"]["rgroups"], 4);
    assert_eq!(s["options"]["array"]["ssds_per_rgroup"], 2);
    assert_eq!(s["options"]["ssd"]["user_pages"], 65536, "256 MiB of 4 KiB pages");
    assert!(num(&s, "ssd_write_mbps") > 0.0);
    if let Some(t) = num_or_null(&s, "gc_onset_s") {
        assert!(t > 0.0 && t <= num(&s, "sim_s") + 1e-9, "gc_onset_s {t}");
    }
    assert!(num(&s, "user_write_mbps_mean") > 0.0);
    if let Some(m) = num_or_null(&s, "user_write_mbps_after_gc_mean") {
        assert!(m > 0.0, "after-GC mean {m}");
    }
    if let Some(cv) = num_or_null(&s, "user_write_mbps_after_gc_cv") {
        assert!(cv >= 0.0, "after-GC CV {cv}");
    }
    let waf_array = num(&s, "waf_array");
    let waf_ssd = num(&s, "waf_ssd");
    assert!(waf_ssd >= 1.0 - 1e-9, "waf_ssd {waf_ssd}");
    if scheme.starts_with("raid") {
        assert!((waf_array - 1.0).abs() < 0.01, "in-place RAID0 writes what it is given: waf_array {waf_array}");
    } else {
        assert!(waf_array >= 1.0, "log schemes only add writes (GC): waf_array {waf_array}");
    }
    let lat = &s["latency_us"];
    let (p50, p99, p999, max, mean) =
        (num(lat, "p50"), num(lat, "p99"), num(lat, "p999"), num(lat, "max"), num(lat, "mean"));
    assert!(0.0 < p50 && p50 <= p99 && p99 <= p999 && p999 <= max, "latency_us {lat}");
    assert!(0.0 < mean && mean <= max, "latency_us {lat}");
    let requests = num(&s, "requests");
    // Footprint 1: at least the raw capacity (8 × 256 MiB) in 8 KiB writes.
    assert!(requests >= (8u64 << 28) as f64 / 8192.0, "requests {requests}");
    assert!(num(&s, "wall_s") > 0.0);
    assert!(num(&s, "requests_per_wall_s") > 0.0);
    let sim_s = num(&s, "sim_s");
    assert!(sim_s > 0.0);
    assert!(num(&s, "ssd_map_dram_bytes") > 0.0);
    assert!(num(&s, "bytes_per_modelled_block") > 0.0);

    // timeseries.csv: the fixed columns, then four per SSD for each of the 8 SSDs.
    let ts = read(&dir.join("timeseries.csv"));
    let mut lines = ts.lines();
    let header: Vec<&str> = lines.next().expect("timeseries header").split(',').collect();
    let mut want: Vec<String> =
        ["t_s", "user_read_mbps", "user_write_mbps", "free_segments", "victim_util", "front_group", "gc_group"]
            .map(String::from)
            .to_vec();
    for i in 0..8 {
        for c in ["read_mbps", "write_mbps", "gc_read_mbps", "gc_write_mbps"] {
            want.push(format!("ssd{i}_{c}"));
        }
    }
    assert_eq!(header, want, "timeseries.csv header");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(!rows.is_empty(), "timeseries.csv has no rows");
    let mut last_t = 0.0;
    for r in &rows {
        assert_eq!(r.len(), header.len(), "ragged row {r:?}");
        let t: f64 = r[0].parse().expect("t_s is a number");
        assert!(t > last_t, "t_s must increase: {t} after {last_t}");
        last_t = t;
        let front = r[5];
        if scheme.starts_with("raid") {
            assert!(front.is_empty(), "in-place RAID has no front group: {front:?}");
        } else if scheme.starts_with("swan") {
            let g: u32 = front.parse().expect("SWAN names its front group");
            assert!(g < 4, "front group {g}");
        }
    }
    assert!((last_t - sim_s).abs() < 1e-3, "last t_s {last_t} vs sim_s {sim_s}");

    // The two latency CDFs.
    for (file, ops) in [("latency_cdf.csv", &["all", "read", "write"][..]), ("ssd_latency_cdf.csv", &["read", "write"])]
    {
        let cdf = read(&dir.join(file));
        let mut lines = cdf.lines();
        assert_eq!(lines.next(), Some("op,latency_us,fraction"), "{file} header");
        let mut n = 0;
        for l in lines {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 3, "{file}: {l}");
            assert!(ops.contains(&f[0]), "{file}: unexpected op in {l}");
            let frac: f64 = f[2].parse().expect("fraction");
            assert!(frac > 0.0 && frac <= 1.0 + 1e-9, "{file}: {l}");
            f[1].parse::<f64>().expect("latency_us");
            n += 1;
        }
        assert!(n > 0, "{file} is empty");
    }
    s
}

#[test]
fn sim_swan0() {
    let s = check_sim("swan0");
    assert!(s["gc_onset_s"].is_number(), "SWAN0 reaches GC at footprint 1");
}

#[test]
fn sim_lograid0() {
    check_sim("lograid0");
}

#[test]
fn sim_raid0() {
    check_sim("raid0");
}

#[test]
fn sim_same_seed_same_output() {
    let tmp = TempDir::new("seed");
    let run = |name: &str, seed: &str| {
        let dir = tmp.join(name);
        let mut args = vec!["sim", "--scheme", "swan0", "--seed", seed];
        args.extend_from_slice(SMALL);
        args.extend_from_slice(&["--out", dir.to_str().expect("utf-8 temp path")]);
        ok(&args);
        dir
    };
    let (a, b, c) = (run("a", "3"), run("b", "3"), run("c", "4"));
    for f in ["timeseries.csv", "latency_cdf.csv", "ssd_latency_cdf.csv"] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "seed 3 twice gave different {f}");
    }
    assert!(
        read(&a.join("timeseries.csv")) != read(&c.join("timeseries.csv")),
        "seeds 3 and 4 gave the same timeseries.csv"
    );
}

// ---------------------------------------------------------------------------------------------
// report

#[test]
fn report_writes_svgs() {
    let tmp = TempDir::new("report");
    let run = tmp.join("swan0");
    let figs = tmp.join("figs");
    let mut args = vec!["sim", "--scheme", "swan0"];
    args.extend_from_slice(SMALL);
    args.extend_from_slice(&["--out", run.to_str().expect("utf-8")]);
    ok(&args);
    let stdout = ok(&["report", run.to_str().expect("utf-8"), "--out", figs.to_str().expect("utf-8")]);
    let written = svgs(&figs);
    assert!(!written.is_empty(), "report wrote no SVG; stdout:\n{stdout}");
    for p in &written {
        assert!(stdout.contains(&p.display().to_string()), "stdout does not list {}:\n{stdout}", p.display());
    }
    assert!(written.iter().any(|p| p.ends_with("fig5_throughput.svg")), "no throughput figure: {written:?}");
}

#[test]
fn report_without_a_run_names_the_missing_file() {
    let tmp = TempDir::new("report-empty");
    let empty = tmp.join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = tmp.join("figs");
    fails(&["report", empty.to_str().expect("utf-8"), "--out", out.to_str().expect("utf-8")], &["summary.json"]);
    let missing = tmp.join("no-such-dir");
    fails(&["report", missing.to_str().expect("utf-8"), "--out", out.to_str().expect("utf-8")], &["no-such-dir"]);
    fails(&["report"], &["RUNS"]);
}

// ---------------------------------------------------------------------------------------------
// plan

/// The number after `=` on the line of `out` that starts (after spaces) with `label`.
fn value_after(out: &str, label: &str) -> f64 {
    let line =
        out.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("no {label:?} in\n{out}"));
    let v = line.split('=').nth(1).and_then(|r| r.split_whitespace().next());
    v.and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("no number in {line:?}"))
}

#[test]
fn plan_prints_both_n() {
    let out = ok(&["plan"]);
    let with = value_after(&out, "N with erase term");
    let without = value_after(&out, "N without erase term");
    assert!((with - 3.05).abs() < 0.01, "N with erase term {with}");
    assert!((without - 1.86).abs() < 0.01, "N without erase term {without}");
    assert!(out.contains("4 R-groups") && out.contains("2 R-groups"), "{out}");
}

#[test]
fn plan_json() {
    let out = ok(&["plan", "--json"]);
    let p: Value = serde_json::from_str(&out).expect("plan --json prints JSON");
    assert!((num(&p, "rgroups_with_erase") - 3.05).abs() < 0.01, "{p}");
    assert!((num(&p, "rgroups_without_erase") - 1.86).abs() < 0.01, "{p}");
    assert_eq!(p["rgroups_with_erase_ceil"], 4);
    assert_eq!(p["rgroups_without_erase_ceil"], 2);
    assert_eq!(p["disk_utilization"], 0.6);
}

#[test]
fn plan_rejects_bad_disk_utilization() {
    fails(&["plan", "--disk-utilization", "1.5"], &["--disk-utilization"]);
    fails(&["plan", "--disk-utilization", "-0.5"], &["--disk-utilization"]);
    fails(&["plan", "--raid", "6"], &["--raid"]);
}

#[test]
fn closed_stdout_is_not_a_panic() {
    // `swan plan | head -0`: stdout is a pipe whose reader has gone. The reader here is a
    // process that never reads its stdin and has exited before `swan plan` starts.
    let mut reader = Command::new(SWAN)
        .arg("--version")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn the reader");
    let write_end = reader.stdin.take().expect("pipe");
    reader.wait().expect("reader exits");
    let out = Command::new(SWAN)
        .arg("plan")
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .expect("run swan plan");
    assert_no_panic(&["plan"], &out);
    assert_eq!(out.status.code(), Some(141), "{}", describe(&["plan"], &out));
}

// ---------------------------------------------------------------------------------------------
// bad input: a clear message and a failing status, never a panic

#[test]
fn sim_unknown_scheme_lists_the_valid_ones() {
    let mut needles = vec!["raid6"];
    needles.extend_from_slice(SCHEMES);
    sim_fails(&["--scheme", "raid6"], &needles);
}

#[test]
fn sim_impossible_geometry() {
    sim_fails(&["--scheme", "swan5", "--ssds-per-rgroup", "1"], &["RAID5", "--ssds-per-rgroup"]);
    sim_fails(&["--scheme", "raid4", "--rgroups", "1", "--ssds-per-rgroup", "1"], &["RAID4", "--ssds-per-rgroup"]);
    sim_fails(&["--rgroups", "0"], &["--rgroups"]);
    sim_fails(&["--ssds-per-rgroup", "0"], &["--ssds-per-rgroup"]);
    sim_fails(&["--segment", "512MiB"], &["segment"]);
}

#[test]
fn sim_block_size_not_a_multiple_of_4k() {
    sim_fails(&["--bs", "6k"], &["--bs", "6k", "4 KiB"]);
    sim_fails(&["--bs", "0"], &["--bs", "4 KiB"]);
    sim_fails(&["--bs", "8x"], &["--bs", "unit"]);
}

#[test]
fn sim_working_set_out_of_range() {
    sim_fails(&["--working-set", "0"], &["--working-set", "(0, 1]"]);
    sim_fails(&["--working-set", "1.5"], &["--working-set", "1.5"]);
    sim_fails(&["--working-set", "-0.5"], &["--working-set", "-0.5"]);
}

#[test]
fn sim_bad_ssd_variation_names_the_option() {
    sim_fails(&["--ssd-speed-spread", "-0.2"], &["--ssd-speed-spread -0.2", "σ in [0, 1]"]);
    sim_fails(&["--ssd-slow-fraction", "1.5"], &["--ssd-slow-fraction 1.5", "[0, 1)"]);
    sim_fails(&["--ssd-slow-fraction", "0.1", "--ssd-slow-factor", "0.5"], &["--ssd-slow-factor 0.5", "≥ 1"]);
    sim_fails(&["--ssd-slow-fraction", "0.1", "--ssd-slow-period", "-3"], &["--ssd-slow-period -3", "> 0"]);
}

#[test]
fn sim_unknown_ssd_preset_lists_presets() {
    let mut needles = vec!["nvme9000"];
    needles.extend_from_slice(PRESETS);
    sim_fails(&["--ssd", "nvme9000"], &needles);
}

#[test]
fn sim_bad_windows_file_names_the_file_and_line() {
    let tmp = TempDir::new("windows");
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/small.blkparse");
    let trace = trace.to_str().unwrap();
    let windows = tmp.join("phases.txt");
    std::fs::write(&windows, "load 0 10\na 5 20\n").unwrap();
    let w = windows.to_str().unwrap();
    sim_fails(
        &["--trace", trace, "--windows", w],
        &["--windows", &format!("{w}:2:"), "'a' starts (5) before 'load' ends (10)"],
    );
    sim_fails(&["--trace", trace, "--windows", "/nonexistent/w.txt"], &["--windows", "/nonexistent/w.txt"]);
    // Windows without a trace are refused by the parser.
    sim_fails(&["--windows", w], &["--windows", "--trace"]);
}

#[test]
fn sim_unknown_pattern() {
    sim_fails(&["--rw", "bogus"], &["--rw", "bogus", "randwrite", "randrw"]);
}

#[test]
fn sim_bad_zipf_exponent() {
    sim_fails(&["--dist", "zipf:-1"], &["--dist", "zipf"]);
    sim_fails(&["--dist", "pareto"], &["--dist", "pareto"]);
}

#[test]
fn sim_ssd_too_small_names_the_flag_and_the_minimum() {
    let stderr = sim_fails(&["--ssd-capacity", "1MiB"], &["--ssd-capacity 1MiB", "too small", "or more"]);
    sim_fails(&["--ssd-capacity", "0"], &["--ssd-capacity", "or more"]);
    // The capacity the message suggests is the smallest that runs.
    let min = stderr
        .split("use --ssd-capacity ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no suggested capacity in {stderr}"));
    assert_eq!(min, "256MiB", "{stderr}");
    let mib: u64 = min.trim_end_matches("MiB").parse().expect("MiB");
    sim_fails(&["--ssd-capacity", &format!("{}MiB", mib - 1)], &["too small"]);
    let tmp = TempDir::new("min-capacity");
    let out = tmp.join("run");
    ok(&["sim", "--ssd-capacity", min, "--footprint", "0.05", "--quiet", "--out", out.to_str().expect("utf-8")]);
}

#[test]
fn sim_bad_numbers_name_their_flag() {
    sim_fails(&["--footprint", "0"], &["--footprint"]);
    sim_fails(&["--footprint", "-1"], &["--footprint", "-1"]);
    sim_fails(&["--time", "0"], &["--time"]);
    sim_fails(&["--age", "1.5"], &["--age"]);
    sim_fails(&["--age", "-1"], &["--age"]);
    sim_fails(&["--rwmixread", "2", "--rw", "randrw"], &["--rwmixread"]);
    sim_fails(&["--iodepth", "0"], &["--iodepth"]);
    sim_fails(&["--rate-iops", "0"], &["--rate-iops"]);
    sim_fails(&["--rate-iops", "-5"], &["--rate-iops"]);
    sim_fails(&["--interval-ms", "0"], &["--interval-ms"]);
    sim_fails(&["--victim", "oldest"], &["--victim", "greedy", "cost-benefit"]);
    sim_fails(&["--no-such-flag"], &["--no-such-flag"]);
}

#[test]
fn sim_read_only_workloads() {
    // Reads alone never reach a write footprint: say so instead of running forever.
    sim_fails(&["--rw", "randread", "--scheme", "raid0"], &["--rw randread", "--time"]);
    // In-place RAID reads from the SSDs, an open loop paces the reads, and a closed loop of
    // reads of a fresh (empty) log is answered without SSD I/O but still advances time (this
    // used to recurse until the stack overflowed): all run.
    let tmp = TempDir::new("reads");
    for (name, extra) in [
        ("raid0", &["--scheme", "raid0", "--time", "1"][..]),
        ("open", &["--scheme", "swan0", "--rate-iops", "1000", "--time", "1"]),
        ("empty-log", &["--scheme", "lograid0", "--time", "0.02", "--interval-ms", "10"]),
    ] {
        let out = tmp.join(name);
        let mut args = vec!["sim", "--rw", "randread", "--ssd-capacity", "256MiB", "--quiet"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().expect("utf-8")]);
        ok(&args);
        let s: Value = serde_json::from_str(&read(&out.join("summary.json"))).expect("summary.json");
        assert!(num(&s, "requests") > 0.0, "{name}: no reads completed");
    }
}

#[test]
fn unknown_command_and_experiment() {
    fails(&["frobnicate"], &["frobnicate"]);
    fails(&["repro", "fig99"], &["fig99", "fig5", "fig4b", "fig12", "simple-ssd"]);
    fails(&["repro", "fig4b", "--age-spread", "1.5"], &["--age-spread 1.5", "between 0 and 1"]);
    fails(&["repro", "harmonia-fig7", "--age-spread", "0.5"], &["--age-spread", "SWAN reproductions"]);
}

// ---------------------------------------------------------------------------------------------
// repro

#[test]
fn repro_ssd_spread_small() {
    let tmp = TempDir::new("repro-ssd-spread");
    let out_dir = tmp.join("ssd-spread");
    let out = out_dir.to_str().expect("utf-8");
    let args =
        ["repro", "ssd-spread", "--ssd-gib", "0.25", "--footprint", "1", "--seeds", "1", "--quiet", "--out", out];
    let stdout = ok(&args);
    assert!(stdout.starts_with("swan repro ssd-spread: 18 runs"), "{stdout}");
    // Each varied run names its slowest SSD; each cell compares identical and varied SSDs.
    assert!(stdout.contains("busiest=slow") && stdout.contains("varied mean (min–max)"), "{stdout}");
    let claims: Vec<&str> = stdout.lines().filter(|l| l.starts_with("Fig. ")).collect();
    for fig in ["Fig. 4(b): Log-RAID0 degrades", "Fig. 4(b): SWAN0 improves", "Fig. 4(a)", "Fig. 5(b)"] {
        assert!(claims.iter().any(|c| c.starts_with(fig)), "no {fig} claim:\n{stdout}");
    }
    assert!(stdout.lines().any(|l| l.starts_with("cause:")), "no cause line:\n{stdout}");
    // The varied runs really vary: per-SSD speed factors in summary.json, not all 1.
    let s: Value = serde_json::from_str(&read(&out_dir.join("fig5-lograid0-8SSD-varied-seed1").join("summary.json")))
        .expect("summary.json parses");
    let factors: Vec<f64> =
        s["ssd_load"].as_array().expect("ssd_load").iter().map(|l| l["speed_factor"].as_f64().unwrap()).collect();
    assert_eq!(factors.len(), 8);
    assert!(factors.iter().any(|&f| (f - 1.0).abs() > 0.01), "{factors:?}");
}

#[test]
fn repro_ycsb_replays_each_schemes_trace_by_phase() {
    let tmp = TempDir::new("repro-ycsb");
    let out_dir = tmp.join("ycsb");
    let out = out_dir.to_str().expect("utf-8");
    let stdout = ok(&["repro", "ycsb", "--seeds", "1", "--quiet", "--out", out]);
    assert!(stdout.starts_with("swan repro ycsb:"), "{stdout}");
    for title in ["Fig. 8:", "Fig. 9:", "Fig. 10/11: read p99.9", "Table 4:"] {
        assert!(stdout.contains(title), "no {title}:\n{stdout}");
    }
    let claims = stdout.lines().filter(|l| l.starts_with("claim: ")).count();
    assert_eq!(claims, 10, "{stdout}");
    for scheme in ["raid4", "raid5", "lograid4", "swan4"] {
        for mode in ["closed", "recorded"] {
            let s: Value = serde_json::from_str(&read(&out_dir.join(format!("{scheme}-{mode}-seed1/summary.json"))))
                .expect("summary.json parses");
            let windows = s["windows"].as_array().unwrap_or_else(|| panic!("{scheme} {mode}: no windows"));
            let names: Vec<&str> = windows.iter().map(|w| w["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["fill", "mkfs", "load", "a", "b", "c", "d"], "{scheme} {mode}");
            // Every phase of the trace was replayed, and the requests add up to the run's.
            let per_window: u64 =
                windows.iter().map(|w| w["reads"].as_u64().unwrap() + w["writes"].as_u64().unwrap()).sum();
            assert!(per_window > 0 && per_window <= s["requests"].as_u64().unwrap(), "{scheme} {mode}");
            assert!(windows[2]["writes"].as_u64().unwrap() > 0, "the Load writes");
            assert!(windows[5]["reads"].as_u64().unwrap() > 0, "phase c reads");
            // The simulated array is the one swan create made: its volume is the recorded one.
            assert_eq!(s["options"]["array"]["rgroups"].as_u64(), Some(3));
            assert_eq!(s["options"]["array"]["ssds_per_rgroup"].as_u64(), Some(3));
        }
    }
}

#[test]
fn repro_fig5_small() {
    let tmp = TempDir::new("repro-fig5");
    let out_dir = tmp.join("fig5");
    let out = out_dir.to_str().expect("utf-8");
    let stdout = ok(&["repro", "fig5", "--ssd-gib", "0.25", "--footprint", "1", "--quiet", "--out", out]);
    assert!(stdout.starts_with("swan repro fig5:"), "{stdout}");
    assert!(stdout.contains("seed 1"), "the seed is printed:\n{stdout}");

    // The comparison table: a header and a row for each scheme.
    let header = stdout.lines().find(|l| l.starts_with("scheme")).unwrap_or_else(|| panic!("no table:\n{stdout}"));
    for col in ["SSDs", "GC onset", "write MB/s", "WAF-a", "p99"] {
        assert!(header.contains(col), "table header lacks {col}: {header}");
    }
    for scheme in ["raid0", "lograid0", "swan0"] {
        assert!(stdout.lines().any(|l| l.split_whitespace().next() == Some(scheme)), "no {scheme} row:\n{stdout}");
    }

    // The paper's claims, each with a verdict.
    let claims: Vec<&str> = stdout.lines().filter(|l| l.starts_with("Fig. ")).collect();
    for fig in ["Fig. 4(a)", "Fig. 5(a)", "Fig. 5(b)"] {
        assert!(claims.iter().any(|c| c.starts_with(fig)), "no {fig} claim:\n{stdout}");
    }
    for c in &claims {
        assert!(c.contains("agrees") || c.contains("DISAGREES"), "claim without a verdict: {c}");
    }

    // Run directories and figures.
    let figures = out_dir.join("figures");
    let written = svgs(&figures);
    assert!(written.iter().any(|p| p.ends_with("fig5_throughput.svg")), "figures: {written:?}");
    assert!(stdout.contains("figures written to"), "{stdout}");
    let runs: Vec<PathBuf> = std::fs::read_dir(&out_dir)
        .expect("list repro out")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("summary.json").is_file())
        .collect();
    assert!(runs.len() >= 3, "expected a run directory per scheme, found {runs:?}");
}

#[test]
fn sim_prefill_fills_the_log_before_the_run() {
    let tmp = TempDir::new("sim-prefill");
    let dir = tmp.join("run");
    let d = dir.to_str().expect("utf-8 temp path");
    let args = [
        "sim",
        "--scheme",
        "swan0",
        "--ssd-capacity",
        "256MiB",
        "--time",
        "0.2",
        "--prefill",
        "--spare",
        "15",
        "--quiet",
        "--out",
        d,
    ];
    ok(&args);
    let s: Value = serde_json::from_str(&read(&dir.join("summary.json"))).expect("summary.json parses");
    let p = &s["prefill"];
    assert!(num(p, "victims") > 0.0, "the pre-fill ran no GC: {p}");
    assert!(num(p, "user_blocks") > 2.0 * num(&s, "volume_blocks"), "{p}");
    sim_fails(&["--scheme", "raid0", "--prefill"], &["--prefill", "log-structured"]);
    sim_fails(&["--scheme", "raid0", "--spare", "10"], &["--spare", "log-structured"]);
    // One unit with `swan create`: per cent, and a bare fraction is named as the mistake it is.
    sim_fails(&["--spare", "95"], &["--spare", "below 90"]);
    sim_fails(&["--spare", "0.15"], &["--spare", "write 15 for 15 %"]);
}

#[test]
fn triple_a_runs_both_arrays_and_names_bad_input() {
    let out = ok(&["triple-a", "--preset", "4x8", "--hot", "2", "--iodepth", "64", "--seconds", "0.02"]);
    assert!(out.contains("non-autonomic") && out.contains("triple-a"), "{out}");
    fails(&["triple-a", "--preset", "4x17"], &["4x17", "4x8, 4x12, 4x16, 4x20"]);
    fails(&["triple-a", "--rw", "seqread"], &["--rw seqread", "randread, randwrite or randrw"]);
    fails(&["triple-a", "--rw", "randrw", "--write-share", "1.5"], &["--write-share 1.5", "[0, 1]"]);
    fails(&["triple-a", "--gc", "--gc-laggard", "sometimes"], &["--gc-laggard sometimes", "blind, laggard, exempt"]);
    fails(&["triple-a", "--gc"], &["--gc", "--blocks-per-plane"]);
    fails(&["triple-a", "--laggard-detection", "psychic"], &["--laggard-detection psychic", "latency, queue, both"]);
    fails(&["triple-a", "--gc-op", "0.2"], &["--gc"]);
    fails(
        &["triple-a", "--gc", "--blocks-per-plane", "64", "--pages-per-block", "16", "--gc-op", "0.7"],
        &["--gc-op 0.7"],
    );
    fails(&["triple-a", "--blocks-per-plane", "0"], &["--blocks-per-plane", "blocks_per_plane"]);
    let gc = [
        "triple-a",
        "--preset",
        "4x8",
        "--gc",
        "--blocks-per-plane",
        "64",
        "--pages-per-block",
        "4",
        "--rw",
        "randrw",
        "--hot",
        "2",
        "--iodepth",
        "256",
        "--seconds",
        "0.05",
        "--gc-laggard",
        "exempt",
    ];
    let out = ok(&gc);
    assert!(
        out.contains("non-autonomic gc") && out.contains("triple-a gc-exempt") && out.contains("collections"),
        "{out}"
    );
    fails(&["triple-a", "--policy", "greedy"], &["greedy", "migration-only"]);
    fails(&["triple-a", "--hot", "65"], &["65 hot clusters", "room for 64"]);
    fails(&["triple-a", "--rate", "0"], &["arrival rate"]);
    fails(&["triple-a", "--seconds", "0"], &["positive time"]);
    fails(&["triple-a", "--t-sla-us", "0"], &["--t-sla-us 0", "t_SLA"]);
    fails(&["triple-a", "--endpoint-lanes", "3"], &["x3", "not a PCIe link width"]);
    fails(&["triple-a", "--t-read-us", "0"], &["t_read_ns"]);
}

#[test]
fn apas_runs_both_policies_per_period_and_names_bad_input() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces/tpcc-small.mqsim");
    let trace = trace.to_str().unwrap();
    let dir = TempDir::new("apas");
    let json = dir.join("apas.json");
    let args = ["apas", "--trace", trace, "--accel", "0.01", "--json", json.to_str().unwrap()];
    let out = ok(&args);
    assert!(out.contains("16 applications"), "{out}");
    assert!(out.contains("apas_mean") && out.contains("hwsr_mean"), "{out}");
    assert!(out.contains("apas: 6999 requests") && out.contains("hwsr: 6999 requests"), "{out}");
    let v: Value = serde_json::from_str(&read(&json)).unwrap();
    let reports = v.as_array().unwrap();
    assert_eq!(reports.len(), 2);
    for r in reports {
        let rows = r["rows"].as_array().unwrap();
        assert!(rows.len() >= 20, "{} periods", rows.len());
        assert!(num(&r["summary"], "mean_ms") > 0.0);
    }
    // The paper's period: the whole trace in one.
    let one = ok(&["apas", "--trace", trace, "--policy", "apas", "--period-s", "10000"]);
    assert!(one.contains("1 periods of 10000 s"), "{one}");
    let t = ["apas", "--trace", trace];
    fails(&[&t[..], &["--policy", "lru"]].concat(), &["--policy 'lru'", "apas, hwsr or both"]);
    fails(&[&t[..], &["--accel", "0"]].concat(), &["--accel 0", "positive"]);
    fails(&[&t[..], &["--disks", "0"]].concat(), &["--disks 0"]);
    fails(&[&t[..], &["--band-mib", "0.001"]].concat(), &["--band-mib 0.001", "4 KiB"]);
    fails(&[&t[..], &["--period-s", "0"]].concat(), &["--period-s 0"]);
    fails(&[&t[..], &["--cache-mib", "0"]].concat(), &["--cache-mib 0"]);
    fails(&[&t[..], &["--cache-percent", "101"]].concat(), &["--cache-percent 101"]);
    fails(&[&t[..], &["--chunk-mib", "0.001"]].concat(), &["--chunk-mib 0.001", "4 KiB"]);
    fails(&[&t[..], &["--disk-fill", "full"]].concat(), &["--disk-fill 'full'", "auto or a fraction"]);
    fails(&[&t[..], &["--disk-fill", "0.99"]].concat(), &["--disk-fill 0.99", "spare bands"]);
    fails(&[&t[..], &["--cache-mib", "0.01"]].concat(), &["cache", "16 applications"]);
    fails(&["apas", "--trace", "/nonexistent/trace.csv"], &["/nonexistent/trace.csv"]);
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let v = ok(&["--version"]);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    let expected = match (std::env::var("SWAN_COMMIT"), head) {
        (Ok(set), _) => set,
        (Err(_), Some(hash)) => hash,
        (Err(_), None) => "unknown".into(),
    };
    assert!(v.contains(&format!("(commit {expected})")), "{v}");
}

#[test]
fn completions_are_valid_shell_and_name_every_command() {
    let script = ok(&["completions", "bash"]);
    for cmd in ["sim", "serve", "triple-a", "apas", "completions", "man"] {
        assert!(script.contains(cmd), "bash completion lacks {cmd}");
    }
    let dir = TempDir::new("completions");
    let path = dir.join("swan.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().expect("bash runs");
    assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
    assert!(ok(&["completions", "zsh"]).contains("#compdef swan"));
    assert!(ok(&["completions", "fish"]).contains("complete -c swan"));
    fails(&["completions", "tcsh"], &["invalid value 'tcsh'"]);
}

#[test]
fn man_pages_render_without_warnings() {
    let dir = TempDir::new("man");
    let out = dir.join("man1");
    ok(&["man", "--out", out.to_str().unwrap()]);
    let mut pages: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    pages.sort();
    for page in ["swan.1", "swan-serve.1", "swan-sim.1", "swan-triple-a.1", "swan-repro.1"] {
        assert!(pages.iter().any(|p| p == page), "{page} missing from {pages:?}");
    }
    // Rendered by man(1), as a reader would see it (scripts/test.sh installs man-db).
    let rendered = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(out.join("swan-serve.1"))
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .output()
        .expect("man(1) is installed (scripts/test.sh installs man-db)");
    assert!(rendered.status.success(), "{}", text(&rendered.stderr));
    assert!(text(&rendered.stderr).trim().is_empty(), "warnings: {}", text(&rendered.stderr));
    let page = text(&rendered.stdout);
    assert!(page.contains("swan serve") && page.contains("--listen"), "{page}");
    // Without --out, the top page goes to standard output.
    assert!(ok(&["man"]).starts_with(".ie"), "swan man prints a roff page");
}

#[test]
fn triple_a_replays_a_trace_and_names_a_bad_line() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces");
    let hm = traces.join("msr-hm_0-excerpt.csv");
    let hm = hm.to_str().unwrap();
    let out = ok(&["triple-a", "--trace", hm, "--preset", "4x8", "--seconds", "0.02"]);
    for needle in ["msr format", "timestamps ignored", "looped", "no address wraps", "non-autonomic", "triple-a"] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    assert!(out.contains("passes over the trace"), "{out}");
    let dir = TempDir::new("triple-a-trace");
    let bad = dir.join("bad.mqsim");
    std::fs::write(&bad, "0 0 0 8 1\n1000 0 8 eight 0\n").unwrap();
    let bad = bad.to_str().unwrap();
    fails(&["triple-a", "--trace", bad, "--trace-format", "mqsim"], &[&format!("{bad}:2:"), "field 4"]);
    fails(&["triple-a", "--trace", hm, "--hot", "2"], &["--hot", "--trace"]);
    fails(&["triple-a", "--trace", hm, "--format", "csv"], &["csv", "mqsim"]);
}

#[test]
fn sim_read_rules_refuse_what_the_scheme_cannot_do() {
    sim_fails(&["--scheme", "swan0", "--parity-reads", "on"], &["--parity-reads on", "swan0", "no parity"]);
    sim_fails(&["--scheme", "raid5", "--parity-reads", "on"], &["--parity-reads on", "writes in place"]);
    sim_fails(&["--read-priority", "maybe"], &["--read-priority", "neither on nor off"]);
    sim_fails(&["--parity-read-gain-us", "100"], &["--parity-read-gain-us", "needs --parity-reads on"]);
}

#[test]
fn sim_swan5_reports_reads_by_rgroup_role_and_reads_around() {
    let tmp = TempDir::new("read-rules");
    let dir = tmp.join("run");
    let d = dir.to_str().expect("utf-8");
    let args = [
        "sim",
        "--scheme",
        "swan5",
        "--rgroups",
        "3",
        "--ssds-per-rgroup",
        "3",
        "--ssd-capacity",
        "256MiB",
        "--spare",
        "25",
        "--rw",
        "randrw",
        "--rwmixread",
        "0.7",
        "--bs",
        "4k",
        "--time",
        "4",
        "--quiet",
        "--parity-reads",
        "on",
        "--out",
        d,
    ];
    let stdout = ok(&args);
    assert!(stdout.contains("reads by R-group role") && stdout.contains("collecting back-end"), "{stdout}");
    assert!(stdout.contains("reads around a busy SSD"), "{stdout}");
    let s: Value = serde_json::from_str(&read(&dir.join("summary.json"))).expect("summary.json parses");
    let roles = s["read_roles"].as_array().expect("read_roles for SWAN");
    let reads: f64 = roles.iter().map(|r| num(r, "reads")).sum();
    assert!(reads > 10_000.0, "{reads} reads");
    assert!((roles.iter().map(|r| num(r, "share")).sum::<f64>() - 1.0).abs() < 1e-9);
    assert_eq!(s["options"]["reads"]["parity_min_gain_us"], 500);
    assert!(num(&s, "parity_extra_reads") >= num(&s, "parity_read_blocks"));
}

#[test]
fn sim_over_a_fabric_reports_where_member_io_waited() {
    let tmp = TempDir::new("sim-fabric");
    let dir = tmp.join("run");
    let d = dir.to_str().expect("utf-8 temp path");
    let args = [
        "sim",
        "--fabric",
        "4x8",
        "--scheme",
        "lograid0",
        "--rgroups",
        "1",
        "--ssds-per-rgroup",
        "4",
        "--bs",
        "4k",
        "--ssd-capacity",
        "256MiB",
        "--time",
        "0.05",
        "--quiet",
        "--out",
        d,
    ];
    ok(&args);
    let s: Value = serde_json::from_str(&read(&dir.join("summary.json"))).expect("summary.json parses");
    assert_eq!(s["options"]["fabric"]["preset"], "4x8");
    assert_eq!(s["fabric"]["members"], 4);
    assert!(num(&s["fabric"]["user_write"], "ops") > 1000.0, "user writes crossed the fabric: {}", s["fabric"]);
    assert!(num(&s["fabric"]["user_write"], "latency_us") > 0.0);
}

#[test]
fn sim_over_a_fabric_refuses_what_cannot_run_there() {
    sim_fails(&["--fabric", "4x8", "--rgroups", "9", "--ssds-per-rgroup", "4"], &["36 members", "32 clusters"]);
    sim_fails(&["--fabric", "9x9"], &["--fabric 9x9", "4x16"]);
    sim_fails(&["--fabric", "4x8", "--age", "0.5"], &["--age", "--fabric 4x8"]);
    sim_fails(&["--fabric", "4x8", "--scheme", "harmonia-idle"], &["Harmonia"]);
    let tiny = ["--fabric", "4x8", "--fimm-blocks-per-plane", "1", "--ssd-capacity", "2GiB"];
    sim_fails(&tiny, &["do not fit a cluster"]);
    sim_fails(&["--fimm-gc"], &["--fabric"]);
}
