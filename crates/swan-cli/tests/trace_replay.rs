//! Trace replay end to end, with the real binary: every trace in the traces directory
//! (`SWAN_TRACES`, default the repository's `data/traces`) and the fixtures of
//! `tests/fixtures` (DiskSim, SPC, blkparse, Microsoft ETW, which have no real excerpt there)
//!
//! - through `swan sim --trace` on a small array, closed loop and as recorded: every request
//!   replayed, the statement (format, policy, span, volume) printed and in summary.json;
//! - through a real `swan serve` on a loopback port with `swan replay --nbd`, closed loop
//!   (and one trace as recorded), then `swan check` clean after a clean stop;
//! - malformed lines: an error naming FILE:LINE from both commands, or with `--skip-bad` a
//!   count of what was skipped.
//!
//! The traces are part of the repository: a missing directory fails the tests over it.

mod common;

use common::{check_clean, describe, ok, run, text, Server, SWAN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(300);

fn traces_dir() -> PathBuf {
    match std::env::var_os("SWAN_TRACES") {
        Some(d) => d.into(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/traces"),
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    ["small.disksim", "small.spc", "small.blkparse", "small-etw.csv"].iter().map(|f| dir.join(f)).collect()
}

/// The traces (every file but README.md).
fn traces_in_repo() -> Vec<PathBuf> {
    let dir = traces_dir();
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the traces directory {} cannot be read ({e}; set SWAN_TRACES)", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no trace", dir.display());
    files
}

fn tmpdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("swan-trace-{name}-")).tempdir().expect("a temporary directory")
}

/// The number in "N requests (" of the replay statement.
fn stated_requests(stdout: &str) -> u64 {
    let line = stdout.lines().find(|l| l.starts_with("trace ")).unwrap_or_else(|| panic!("no statement:\n{stdout}"));
    let before = line.split(" requests (").next().unwrap();
    before.rsplit(' ').next().unwrap().parse().unwrap_or_else(|_| panic!("no request count in '{line}'"))
}

fn sim(trace: &Path, mode: &str, out: &Path, extra: &[&str]) -> String {
    let mut cmd = Command::new(SWAN);
    cmd.args(["sim", "--trace"]).arg(trace).args(["--replay", mode]);
    cmd.args(["--rgroups", "2", "--ssds-per-rgroup", "2", "--ssd-capacity", "256MiB", "--age", "0", "--quiet"]);
    cmd.arg("--out").arg(out).args(extra);
    ok(&mut cmd, &format!("swan sim --trace {}", trace.display()), DEADLINE)
}

