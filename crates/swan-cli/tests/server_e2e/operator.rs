//! The operator's commands around a server. A served array belongs to its server: a second
//! `serve`, a `check` or a `create --force` over its members is refused. `--spare` sizes the
//! volume and `--gc-target` is checked and shown by `swan status`. `swan create` and `swan
//! serve` refuse members of another array, wrong member counts, impossible geometries (with
//! a member size that works), members of two arrays and a corrupt superblock, naming what is
//! wrong.

use crate::common::{
    assert_failed, create, created_uuid, describe, export_size, require, run, text, Array, COMMAND_DEADLINE,
};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::Output;

/// A refusal's stderr, once the command is seen to have failed cleanly.
fn refusal(what: &str, out: &Output) -> String {
    assert_failed(what, out);
    text(&out.stderr)
}

/// `swan create --force` of a 2 × 2 array over `array`'s members with `flags`.
fn recreate(array: &Array, scheme: &str, flags: &[&str]) -> Output {
    let mut cmd = array.swan();
    cmd.args(["create", "--force"]).args(flags).args(["--scheme", scheme, "--rgroups", "2", "--ssds-per-rgroup", "2"]);
    run(cmd.args(&array.members), &format!("swan create --force {}", flags.join(" ")), COMMAND_DEADLINE)
}

fn check(array: &Array, members: &[PathBuf]) -> Output {
    run(array.swan().arg("check").args(members), "swan check", COMMAND_DEADLINE)
}

/// A served array belongs to its server: a second `serve`, a `check` or a `create --force`
/// over the same members is refused, naming the member, while the first keeps serving; once
/// it stops they work. `--spare` sets how much of the payload the volume leaves to GC.
#[test]
fn a_served_array_is_claimed_and_spare_sizes_the_volume() {
    require("nbdinfo", "libnbd-bin");
    let array = Array::create("swan0", 2, 2);
    let mut server = array.serve();
    let default_size = export_size(&server.uri());
    let second = array.serve_fails(&[], &array.members);
    let checked = check(&array, &array.members);
    let recreated = recreate(&array, "swan0", &[]);
    for (what, out) in [("a second serve", &second), ("check", &checked), ("create --force", &recreated)] {
        let err = refusal(what, out);
        assert!(
            err.contains("another process is using it") && err.contains("m0"),
            "{what} over a served array was not refused with the member named:\n{}",
            describe(what, out)
        );
    }
    server.assert_alive("other processes were refused its members");
    server.stop();
    array.check_clean();

    // The default keeps 10 % of the payload spare; --spare 30 keeps 30 %.
    let out = recreate(&array, "swan0", &["--spare", "30%"]);
    assert!(
        out.status.success() && text(&out.stdout).contains("30.0 % of the data capacity kept spare"),
        "{}",
        describe("swan create --spare 30%", &out)
    );
    let server = array.serve();
    let smaller = export_size(&server.uri());
    let ratio = smaller as f64 / default_size as f64;
    assert!(
        (0.76..0.80).contains(&ratio),
        "--spare 30 gave {smaller} bytes against {default_size} with 10 % (ratio {ratio:.3}, expected 0.7/0.9)"
    );
    server.stop();
    let bad = recreate(&array, "swan0", &["--spare", "95"]);
    assert!(
        refusal("--spare 95", &bad).contains("below 90"),
        "--spare 95 was not refused clearly:\n{}",
        describe("swan create --spare 95", &bad)
    );
    let raid = recreate(&array, "raid0", &["--spare", "5"]);
    assert!(
        refusal("--spare 5 on RAID0", &raid).contains("log-structured"),
        "--spare on in-place RAID was not refused clearly:\n{}",
        describe("swan create --spare 5 --scheme raid0", &raid)
    );
}

/// The size the error suggests after "--member-size ", e.g. "576M".
fn suggested_member_size(stderr: &str) -> Option<String> {
    stderr.match_indices("--member-size ").find_map(|(i, m)| {
        let word: String = stderr[i + m.len()..].chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        (word.starts_with(|c: char| c.is_ascii_digit()) && word.len() > 1).then_some(word)
    })
}

/// `swan serve --gc-target`: out of bounds or on a scheme without the target, a refusal that
/// says why; within them, the server runs with it and `swan status` says so.
#[test]
fn serve_gc_target_is_checked_and_shown() {
    let a = Array::create("swan0", 3, 2);
    for bad in ["0", "1000000"] {
        let out = a.serve_fails(&["--gc-target", bad], &a.members);
        let err = text(&out.stderr);
        assert!(
            err.contains("--gc-target") && err.contains("spare holds"),
            "--gc-target {bad} should be refused naming the bounds:\n{}",
            describe("swan serve --gc-target", &out)
        );
    }
    let default = {
        let server = a.serve();
        let target = a.status()["gc_target"].as_u64().expect("status of a SWAN array has gc_target");
        server.stop();
        target
    };
    assert!(default >= 1, "the default GC target {default} keeps nothing ready for writes");
    let wanted = default + 2;
    let server = a.serve_with(&["--gc-target", &wanted.to_string()]);
    assert_eq!(a.status()["gc_target"].as_u64(), Some(wanted), "swan status does not show --gc-target {wanted}");
    server.stop();

    let l = Array::create("lograid0", 1, 4);
    let out = l.serve_fails(&["--gc-target", "5"], &l.members);
    assert!(
        text(&out.stderr).contains("SWAN"),
        "--gc-target on Log-RAID should say it is SWAN's:\n{}",
        describe("swan serve --gc-target", &out)
    );
}

