//! `swan triple-a`: both arrays run (synthetic and from a trace, with and without GC), and
//! every bad option or trace line is named.

use crate::{fails, ok, TempDir};
use std::path::Path;

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
    fails(&["triple-a", "--max-in-flight", "0"], &["--max-in-flight 0", "copy budget"]);
    fails(&["triple-a", "--settle-ms=-1"], &["--settle-ms -1", "hysteresis"]);
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
    fails(&["triple-a", "--chunk", "5000"], &["--chunk 5000", "whole number of 4 KiB pages"]);
    fails(&["triple-a", "--chunk", "0"], &["--chunk 0", "positive"]);
    fails(&["triple-a", "--chunk", "lots"], &["--chunk", "lots"]);
    fails(&["triple-a", "--chunk", "1T"], &["--chunk", "holds no 268435456-page chunk"]);
    fails(&["triple-a", "--gc-untimed"], &["--gc"]);
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
    let out = ok(&["triple-a", "--trace", hm, "--preset", "4x8", "--seconds", "0.02", "--chunk", "4MiB"]);
    assert!(out.contains("non-autonomic") && out.contains("passes over the trace"), "{out}");
    let untimed = [
        "triple-a",
        "--trace",
        hm,
        "--preset",
        "4x8",
        "--seconds",
        "0.02",
        "--policy",
        "non-autonomic",
        "--gc",
        "--gc-untimed",
        "--blocks-per-plane",
        "64",
        "--pages-per-block",
        "16",
    ];
    assert!(ok(&untimed).contains("non-autonomic gc-untimed"));
    let dir = TempDir::new("triple-a-trace");
    let bad = dir.join("bad.mqsim");
    std::fs::write(&bad, "0 0 0 8 1\n1000 0 8 eight 0\n").unwrap();
    let bad = bad.to_str().unwrap();
    fails(&["triple-a", "--trace", bad, "--trace-format", "mqsim"], &[&format!("{bad}:2:"), "field 4"]);
    fails(&["triple-a", "--trace", hm, "--hot", "2"], &["--hot", "--trace"]);
    fails(&["triple-a", "--trace", hm, "--format", "csv"], &["csv", "mqsim"]);
}

#[test]
fn triple_a_reads_again_and_splits_requests_by_class_when_asked() {
    let out = ok(&[
        "triple-a",
        "--preset",
        "4x8",
        "--hot",
        "2",
        "--seconds",
        "0.05",
        "--policy",
        "migration-only",
        "--no-shadow-cloning",
        "--max-in-flight",
        "128",
        "--settle-ms",
        "10",
        "--map-after-copy",
        "--by-class",
    ]);
    for want in ["met migration (source)", "clear of migration", "page still being copied", "pages read again"] {
        assert!(out.contains(want), "{want} missing: {out}");
    }
    let plain = ok(&["triple-a", "--preset", "4x8", "--hot", "2", "--seconds", "0.05", "--policy", "migration-only"]);
    assert!(!plain.contains("by class"), "the class table only when asked: {plain}");
}
