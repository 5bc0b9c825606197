//! `swan report`: SVG figures from a run directory, and the missing file named when there
//! is no run.

use crate::{fails, ok, svgs, TempDir, SMALL};

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
