//! Member paths are the operator's names for files: a failed `swan create` removes only the
//! files it made itself (never a symlink, dangling or not, nor a file that was there), and
//! one file given under two names is said to be that, not "another process is using it".

use crate::common::{create, create_array, describe, run, swan_in, text, COMMAND_DEADLINE};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// What a path is before a create: a link's target, or a file's size and first bytes.
#[derive(Debug, PartialEq)]
enum Was {
    Link(PathBuf),
    File(u64, Vec<u8>),
}

fn what(p: &Path) -> Was {
    let meta = p.symlink_metadata().unwrap_or_else(|e| panic!("{} is gone: {e}", p.display()));
    if meta.file_type().is_symlink() {
        return Was::Link(std::fs::read_link(p).unwrap());
    }
    let bytes = std::fs::read(p).unwrap();
    Was::File(meta.len(), bytes[..bytes.len().min(8192)].to_vec())
}

#[test]
fn operator_failed_create_leaves_every_path_that_was_there() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("store")).unwrap();
    // The operator's: a 64 MiB file with data, a symlink to it, a dangling symlink, and a
    // small file with data (too small to be a member).
    let disk1 = d.join("store/disk1");
    std::fs::write(&disk1, b"the operator's data").unwrap();
    std::fs::OpenOptions::new().write(true).open(&disk1).unwrap().set_len(64 << 20).unwrap();
    symlink("store/disk1", d.join("link1")).unwrap();
    symlink("store/nothing", d.join("dangling")).unwrap();
    std::fs::write(d.join("small"), b"keep me").unwrap();
    let theirs = ["store/disk1", "link1", "dangling", "small"].map(|p| d.join(p));
    let before: Vec<Was> = theirs.iter().map(|p| what(p)).collect();

    let cases: [(&[&str], &str); 3] = [
        (&["disk0", "dangling", "disk2"], "symbolic link to store/nothing, which does not exist"),
        (&["disk0", "link1", "small"], "less than --member-size"),
        (&["small", "link1", "disk2"], "less than --member-size"),
    ];
    for (members, says) in cases {
        let members: Vec<PathBuf> = members.iter().map(|m| d.join(m)).collect();
        let out = create(d, "raid5", 1, 3, "64M", &members, &[]);
        let err = text(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{}", describe("swan create", &out));
        let after: Vec<Was> = theirs.iter().map(|p| what(p)).collect();
        assert_eq!(after, before, "swan create {members:?} changed the operator's paths: {err}");
        for made in ["disk0", "disk2"].map(|m| d.join(m)) {
            assert!(made.symlink_metadata().is_err(), "the failed create left {} behind", made.display());
        }
    }
}

#[test]
fn operator_one_file_under_two_names_is_said_to_be_that() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f0"), b"").unwrap();
    std::fs::OpenOptions::new().write(true).open(d.join("f0")).unwrap().set_len(64 << 20).unwrap();
    std::fs::hard_link(d.join("f0"), d.join("hard0")).unwrap();
    symlink("f0", d.join("soft0")).unwrap();
    for twin in ["./f0", "hard0", "soft0"] {
        let out = run(
            swan_in(d).args(["create", "--scheme", "raid5", "--rgroups", "1", "--ssds-per-rgroup", "3"]).args([
                "--member-size",
                "64M",
                "f0",
                twin,
                "f2",
            ]),
            "swan create",
            COMMAND_DEADLINE,
        );
        let err = text(&out.stderr);
        assert!(
            !out.status.success() && err.contains("members 0 (f0) and 1 (") && err.contains("are the same file"),
            "swan create f0 {twin}:\n{}",
            describe("swan create", &out)
        );
        assert!(!err.contains("another process"), "{err}");
        assert!(d.join("f0").exists() && !d.join("f2").exists(), "f0 must stay, f2 (created) must go");
    }

    let a = d.join("a");
    std::fs::create_dir(&a).unwrap();
    let members = create_array(&a, "raid5", 1, 3, "16M", &[]);
    std::fs::hard_link(&members[2], a.join("hard2")).unwrap();
    for twin in ["./m0", "hard2"] {
        let out = run(
            swan_in(&a).args(["serve", "--listen", "127.0.0.1:0", "m0", "m1", "m2", twin]),
            "swan serve",
            COMMAND_DEADLINE,
        );
        let err = text(&out.stderr);
        assert!(
            !out.status.success() && err.contains("are the same file") && !err.contains("another process"),
            "swan serve m0 m1 m2 {twin}:\n{}",
            describe("swan serve", &out)
        );
    }
}
