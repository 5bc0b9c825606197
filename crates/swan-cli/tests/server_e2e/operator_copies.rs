//! An array and its copy (`cp -r`) share the array UUID, and with it the first choice of
//! control socket. Served side by side, each server gets a socket of its own, and every
//! control command reaches the server holding the member file it was given: `swan fail`
//! fails that copy's member only, `swan status` shows that copy, a request sent to the
//! other copy's server is refused by it, and stopping one leaves the other reachable.

use crate::common::{create_array, describe, run, status, swan, text, Server, COMMAND_DEADLINE};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The event count and failed set in a member's superblock (FORMAT.md: offset 112, and one
/// bit per member from byte 512).
fn superblock_events_and_failed(member: &Path, members: usize) -> (u64, Vec<usize>) {
    let b = std::fs::read(member).map(|b| b[..4096].to_vec()).expect("read a superblock");
    let events = u64::from_le_bytes(b[112..120].try_into().unwrap());
    (events, (0..members).filter(|&i| b[512 + i / 8] & (1 << (i % 8)) != 0).collect())
}

/// The member paths `swan status --json` of `member` lists.
fn status_paths(member: &Path, run_dir: &Path) -> Vec<String> {
    let st = status(member, run_dir);
    st["members"].as_array().expect("members").iter().map(|m| m["path"].as_str().unwrap().to_string()).collect()
}

fn health(member: &Path, run_dir: &Path) -> Vec<String> {
    let st = status(member, run_dir);
    st["members"].as_array().expect("members").iter().map(|m| m["health"].as_str().unwrap().to_string()).collect()
}

fn fail(member: u32, through: &Path, run_dir: &Path, extra: &[&str]) -> std::process::Output {
    let m = member.to_string();
    let args = [&["fail", "--member", &m][..], extra, &[through.to_str().unwrap()]].concat();
    swan(&args, run_dir)
}

#[test]
fn operator_commands_reach_the_server_of_the_copy_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let a_dir = d.join("a");
    std::fs::create_dir(&a_dir).unwrap();
    let a = create_array(&a_dir, "raid5", 1, 3, "16M", &[]);
    let out = run(Command::new("cp").arg("-r").arg(&a_dir).arg(d.join("acopy")), "cp -r a acopy", COMMAND_DEADLINE);
    assert!(out.status.success(), "{}", describe("cp -r", &out));
    let c: Vec<PathBuf> = a.iter().map(|m| d.join("acopy").join(m.file_name().unwrap())).collect();

    // Both served, their control sockets in one run directory.
    let server_a = Server::start(d, &a);
    let server_c = Server::start(d, &c);
    let in_dir = |paths: Vec<String>, sub: &str| {
        paths.iter().all(|p| Path::new(p).parent().map(Path::to_path_buf) == Some(d.join(sub)))
    };
    assert!(
        in_dir(status_paths(&a[0], d), "a"),
        "swan status a/m0 reached another server: {:?}",
        status_paths(&a[0], d)
    );
    assert!(in_dir(status_paths(&c[0], d), "acopy"), "swan status acopy/m0: {:?}", status_paths(&c[0], d));

    // swan fail through a/m0 fails a's member 2, not the copy's.
    let out = fail(2, &a[0], d, &[]);
    assert!(out.status.success(), "{}", describe("swan fail --member 2 a/m0", &out));
    assert_eq!(health(&a[0], d), ["healthy", "healthy", "failed"], "a after failing its member 2");
    assert_eq!(health(&c[0], d), ["healthy", "healthy", "healthy"], "the copy after failing a's member 2");
    let out = fail(1, &c[0], d, &[]);
    assert!(out.status.success(), "{}", describe("swan fail --member 1 acopy/m0", &out));
    assert_eq!(health(&c[0], d), ["healthy", "failed", "healthy"], "the copy after failing its member 1");
    assert_eq!(health(&a[0], d), ["healthy", "healthy", "failed"], "a after failing the copy's member 1");

    // A request made through the copy's member but sent to a's socket: a's server refuses it.
    let a_socket = status(&a[0], d)["export"]["control"].as_str().expect("export.control").to_string();
    let out = fail(0, &c[0], d, &["--control", &a_socket]);
    let err = text(&out.stderr);
    assert!(
        !out.status.success() && err.contains("does not hold the member"),
        "a's server acted on a request made through the copy's member:\n{}",
        describe("swan fail --control A acopy/m0", &out)
    );
    assert_eq!(health(&a[0], d), ["healthy", "healthy", "failed"], "a after the refused request");

    // Stopping a's server leaves the copy's reachable (its socket is not a's to remove).
    server_a.stop();
    assert!(in_dir(status_paths(&c[0], d), "acopy"), "the copy after a's server stopped");
    let out = swan(&["status", a[0].to_str().unwrap()], d);
    assert!(
        !out.status.success() && text(&out.stderr).contains("no running swan server holds"),
        "swan status a/m0 with only the copy served:\n{}",
        describe("swan status a/m0", &out)
    );
    server_c.stop();

    // Each copy's superblocks record its own failure only.
    let (a_events, a_failed) = superblock_events_and_failed(&a[0], 3);
    let (c_events, c_failed) = superblock_events_and_failed(&c[0], 3);
    assert_eq!(a_failed, [2], "a's failed set (events {a_events})");
    assert_eq!(c_failed, [1], "the copy's failed set (events {c_events})");
}
