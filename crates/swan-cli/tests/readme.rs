//! The README's commands, run as a newcomer would type them: its two set-up commands are the
//! ones CI runs, and both quick starts run line for line, with the `swan` this test was built
//! with first on the `PATH`. A README edit that breaks a quick start fails here.

mod common;

use common::{describe, require, SWAN};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).expect("README.md at the repository's top")
}

/// The body of the first ```` ```sh ```` block after the heading `heading` (or after the
/// title, for `None`).
fn sh_block(readme: &str, heading: Option<&str>) -> String {
    let from = match heading {
        Some(h) => readme.find(&format!("\n{h}\n")).unwrap_or_else(|| panic!("README has no heading `{h}`")),
        None => 0,
    };
    let rest = &readme[from..];
    let start = rest.find("```sh\n").unwrap_or_else(|| panic!("no ```sh block after {heading:?}")) + "```sh\n".len();
    let len = rest[start..].find("```").expect("an unterminated ```sh block");
    rest[start..start + len].to_string()
}

/// Runs `script` with bash, stopping at its first failing command, in `dir`.
fn run_block(script: &str, dir: &Path) -> std::process::Output {
    let bin = Path::new(SWAN).parent().unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(std::env::split_paths(&path))).unwrap();
    Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("bash runs")
}

#[test]
fn the_two_set_up_commands_are_what_ci_runs() {
    let top = sh_block(&readme(), None);
    let lines: Vec<&str> = top.lines().collect();
    assert_eq!(lines, ["cargo run --release", "scripts/test.sh"], "the README must open with exactly the two commands");
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "exec scripts/test.sh"), ".ci/run must call scripts/test.sh:\n{ci}");
    // `cargo run` names no binary: it works only while the workspace has exactly one, swan
    // (`swan` with no arguments runs the Fig. 5 reproduction).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(repo())
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "{}", describe("cargo metadata", &out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bins: Vec<&str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap())
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(bins, ["swan"], "`cargo run` needs the workspace's only binary to be swan");
}

#[test]
fn the_simulator_quick_start_runs_as_written() {
    let script = sh_block(&readme(), Some("## Quick start: the simulator"));
    assert!(script.lines().all(|l| l.starts_with("swan ")), "every line is a swan command:\n{script}");
    // From the repository's top, as the README says, but writing its runs into a scratch
    // directory: `data` is linked there.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("data"), dir.path().join("data")).unwrap();
    let out = run_block(&script, dir.path());
    assert!(out.status.success(), "{}", describe(&script, &out));
    for run in ["out/sim/summary.json", "out/hm0/summary.json"] {
        assert!(dir.path().join(run).is_file(), "{run} not written\n{}", describe(&script, &out));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("R-group(s)") && stdout.contains("triple-a"), "{stdout}");
}

#[test]
fn the_server_quick_start_runs_as_written() {
    for (tool, package) in [("nbdinfo", "libnbd-bin"), ("nbdcopy", "libnbd-bin"), ("nbdkit", "nbdkit")] {
        require(tool, package);
    }
    let script = sh_block(&readme(), Some("## Quick start: the server"));
    let dir = tempfile::tempdir().unwrap();
    // The block makes its own scratch directory; TMPDIR keeps it inside ours, and a deadline
    // keeps a server that never stops from hanging the suite.
    let guarded = format!("export TMPDIR={}\n{script}", dir.path().display());
    let out = run_block(&format!("timeout 120 bash -euo pipefail -c {}", shell_quote(&guarded)), dir.path());
    assert!(out.status.success(), "{}", describe(&script, &out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("export-size:"), "nbdinfo saw no export:\n{stdout}");
    assert!(stdout.contains("user written 64 MiB"), "swan status did not count nbdcopy's 64 MiB:\n{stdout}");
    assert!(stdout.trim_end().ends_with("clean"), "swan check did not end clean:\n{stdout}");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
