//! `swan sim` runs: every output file crates/swan-sim/OUTPUT.md promises, with sane values,
//! for an in-place, a Log-RAID and a SWAN array; the same seed gives the same files; the
//! pre-fill, read-only workloads, reads by R-group role and a run over a fabric.

use crate::{num, num_or_null, ok, read, sim_fails, TempDir, SMALL};
use serde_json::Value;

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
    assert_eq!(s["options"]["fabric"].get("placement"), None, "switch-major, the default, is not written");
    assert_eq!(s["fabric"]["uplink_busy"].as_array().map(Vec::len), Some(1), "four members under one switch");

    // The same members spread over the switches: one each, and the summary says so.
    let spread = tmp.join("spread");
    let mut args = args.to_vec();
    let out = spread.to_str().expect("utf-8 temp path");
    *args.last_mut().unwrap() = out;
    args.extend_from_slice(&["--fabric-placement", "spread"]);
    ok(&args);
    let s: Value = serde_json::from_str(&read(&spread.join("summary.json"))).expect("summary.json parses");
    assert_eq!(s["options"]["fabric"]["placement"], "spread");
    assert_eq!(s["fabric"]["uplink_busy"].as_array().map(Vec::len), Some(4), "four switches' up-links in use");
}
