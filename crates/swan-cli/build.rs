//! Stamps `swan --version` with the commit it was built from: what an operator quotes in a
//! bug report, and what ties a figure in `repro/` to its code. Outside a git checkout (a
//! source tarball) the commit reads "unknown", or `SWAN_COMMIT` if the packager sets it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=SWAN_COMMIT");
    // Uncommitted changes are not marked: the script reruns when HEAD moves, not on every
    // edit, so such a mark would go stale.
    let commit = std::env::var("SWAN_COMMIT").ok().or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    // Rebuild when HEAD moves: HEAD itself (a checkout) and the branch it points at (a commit).
    for path in ["HEAD", "refs/heads", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(p) = git(&["rev-parse", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={p}/refs/heads");
    }
    println!("cargo:rustc-env=SWAN_COMMIT={}", commit.unwrap_or_else(|| "unknown".into()));
}
