//! `swan apas`: both policies per period over a real trace, the JSON report, and every bad
//! option named.

use crate::{fails, num, ok, read, TempDir};
use serde_json::Value;
use std::path::Path;

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
    // The experiment knobs say so before the run.
    let exp = ok(&[
        "apas",
        "--trace",
        trace,
        "--accel",
        "0.01",
        "--policy",
        "hwsr",
        "--hwsr-whole-bands-only",
        "--fill-headroom",
        "0.5",
    ]);
    assert!(exp.contains("experiment: HWSR's greedy cleaner leaves partly written bands out"), "{exp}");
    assert!(exp.contains("experiment: each disk starts 0.5 of the trace's writes"), "{exp}");
    let t = ["apas", "--trace", trace];
    fails(&[&t[..], &["--fill-headroom", "-1"]].concat(), &["--fill-headroom -1", "≥ 0"]);
    fails(
        &[&t[..], &["--fill-headroom", "0.5", "--disk-fill", "0.5"]].concat(),
        &["--fill-headroom", "--disk-fill auto only"],
    );
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
fn repro_apas_why_shows_both_causes() {
    let dir = TempDir::new("apas-why");
    let out = dir.join("out");
    let stdout = ok(&["repro", "apas-why", "--seeds", "1", "--quiet", "--out", out.to_str().unwrap()]);
    assert_eq!(read(&out.join("apas-why.txt")), stdout);
    assert!(stdout.contains("== 1. msr-win") && stdout.contains("== 2. tpcc") && stdout.contains("== 3."), "{stdout}");
    // The 8-disk lead and its control: a larger headroom moves the cleaning out of the burst.
    assert!(stdout.contains("8 disks, share 0.25      7.361 /   13.277 (0.55)"), "{stdout}");
    assert!(stdout.contains("8 disks, share 0.5       6.877 /    5.526 (1.24)"), "{stdout}");
    // The greedy cleaner without partly written bands cleans as often as Algorithm 2.
    assert!(stdout.contains("seed 1 hwsr                     53 cleanings"), "{stdout}");
    assert!(stdout.contains("seed 1 hwsr, whole bands only   28 cleanings (0 forced),  0 partly written"), "{stdout}");
}