fn check_sim(trace: &Path, mode: &str, dir: &Path) {
    let out = dir.join(format!("{}-{}", trace.file_name().unwrap().to_string_lossy(), mode.replace('=', "")));
    let stdout = sim(trace, mode, &out, &[]);
    let n = stated_requests(&stdout);
    assert!(stdout.contains(&format!("replayed {n} requests of {}", trace.display())), "{stdout}");
    assert!(stdout.contains("address policy wrap: the trace spans"), "{stdout}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["requests"].as_u64(), Some(n), "{}", trace.display());
    assert_eq!(summary["replay"]["requests"].as_u64(), Some(n));
    assert_eq!(summary["replay"]["mode"].as_str(), Some(mode));
    assert_eq!(summary["options"]["trace"]["mode"].as_str(), Some(mode));
    assert!(summary["replay"]["volume_bytes"].as_u64().unwrap() > 0);
    eprintln!("sim {mode}: {} requests of {} in {} simulated s", n, trace.display(), summary["sim_s"]);
}

#[test]
fn every_trace_replays_through_the_simulator() {
    let dir = tmpdir("sim");
    let mut traces = fixtures();
    traces.extend(traces_in_repo());
    for t in &traces {
        check_sim(t, "closed=32", dir.path());
        check_sim(t, "recorded", dir.path());
    }
    // accel and scale, once.
    let stdout = sim(&traces[0], "accel=100", &dir.path().join("accel"), &["--address-policy", "scale"]);
    assert!(stdout.contains("address policy scale"), "{stdout}");
}

fn serve(dir: &Path) -> (Server, Vec<PathBuf>) {
    let members: Vec<PathBuf> = (0..6).map(|i| dir.join(format!("m{i}"))).collect();
    let mut cmd = Command::new(SWAN);
    cmd.args(["create", "--scheme", "swan0", "--rgroups", "3", "--ssds-per-rgroup", "2", "--member-size", "64M"]);
    cmd.args(&members).env("SWAN_RUN_DIR", dir);
    ok(&mut cmd, "swan create", DEADLINE);
    (Server::start(dir, &members), members)
}

fn replay(trace: &Path, uri: &str, mode: &str, extra: &[&str], dir: &Path) -> (String, Value) {
    let json = dir.join("replay.json");
    let mut cmd = Command::new(SWAN);
    cmd.arg("replay").arg(trace).args(["--nbd", uri, "--replay", mode, "--json"]).arg(&json).args(extra);
    let stdout = ok(&mut cmd, &format!("swan replay {}", trace.display()), DEADLINE);
    let summary = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (stdout, summary)
}

#[test]
fn every_trace_replays_through_the_server() {
    let dir = tmpdir("server");
    let (server, members) = serve(dir.path());
    let uri = server.uri();
    let mut traces = fixtures();
    traces.extend(traces_in_repo());
    for t in &traces {
        // Whole traces: the CloudPhysics excerpt (114 k requests, 2.5 GiB written over a
        // 252 MiB volume, so GC all the way) takes about 40 s.
        let (stdout, s) = replay(t, &uri, "closed=32", &[], dir.path());
        let n = stated_requests(&stdout);
        assert!(stdout.contains(&format!("replayed {n} requests (")), "{stdout}");
        assert_eq!(s["requests"].as_u64(), Some(n));
        assert_eq!(s["reads"].as_u64().unwrap() + s["writes"].as_u64().unwrap(), n);
        assert!(s["max_in_flight"].as_u64().unwrap() <= 32);
        assert!(stdout.contains("address policy wrap: the trace spans"), "{stdout}");
        eprintln!(
            "server closed=32: {n} requests of {} in {:.3} s, {:.0} IOPS",
            t.display(),
            s["wall_s"].as_f64().unwrap(),
            s["iops"].as_f64().unwrap()
        );
    }
    // Timed replay: the DiskSim fixture spans about 60 ms as recorded.
    let (stdout, s) = replay(&traces[0], &uri, "recorded", &[], dir.path());
    assert!(stdout.contains("sent behind the trace's schedule"), "{stdout}");
    assert!(s["wall_s"].as_f64().unwrap() >= s["replay"]["trace_duration_s"].as_f64().unwrap());
    server.stop();
    check_clean(&members, dir.path(), "after the replays");
}

/// `src` with `bad` inserted as line `at` (1-based), in `dir`.
fn with_bad_line(src: &Path, at: usize, bad: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(src).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(at - 1, bad);
    let p = dir.join(src.file_name().unwrap());
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

#[test]
fn malformed_lines_are_errors_naming_file_and_line_unless_skipped() {
    let dir = tmpdir("bad");
    let [disksim, spc, blkparse, etw] = <[PathBuf; 4]>::try_from(fixtures()).unwrap();
    let cases = [
        (with_bad_line(&disksim, 30, "12.5 0 100 8 read", dir.path()), 30, "field 5 (flags)"),
        (with_bad_line(&spc, 7, "0,100,4096,X,0.5", dir.path()), 7, "field 4 (Opcode)"),
        (with_bad_line(&blkparse, 12, "  8,0    0   99  0.5  1  D   W 100 + eight [dd]", dir.path()), 12, "field 10"),
        (
            with_bad_line(&etw, 20, "DiskWrite, 1100000, System (   4), 88, 0x1, 0x1000, 0x2ZZ, 5, 0", dir.path()),
            20,
            "field 7 (IOSize)",
        ),
    ];
    for (file, line, what) in &cases {
        let mut cmd = Command::new(SWAN);
        cmd.args(["sim", "--trace"]).arg(file).args(["--replay", "closed=4", "--age", "0", "--quiet"]);
        cmd.arg("--out").arg(dir.path().join("out"));
        let out = run(&mut cmd, "swan sim with a bad line", DEADLINE);
        assert!(!out.status.success(), "{}", describe("swan sim with a bad line", &out));
        let err = text(&out.stderr);
        assert!(err.contains(&format!("{}:{line}: {what}", file.display())), "{err}");
        assert!(err.contains("--skip-bad"), "{err}");
        let stdout = sim(file, "closed=4", &dir.path().join("skip"), &["--skip-bad"]);
        assert!(stdout.contains("1 malformed skipped"), "{stdout}");
        assert!(stdout.contains("1 malformed lines skipped"), "{stdout}");
    }
    // swan replay: the same error before anything is sent; --skip-bad replays the rest.
    let (server, _members) = serve(dir.path());
    let (file, line, what) = &cases[1];
    let out = run(
        Command::new(SWAN).arg("replay").arg(file).args(["--nbd", &server.uri()]),
        "swan replay with a bad line",
        DEADLINE,
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains(&format!("{}:{line}: {what}", file.display())), "{}", text(&out.stderr));
    let (stdout, s) = replay(file, &server.uri(), "closed=8", &["--skip-bad"], dir.path());
    assert_eq!(s["replay"]["skipped_lines"].as_u64(), Some(1));
    assert_eq!(s["requests"].as_u64(), Some(60), "{stdout}");
    assert!(stdout.contains("1 malformed lines skipped"), "{stdout}");
    // Bad URIs and options are named.
    let out = run(Command::new(SWAN).arg("replay").arg(file).args(["--nbd", "localhost:10809"]), "bad uri", DEADLINE);
    assert!(text(&out.stderr).contains("bad NBD URI 'localhost:10809'"), "{}", text(&out.stderr));
    let out =
        run(Command::new(SWAN).args(["sim", "--trace"]).arg(file).args(["--replay", "fast"]), "bad mode", DEADLINE);
    assert!(text(&out.stderr).contains("unknown replay mode 'fast'"), "{}", text(&out.stderr));
    let out =
        run(Command::new(SWAN).args(["sim", "--trace"]).arg(file).args(["--rw", "randread"]), "conflict", DEADLINE);
    assert!(text(&out.stderr).contains("cannot be used with"), "{}", text(&out.stderr));
    server.stop();
}
