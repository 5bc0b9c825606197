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
    // Rebuild when this checkout's HEAD moves. Its reflog records every move (commit,
    // checkout, reset) and nothing else; the shared refs/heads directory would also change
    // with every commit in any other worktree of the repository, rebuilding for nothing.
    let reflog = git(&["rev-parse", "--git-path", "logs/HEAD"]).filter(|p| std::path::Path::new(p).exists());
    let watched: Vec<String> = match reflog {
        Some(log) => vec![log],
        // No reflog (turned off): HEAD itself, and the refs a commit may rewrite.
        None => {
            ["HEAD", "refs/heads", "packed-refs"].iter().filter_map(|p| git(&["rev-parse", "--git-path", p])).collect()
        }
    };
    for p in watched {
        println!("cargo:rerun-if-changed={p}");
    }
    println!("cargo:rustc-env=SWAN_COMMIT={}", commit.unwrap_or_else(|| "unknown".into()));
}