#[test]
fn create_and_serve_refuse_bad_members() {
    let a = Array::create("swan0", 3, 2);
    let dir = a.path();
    let files = |prefix: &str, n: usize| -> Vec<PathBuf> { (0..n).map(|i| dir.join(format!("{prefix}{i}"))).collect() };

    // A member of another array, without --force.
    let mut b = files("b", 4);
    b[0] = a.members[0].clone();
    let out = create(dir, "lograid5", 1, 4, "128M", &b, &[]);
    let err = refusal("swan create over a member of another array", &out);
    assert!(err.contains(&a.uuid), "the refusal does not name array {}:\n{}", a.uuid, describe("swan create", &out));
    assert!(err.contains("--force"), "the refusal does not mention --force:\n{}", describe("swan create", &out));
    a.check_clean();

    // Wrong member counts.
    for n in [5, 7] {
        let members = files(&format!("c{n}-"), n);
        let out = create(dir, "swan0", 3, 2, "128M", &members, &[]);
        let err = refusal("swan create with a wrong member count", &out);
        let words: Vec<&str> = err.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        assert!(
            words.contains(&"6") && words.contains(&n.to_string().as_str()),
            "the error does not say 6 members are needed and {n} were given:\n{}",
            describe("swan create", &out)
        );
        assert!(members.iter().all(|m| !m.exists()), "a refused create left member files behind");
    }

    // Impossible geometries: the error suggests a member size, and that size works.
    for (scheme, rgroups, ssds, extra) in [
        ("swan0", 3, 2, &[][..]),
        ("lograid5", 1, 4, &[][..]),
        ("raid5", 1, 4, &["--chunk", "4M"][..]),
        ("swan0", 3, 2, &["--segment", "64M"][..]),
    ] {
        let n = (rgroups * ssds) as usize;
        let small = files(&format!("d-{scheme}-{}-", extra.len()), n);
        let out = create(dir, scheme, rgroups, ssds, "1M", &small, extra);
        let Some(size) = suggested_member_size(&refusal("swan create of 1 MiB members", &out)) else {
            panic!(
                "{scheme} {extra:?} with 1 MiB members: the error suggests no --member-size:\n{}",
                describe("swan create", &out)
            );
        };
        let fresh = files(&format!("e-{scheme}-{}-", extra.len()), n);
        let ok = create(dir, scheme, rgroups, ssds, &size, &fresh, extra);
        assert!(
            ok.status.success(),
            "{scheme} {extra:?}: the suggested --member-size {size} does not work:\n{}",
            describe("swan create", &ok)
        );
        for f in fresh {
            let _ = std::fs::remove_file(f);
        }
    }

    // Members of two arrays.
    let c = files("f", 6);
    let made = create(dir, "swan0", 3, 2, "128M", &c, &[]);
    assert!(made.status.success(), "{}", describe("swan create", &made));
    let c_uuid = created_uuid(&made);
    let mut mixed = a.members[..3].to_vec();
    mixed.extend_from_slice(&c[3..]);
    for members in [&mixed, &[a.members.clone(), vec![c[0].clone()]].concat()] {
        let out = a.serve_fails(&[], members);
        let err = text(&out.stderr);
        assert!(
            err.contains(&a.uuid) && err.contains(&c_uuid),
            "refusing members of two arrays should name both:\n{}",
            describe("swan serve", &out)
        );
    }
    let out = check(&a, &mixed);
    let err = refusal("swan check of two arrays' members", &out);
    assert!(err.contains(&c_uuid), "swan check of two arrays' members:\n{}", describe("swan check", &out));

    // A corrupted superblock: one flipped bit in block 0 of one member.
    {
        use std::io::{Seek, SeekFrom};
        let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&c[2]).expect("open a member");
        let mut byte = [0u8; 1];
        f.seek(SeekFrom::Start(100)).expect("seek");
        f.read_exact(&mut byte).expect("read");
        f.seek(SeekFrom::Start(100)).expect("seek");
        f.write_all(&[byte[0] ^ 0x40]).expect("write");
    }
    let out = a.serve_fails(&[], &c);
    let err = text(&out.stderr);
    assert!(err.contains("checksum"), "swan serve over a corrupt superblock:\n{}", describe("swan serve", &out));
    assert!(err.contains("f2"), "swan serve does not name the corrupt member:\n{}", describe("swan serve", &out));
    let out = check(&a, &c);
    let err = refusal("swan check over a corrupt superblock", &out);
    assert!(
        err.contains("checksum") || text(&out.stdout).contains("checksum"),
        "swan check:\n{}",
        describe("swan check", &out)
    );

    // --force reuses a member of another array.
    let out = create(dir, "lograid5", 1, 4, "128M", &b, &["--force"]);
    assert!(out.status.success(), "{}", describe("swan create --force", &out));
    assert_ne!(created_uuid(&out), a.uuid);
}
