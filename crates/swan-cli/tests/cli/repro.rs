//! `swan repro` at a small size: the comparison table, each of the paper's claims with a
//! verdict, the run directories and figures (Fig. 5, the SSD-spread sweep, YCSB by phase).

use crate::{ok, read, svgs, TempDir};
use serde_json::Value;
use std::path::PathBuf;

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
    // Each claim judged on the measures, by its id.
    for id in [
        "Fig. 4(b) (swan-spread-fig4b-lograid)",
        "Fig. 4(b) (swan-spread-fig4b-swan)",
        "Fig. 4(a) (swan-spread-fig4a)",
        "Fig. 5(b) (swan-spread-fig5b)",
    ] {
        assert!(stdout.lines().any(|l| l.starts_with(id)), "no {id} claim:\n{stdout}");
    }
    let measures: Value = serde_json::from_str(&read(&out_dir.join("measures.json"))).expect("measures.json parses");
    assert_eq!(measures["experiment"], "ssd-spread");
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
    // Each of §5.3's claims judged on the measures, by its id.
    for id in [
        "swan-fig8-load-raid",
        "swan-fig8-load-lograid",
        "swan-fig8-phases",
        "swan-fig9",
        "swan-fig10-writes",
        "swan-fig10-reads",
        "swan-table4-split",
        "swan-table4-latency",
        "swan-table4-order",
    ] {
        assert!(stdout.lines().any(|l| l.contains(&format!(" ({id}): "))), "no {id} claim:\n{stdout}");
    }
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
    let verdicts = [": agrees", ": **disagrees**", ": **partly**", ": calibrated on it", ": **not measured**"];
    for c in &claims {
        assert!(verdicts.iter().any(|v| c.contains(v)), "claim without a verdict: {c}");
    }
    // The measures the verdicts were computed from, for `swan claims`.
    let measures: Value = serde_json::from_str(&read(&out_dir.join("measures.json"))).expect("measures.json parses");
    assert_eq!(measures["experiment"], "fig5");
    assert!(measures["measures"]["swan0.sustained_mbps"]["value"].as_f64().is_some_and(|v| v > 0.0), "{measures}");

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
