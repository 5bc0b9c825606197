//! `swan plan`: the paper's R-group count with and without the erase term, as text and
//! JSON; bad input refused; and a closed stdout is SIGPIPE's exit, not a panic.

use crate::common::{assert_no_panic, describe, SWAN};
use crate::{fails, num, ok};
use serde_json::Value;
use std::process::{Command, Stdio};

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
    assert_no_panic("swan plan", &out);
    assert_eq!(out.status.code(), Some(141), "{}", describe("swan plan", &out));
}
