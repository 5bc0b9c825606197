//! `swan sim` with bad input: a clear message naming the option (and the file and line where
//! there is one) and a failing status, never a panic, and no run directory written.

use crate::{ok, sim_fails, TempDir, PRESETS, SCHEMES};
use std::path::Path;

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
fn sim_working_set_beyond_the_volume_suggests_one_that_fits() {
    // 0.95 of the raw capacity is more than swan0 exposes with its default 10 % spare.
    let stderr = sim_fails(&["--working-set", "0.95"], &["--working-set 0.95 covers", "or less"]);
    let suggested = stderr
        .split("use --working-set ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no value suggested in: {stderr}"));
    let tmp = TempDir::new("working-set");
    let out = tmp.join("run");
    let out = out.to_str().expect("utf-8 temp path");
    ok(&[
        "sim",
        "--ssd-capacity",
        "256MiB",
        "--footprint",
        "0.05",
        "--quiet",
        "--working-set",
        suggested,
        "--out",
        out,
    ]);
}

#[test]
fn sim_span_is_the_region_in_bytes_and_must_fit_the_volume() {
    sim_fails(&["--span", "6k"], &["--span", "4 KiB"]);
    sim_fails(&["--span", "64GiB"], &["--span 64GiB is more than the", "the array exposes"]);
    sim_fails(&["--span", "64MiB", "--working-set", "0.5"], &["--span", "--working-set"]);
    let tmp = TempDir::new("span");
    let out = tmp.join("run");
    let out_s = out.to_str().expect("utf-8 temp path");
    // swan5, whose parity members hold no user data: the region is the bytes given, not a
    // share of the raw capacity.
    ok(&[
        "sim",
        "--scheme",
        "swan5",
        "--ssd-capacity",
        "256MiB",
        "--footprint",
        "0.05",
        "--quiet",
        "--span",
        "300MiB",
        "--out",
        out_s,
    ]);
    let summary = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    let v: serde_json::Value = serde_json::from_str(&summary).expect("JSON");
    assert_eq!(v["options"]["workload"]["region_blocks"], 300 * 256, "{}", &summary[..summary.len().min(400)]);
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
fn sim_read_rules_refuse_what_the_scheme_cannot_do() {
    sim_fails(&["--scheme", "swan0", "--parity-reads", "on"], &["--parity-reads on", "swan0", "no parity"]);
    sim_fails(&["--scheme", "raid5", "--parity-reads", "on"], &["--parity-reads on", "writes in place"]);
    sim_fails(&["--read-priority", "maybe"], &["--read-priority", "neither on nor off"]);
    sim_fails(&["--reads-overtake-writes", "maybe"], &["--reads-overtake-writes", "neither on nor off"]);
    sim_fails(
        &["--scheme", "lograid4", "--reads-overtake-writes", "on"],
        &["--reads-overtake-writes on", "lograid4", "no"],
    );
    sim_fails(&["--reads-overtake-writes", "on", "--read-priority", "off"], &["needs", "--read-priority on"]);
    sim_fails(&["--parity-read-gain-us", "100"], &["--parity-read-gain-us", "needs --parity-reads on"]);
}

#[test]
fn sim_gc_experiments_refuse_what_has_no_back_end() {
    sim_fails(&["--gc-in-front-end", "maybe"], &["--gc-in-front-end", "neither on nor off"]);
    sim_fails(
        &["--scheme", "lograid4", "--gc-in-front-end", "on"],
        &["--gc-in-front-end on", "lograid4", "no front-end"],
    );
    sim_fails(&["--scheme", "lograid4", "--gc-groups", "1"], &["--gc-groups", "lograid4", "no back-end"]);
    sim_fails(&["--scheme", "swan4", "--gc-groups", "0"], &["--gc-groups must be at least 1"]);
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
    sim_fails(&["--fabric-placement", "spread"], &["--fabric"]);
    sim_fails(&["--fabric", "4x8", "--fabric-placement", "diagonal"], &["diagonal", "switch-major", "spread"]);
}

#[test]
fn sim_hba_bus_refuses_a_bus_that_cannot_exist() {
    sim_fails(&["--hba-bus", "0"], &["--hba-bus", "above 0"]);
    sim_fails(&["--hba-bus", "fast"], &["--hba-bus", "disksim", "MBPS[:ARB_US]"]);
    sim_fails(&["--hba-bus", "2147:-1"], &["--hba-bus", "arbitration"]);
    sim_fails(&["--hba-bus", "disksim", "--fabric", "4x8"], &["--hba-bus", "--fabric"]);
}
