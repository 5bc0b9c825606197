//! Arrays on member files: `swan create`, `swan status --json` and `swan check` as the
//! operator runs them, each with its control socket in the test's own directory so parallel
//! tests never share one.

use super::{assert_failed, describe, run, text, Server, SWAN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

pub fn swan(args: &[&str], run_dir: &Path) -> Output {
    run(
        Command::new(SWAN).args(args).env("SWAN_RUN_DIR", run_dir),
        &format!("swan {}", args.join(" ")),
        Duration::from_secs(120),
    )
}

/// `swan` with its control socket (and working directory) in `run_dir`, for a test that
/// adds its own arguments and runs it with [`run`].
pub fn swan_in(run_dir: &Path) -> Command {
    let mut c = Command::new(SWAN);
    c.env("SWAN_RUN_DIR", run_dir).current_dir(run_dir);
    c
}

pub fn status(member: &Path, run_dir: &Path) -> Value {
    let m = member.to_str().expect("utf-8 path");
    let out = swan(&["status", "--json", m], run_dir);
    assert!(out.status.success(), "{}", describe("swan status --json", &out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("swan status --json: {e}: {}", text(&out.stdout)))
}

pub fn u64_of(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` missing from {v}"))
}

/// `swan check` must exit 0 and end its report with the line "clean".
pub fn check_clean(members: &[PathBuf], run_dir: &Path, when: &str) {
    let mut args = vec!["check"];
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, run_dir);
    assert!(
        out.status.success() && text(&out.stdout).lines().any(|l| l.trim() == "clean"),
        "{when}: swan check does not find the array clean\n{}",
        describe("swan check", &out)
    );
}

/// `swan create` of a small RAID0 array (2 members of 64 MiB) in `dir`; returns its members.
pub fn small_array(dir: &Path) -> Vec<PathBuf> {
    create_array(dir, "raid0", 1, 2, "64M", &[])
}

/// `swan create` of `rgroups` × `ssds` members `m0`, `m1`, ... of `size` in `dir`, with
/// `extra` flags; returns the members in array order.
pub fn create_array(dir: &Path, scheme: &str, rgroups: u32, ssds: u32, size: &str, extra: &[&str]) -> Vec<PathBuf> {
    let members: Vec<PathBuf> = (0..rgroups * ssds).map(|i| dir.join(format!("m{i}"))).collect();
    let out = create(dir, scheme, rgroups, ssds, size, &members, extra);
    assert!(out.status.success(), "{}", describe("swan create", &out));
    members
}

/// `swan create` over `members` in `dir`, whatever its outcome.
pub fn create(
    dir: &Path,
    scheme: &str,
    rgroups: u32,
    ssds: u32,
    member_size: &str,
    members: &[PathBuf],
    extra: &[&str],
) -> Output {
    let (rgroups, ssds) = (rgroups.to_string(), ssds.to_string());
    let mut args = vec!["create", "--scheme", scheme, "--rgroups", &rgroups, "--ssds-per-rgroup", &ssds];
    args.extend(["--member-size", member_size]);
    args.extend(extra);
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    swan(&args, dir)
}

/// The UUID in `swan create`'s "created <scheme> array <uuid>: ..." line.
pub fn created_uuid(out: &Output) -> String {
    let stdout = text(&out.stdout);
    let uuid = stdout
        .split_once(" array ")
        .and_then(|(_, rest)| rest.split(':').next())
        .unwrap_or_else(|| panic!("no \"created ... array UUID:\" in swan create's output:\n{stdout}"));
    assert_eq!(uuid.len(), 36, "not a UUID: {uuid:?} in {stdout:?}");
    uuid.to_string()
}

/// Members of one array in a temporary directory (removed on drop), for tests that start,
/// stop and restart a server over them.
pub struct Array {
    pub dir: tempfile::TempDir,
    pub members: Vec<PathBuf>,
    pub uuid: String,
    pub scheme: String,
    pub ssds_per_rgroup: usize,
    /// Serve with `--direct` (O_DIRECT members).
    pub direct: bool,
}

impl Array {
    /// `swan create` over fresh 128 MiB members with 1 MiB segments.
    pub fn create(scheme: &str, rgroups: usize, ssds_per_rgroup: usize) -> Array {
        let dir = tempfile::Builder::new().prefix("swan-e2e-").tempdir().expect("create a temporary directory");
        let members: Vec<PathBuf> = (0..rgroups * ssds_per_rgroup).map(|i| dir.path().join(format!("m{i}"))).collect();
        let (r, n) = (rgroups as u32, ssds_per_rgroup as u32);
        let out = create(dir.path(), scheme, r, n, "128M", &members, &["--segment", "1M"]);
        assert!(out.status.success(), "{}", describe("swan create", &out));
        let uuid = created_uuid(&out);
        Array { dir, members, uuid, scheme: scheme.to_string(), ssds_per_rgroup, direct: false }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `swan` run in this array's directory.
    pub fn swan(&self) -> Command {
        swan_in(self.path())
    }

    pub fn log_structured(&self) -> bool {
        !self.scheme.starts_with("raid")
    }

    /// R-groups GC runs in: SWAN's R-groups, or Log-RAID's one log over every member.
    pub fn gc_groups(&self) -> usize {
        if self.scheme.starts_with("swan") {
            self.members.len() / self.ssds_per_rgroup
        } else {
            1
        }
    }

    pub fn group_of(&self, member: usize) -> usize {
        if self.scheme.starts_with("swan") {
            member / self.ssds_per_rgroup
        } else {
            0
        }
    }

    /// Starts `swan serve` over the members in array order.
    pub fn serve(&self) -> Server {
        self.serve_with(&[])
    }

    /// Starts `swan serve` with more `flags` over the members in array order.
    pub fn serve_with(&self, flags: &[&str]) -> Server {
        Server::start_with(self.path(), &self.members, &self.flags(flags))
    }

    /// Starts `swan serve` with the members in reverse order (each one's superblock says
    /// where it belongs).
    pub fn serve_reversed(&self) -> Server {
        let reversed: Vec<PathBuf> = self.members.iter().rev().cloned().collect();
        Server::start_with(self.path(), &reversed, &self.flags(&[]))
    }

    fn flags<'a>(&self, flags: &[&'a str]) -> Vec<&'a str> {
        self.direct.then_some("--direct").into_iter().chain(flags.iter().copied()).collect()
    }

    /// `swan serve` over `members` that must refuse to start; returns what it said.
    pub fn serve_fails(&self, flags: &[&str], members: &[PathBuf]) -> Output {
        let what = "swan serve (which must refuse)";
        let out = run(
            self.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(flags).args(members),
            what,
            COMMAND_DEADLINE,
        );
        assert_failed(what, &out);
        out
    }

    /// `swan status --json` of the running server.
    pub fn status(&self) -> Value {
        status(&self.members[0], self.path())
    }

    /// `swan check` must exit 0 and say "clean".
    pub fn check_clean(&self) {
        check_clean(&self.members, self.path(), &format!("{} array", self.scheme));
    }
}

/// A `swan create`, `check`, `status`, nbdinfo, qemu-img or nbdcopy run of the tests over an
/// [`Array`].
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(60);
