//! The binary as a whole: `--help` of each command names its options, `--version` names
//! the commit it was built from, shell completions are valid shell, the man pages render
//! without warnings, and an unknown command or experiment is refused by name.

use crate::common::text;
use crate::{fails, ok, TempDir};
use std::process::Command;

fn help_mentions(args: &[&str], needles: &[&str]) {
    let out = ok(args);
    for n in needles {
        assert!(out.contains(n), "`swan {}` does not mention {n:?}:\n{out}", args.join(" "));
    }
}

#[test]
fn help_top_level() {
    help_mentions(&["--help"], &["Usage: swan", "sim", "repro", "report", "plan", "bench", "--version"]);
}

#[test]
fn help_sim() {
    help_mentions(
        &["sim", "--help"],
        &[
            "--scheme",
            "swan0",
            "lograid0",
            "--rgroups",
            "--ssds-per-rgroup",
            "--ssd ",
            "--ssd-capacity",
            "--rw",
            "--bs",
            "--dist",
            "--working-set",
            "--footprint",
            "--time",
            "--seed",
            "--out",
            "--quiet",
            "--ssd-speed-spread",
            "--ssd-slow-fraction",
            "Hao et al.",
            "--fabric",
            "--fimm-gc",
            "switch-major",
            "--reads-overtake-writes",
            "An experiment, off by default",
            "--gc-in-front-end",
            "--gc-groups",
        ],
    );
}

#[test]
fn help_repro() {
    help_mentions(
        &["repro", "--help"],
        &[
            "fig5",
            "fig4b",
            "ssd-spread",
            "ycsb",
            "fig12",
            "simple-ssd",
            "--ssd-gib",
            "--footprint",
            "--full",
            "--seed",
            "--out",
            "--format",
        ],
    );
}

#[test]
fn help_plan() {
    help_mentions(
        &["plan", "--help"],
        &[
            "--erase-ms",
            "--block-read-us",
            "--block-write-us",
            "--segment-blocks",
            "--disk-utilization",
            "--segment-utilization",
            "--network-mbps",
            "--raid",
            "--json",
        ],
    );
}

#[test]
fn help_report() {
    help_mentions(&["report", "--help"], &["RUNS", "--out", "--format"]);
}

#[test]
fn version_names_the_commit_it_was_built_from() {
    let v = ok(&["--version"]);
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| text(&o.stdout).trim().to_string());
    let expected = match (std::env::var("SWAN_COMMIT"), head) {
        (Ok(set), _) => set,
        (Err(_), Some(hash)) => hash,
        (Err(_), None) => "unknown".into(),
    };
    assert!(v.contains(&format!("(commit {expected})")), "{v}");
}

#[test]
fn completions_are_valid_shell_and_name_every_command() {
    let script = ok(&["completions", "bash"]);
    for cmd in ["sim", "serve", "triple-a", "apas", "completions", "man"] {
        assert!(script.contains(cmd), "bash completion lacks {cmd}");
    }
    let dir = TempDir::new("completions");
    let path = dir.join("swan.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().expect("bash runs");
    assert!(check.status.success(), "bash -n: {}", text(&check.stderr));
    assert!(ok(&["completions", "zsh"]).contains("#compdef swan"));
    assert!(ok(&["completions", "fish"]).contains("complete -c swan"));
    fails(&["completions", "tcsh"], &["invalid value 'tcsh'"]);
}

#[test]
fn man_pages_render_without_warnings() {
    let dir = TempDir::new("man");
    let out = dir.join("man1");
    ok(&["man", "--out", out.to_str().unwrap()]);
    let mut pages: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    pages.sort();
    for page in ["swan.1", "swan-serve.1", "swan-sim.1", "swan-triple-a.1", "swan-repro.1"] {
        assert!(pages.iter().any(|p| p == page), "{page} missing from {pages:?}");
    }
    // Rendered by man(1), as a reader would see it (scripts/test.sh installs man-db).
    let rendered = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(out.join("swan-serve.1"))
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .output()
        .expect("man(1) is installed (scripts/test.sh installs man-db)");
    assert!(rendered.status.success(), "{}", text(&rendered.stderr));
    assert!(text(&rendered.stderr).trim().is_empty(), "warnings: {}", text(&rendered.stderr));
    let page = text(&rendered.stdout);
    assert!(page.contains("swan serve") && page.contains("--listen"), "{page}");
    // Without --out, the top page goes to standard output.
    assert!(ok(&["man"]).starts_with(".ie"), "swan man prints a roff page");
}

#[test]
fn unknown_command_and_experiment() {
    fails(&["frobnicate"], &["frobnicate"]);
    fails(&["repro", "fig99"], &["fig99", "fig5", "fig4b", "fig12", "simple-ssd"]);
    fails(&["repro", "fig4b", "--age-spread", "1.5"], &["--age-spread 1.5", "between 0 and 1"]);
    fails(&["repro", "harmonia-fig7", "--age-spread", "0.5"], &["--age-spread", "SWAN reproductions"]);
}

#[test]
fn bench_refuses_an_unknown_host_by_name() {
    fails(&["bench", "--host", "no-such-host.json"], &["--host no-such-host.json"]);
}

/// Every script an operator or researcher runs answers `--help` with its usage on standard
/// output and refuses an argument it does not take, before it does any work.
#[test]
fn every_script_answers_help_and_refuses_unknown_arguments() {
    let scripts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
    let mut names: Vec<_> = std::fs::read_dir(&scripts)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sh"))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "scripts/ holds {} scripts", names.len());
    for script in names {
        let name = script.file_name().unwrap().to_string_lossy().into_owned();
        // Bounded: a script that took the argument for work would otherwise run for minutes.
        let run = |arg: &str| Command::new("timeout").args(["20", "bash"]).arg(&script).arg(arg).output().unwrap();
        let help = run("--help");
        assert!(help.status.success(), "{name} --help: {}", text(&help.stderr));
        assert!(text(&help.stdout).lines().count() >= 3, "{name} --help says too little:\n{}", text(&help.stdout));
        let bad = run("--no-such-option");
        assert!(!bad.status.success(), "{name} accepted --no-such-option");
        assert!(text(&bad.stderr).contains("--no-such-option"), "{name}: {}", text(&bad.stderr));
    }
}
