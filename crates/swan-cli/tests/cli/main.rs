//! End-to-end tests of the `swan` binary's offline commands, a module a command: help and
//! the binary as a whole, `sim` output files (crates/swan-sim/OUTPUT.md) and determinism,
//! `sim`'s refusals of bad input, `report`, `plan`, `repro`, `triple-a`, `apas`, and an ETW
//! trace through the commands that replay traces. Every
//! refusal is a clear message and a failing status, never a panic.
//!
//! Every run is small: 8 SSDs of 256 MiB (the smallest the SATA preset accepts) and a
//! footprint of 1× the array's capacity, well under a second of wall time each. One binary
//! with a module a command: one link for all of them.

#[path = "../common/mod.rs"]
mod common;

mod apas;
mod help;
mod plan;
mod report;
mod repro;
mod sim;
mod sim_errors;
mod trace_etw;
mod triple_a;

use common::{assert_failed, assert_no_panic, describe, run, text, SWAN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const SMALL: &[&str] = &["--ssd-capacity", "256MiB", "--footprint", "1", "--quiet"];
const PRESETS: &[&str] =
    &["sata850pro", "sata850pro-blockftl", "harmonia", "openchannel", "apas-slc", "x25e", "ultradrive-gx"];
const SCHEMES: &[&str] = &["raid0", "raid4", "raid5", "lograid0", "lograid4", "lograid5", "swan0", "swan4", "swan5"];

/// A fresh directory under the system temp dir, named after the test, removed when dropped.
struct TempDir(tempfile::TempDir);

impl TempDir {
    fn new(name: &str) -> Self {
        let prefix = format!("swan-cli-test-{name}-");
        Self(tempfile::Builder::new().prefix(&prefix).tempdir().expect("create temp dir"))
    }

    fn join(&self, p: &str) -> PathBuf {
        self.0.path().join(p)
    }
}

/// No command here takes more than a second or two; a run that goes on is a hang.
const DEADLINE: Duration = Duration::from_secs(60);

/// Runs `swan args` to completion, killing it (and failing) after [`DEADLINE`].
fn swan(args: &[&str]) -> Output {
    run(Command::new(SWAN).args(args), &what(args), DEADLINE)
}

fn what(args: &[&str]) -> String {
    format!("swan {}", args.join(" "))
}

/// Runs `swan args`, asserts success; returns stdout.
fn ok(args: &[&str]) -> String {
    let out = swan(args);
    assert_no_panic(&what(args), &out);
    assert!(out.status.success(), "expected success: {}", describe(&what(args), &out));
    text(&out.stdout)
}

/// Runs `swan args`, asserts a clean failure whose stderr contains every one of `needles`;
/// returns stderr.
fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = swan(args);
    assert_failed(&what(args), &out);
    let stderr = text(&out.stderr);
    for n in needles {
        assert!(stderr.contains(n), "stderr lacks {n:?}: {}", describe(&what(args), &out));
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

/// The SVG files in `dir`, sorted; each must be a whole SVG document.
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
