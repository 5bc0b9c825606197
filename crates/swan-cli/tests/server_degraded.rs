//! Member failure and rebuild while serving, as mdadm's 01r5integ test does it: for each
//! member of a RAID5 array and of a RAID4 array in turn, fail it (`swan fail`), check the
//! whole volume reads back unchanged (rebuilt from parity), rebuild it onto a new file
//! (`swan replace`) and check again. SWAN5 keeps taking writes while degraded and while the
//! rebuild runs, moves its front-end off the degraded R-group, and a restart given the stale
//! replaced member instead of its replacement is refused, naming it; a member that is gone
//! for good is given as `missing` and rebuilt from there. RAID0 refuses to fail a member: it
//! has nothing to rebuild from; one whose superblock is damaged is mended by
//! `swan repair-superblock`.
//!
//! Everything goes through the real server and real NBD clients (nbdcopy).

mod common;

use common::{check_clean, create_array, describe, export_size, nbdcopy, require, status, swan, text, Server};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use swan_testkit::rng::SplitMix64;

const DEADLINE: Duration = Duration::from_secs(180);

fn random_image(path: &Path, bytes: u64, seed: u64) -> Vec<u8> {
    let data = SplitMix64(seed).bytes(bytes as usize);
    std::fs::write(path, &data).expect("write image");
    data
}

/// The whole volume, read back through NBD.
fn volume(server: &Server, dir: &Path) -> Vec<u8> {
    let out = dir.join("readback");
    let _ = std::fs::remove_file(&out);
    nbdcopy(&server.uri(), out.to_str().unwrap());
    std::fs::read(&out).expect("read back")
}

fn swan_ok(args: &[&str], dir: &Path) -> String {
    let out = swan(args, dir);
    assert!(out.status.success(), "{}", describe(&format!("swan {}", args.join(" ")), &out));
    text(&out.stdout)
}

fn health(member: &Path, dir: &Path) -> Vec<String> {
    let st = status(member, dir);
    st["members"].as_array().expect("members").iter().map(|m| m["health"].as_str().unwrap().to_string()).collect()
}

/// Wait (up to a minute) until no R-group is collecting.
fn wait_gc_idle(member: &Path, dir: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let st = status(member, dir);
        let busy = st["groups"].as_array().expect("groups").iter().any(|g| g["role"] == "back-end GC");
        if !busy {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "GC still running after a minute: {st}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn assert_same(got: &[u8], want: &[u8], when: &str) {
    assert_eq!(got.len(), want.len(), "{when}: the volume's size changed");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{when}: the volume differs from what was written, first at byte {i} (block {})", i / 4096);
    }
}

/// 01r5integ: each member of the array in turn fails and is rebuilt; the volume never changes.
fn fail_and_rebuild_each_member(scheme: &str) {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut members = create_array(d, scheme, 1, 4, "24M", &[]);
    let server = Server::start(d, &members);
    let image = random_image(&d.join("image"), export_size(&server.uri()), 5);
    nbdcopy(d.join("image").to_str().unwrap(), &server.uri());
    assert_same(&volume(&server, d), &image, "written");
    for i in 0..members.len() {
        let any = members[(i + 1) % members.len()].to_str().unwrap().to_string();
        swan_ok(&["fail", "--member", &i.to_string(), &any], d);
        let h = health(Path::new(&any), d);
        assert_eq!(h[i], "failed", "member {i} after swan fail: {h:?}");
        assert_same(&volume(&server, d), &image, &format!("{scheme}: member {i} failed"));
        let new = d.join(format!("m{i}-new"));
        swan_ok(&["replace", "--member", &i.to_string(), "--new", new.to_str().unwrap(), "--wait", &any], d);
        assert!(health(Path::new(&any), d).iter().all(|h| h == "healthy"), "after the rebuild of member {i}");
        members[i] = new;
        assert_same(&volume(&server, d), &image, &format!("{scheme}: member {i} rebuilt"));
    }
    server.stop();
    // Every member has been replaced: the rebuilt ones hold the data and the parity.
    check_clean(&members, d, &format!("{scheme} after every member was rebuilt"));
    let server = Server::start(d, &members);
    assert_same(&volume(&server, d), &image, &format!("{scheme}: restarted on rebuilt members"));
    server.stop();
}

#[test]
fn raid5_survives_each_member_failing_and_being_rebuilt() {
    fail_and_rebuild_each_member("raid5");
}

#[test]
fn raid4_survives_each_member_failing_and_being_rebuilt() {
    fail_and_rebuild_each_member("raid4");
}

/// SWAN5, 3 R-groups × 3: a failed member of the front-end R-group; writes go on (and leave
/// the degraded R-group), a rebuild runs under more writes, a restart keeps a stale member out.
#[test]
fn swan5_writes_on_degraded_and_rebuilds_while_writing() {
    degraded_then_rebuilt_while_writing(&[]);
}

/// The same over emulated zoned members: the replacement is made as a zoned device like its
/// peers and rebuilt zone by zone (2 MiB zones: two slices each), each zone's writes held
/// back until the rebuild has brought it level.
#[test]
fn swan5_over_zones_writes_on_degraded_and_rebuilds_while_writing() {
    degraded_then_rebuilt_while_writing(&["--zone-size", "2M"]);
}

fn degraded_then_rebuilt_while_writing(create_flags: &[&str]) {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Spare room enough that the healthy R-groups' GC frees whole segments for the
    // front-end to move to (with a sliver of spare every R-group stays full, and a degraded
    // front-end is the only place left to write: allowed, as there is no healthy one with room).
    let flags: Vec<&str> = ["--spare", "30"].iter().chain(create_flags).copied().collect();
    let mut members = create_array(d, "swan5", 3, 3, "32M", &flags);
    let m0 = members[0].to_str().unwrap().to_string();
    let server = Server::start(d, &members);
    let size = export_size(&server.uri());
    let a = random_image(&d.join("a"), size, 1);
    nbdcopy(d.join("a").to_str().unwrap(), &server.uri());
    let front = status(&members[0], d)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .position(|g| g["role"] == "front-end")
        .expect("a front-end R-group") as u32;
    // A member of the front-end R-group fails.
    let victim = front * 3 + 1;
    let any = if front == 0 { members[3].to_str().unwrap().to_string() } else { m0.clone() };
    swan_ok(&["fail", "--member", &victim.to_string(), &any], d);
    assert_same(&volume(&server, d), &a, "member failed");
    // Writes go on, degraded, and the front-end moves to a healthy R-group.
    let b = random_image(&d.join("b"), size, 2);
    nbdcopy(d.join("b").to_str().unwrap(), &server.uri());
    assert_same(&volume(&server, d), &b, "rewritten while degraded");
    // The front-end leaves the degraded R-group at its next segment boundary where a healthy
    // one has a free segment. GC in the healthy R-groups may still have been making that room
    // when the rewrite ended (or they held only live data then): once GC is done, a few MiB
    // more of writes (less than two segments) must move it.
    let chunk = d.join("b-chunk");
    std::fs::write(&chunk, &b[..1 << 20]).unwrap();
    let mut st = status(Path::new(&any), d);
    for _ in 0..4 {
        if st["groups"][front as usize]["role"] != "front-end" {
            break;
        }
        wait_gc_idle(Path::new(&any), d);
        nbdcopy(chunk.to_str().unwrap(), &server.uri());
        st = status(Path::new(&any), d);
    }
    let role = st["groups"][front as usize]["role"].as_str().unwrap().to_string();
    assert_ne!(role, "front-end", "the degraded R-group {front} is still the front-end: {st}");
    // Rebuild while the whole volume is rewritten again.
    let c = random_image(&d.join("c"), size, 3);
    let mut writer = Command::new("nbdcopy")
        .args(["--flush", d.join("c").to_str().unwrap(), &server.uri()])
        .spawn()
        .expect("nbdcopy");
    let new = d.join(format!("m{victim}-new"));
    swan_ok(&["replace", "--member", &victim.to_string(), "--new", new.to_str().unwrap(), "--wait", &any], d);
    let done = common::wait_deadline(&mut writer, DEADLINE).expect("nbdcopy finishes");
    assert!(done.success(), "nbdcopy during the rebuild failed");
    assert_same(&volume(&server, d), &c, "rewritten during the rebuild");
    let old = std::mem::replace(&mut members[victim as usize], new);
    server.stop();
    check_clean(&members, d, "swan5 after the rebuild");
    // The old member is stale: given instead of its replacement, it is refused, naming it.
    let mut stale = members.clone();
    stale[victim as usize] = old;
    refused_as_stale(&stale, victim, d);
    let server = Server::start(d, &members);
    assert_same(&volume(&server, d), &c, "restarted with the replacement");
    server.stop();
}

/// `swan serve` over `given`, where member `victim` is one a rebuild superseded: refused,
/// saying it is stale (its event count behind its peers') and to give its replacement.
fn refused_as_stale(given: &[std::path::PathBuf], victim: u32, d: &Path) {
    let mut args = vec!["serve".to_string(), "--listen".into(), "127.0.0.1:0".into()];
    args.extend(given.iter().map(|m| m.display().to_string()));
    let out = swan(&args.iter().map(String::as_str).collect::<Vec<_>>(), d);
    let err = text(&out.stderr);
    let old = given[victim as usize].display().to_string();
    assert!(
        !out.status.success()
            && err.contains(&format!("member {victim} ({old}) is stale"))
            && err.contains("event count")
            && err.contains("Give that replacement"),
        "serving with the replaced member {victim} given back:\n{}",
        describe("swan serve", &out)
    );
}

/// A member replaced by `swan replace` and given back at the next start instead of its
/// replacement is refused as stale; the array is not served around it, so the replacement,
/// given then, is as whole as it was: nothing is failed, nothing rebuilt again.
#[test]
fn a_replaced_member_given_back_is_refused_and_its_replacement_stays_whole() {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut members = create_array(d, "raid5", 1, 3, "16M", &[]);
    let server = Server::start(d, &members);
    let image = random_image(&d.join("image"), export_size(&server.uri()), 21);
    nbdcopy(d.join("image").to_str().unwrap(), &server.uri());
    let m0 = members[0].to_str().unwrap().to_string();
    swan_ok(&["fail", "--member", "1", &m0], d);
    let new = d.join("m1-new");
    swan_ok(&["replace", "--member", "1", "--new", new.to_str().unwrap(), "--wait", &m0], d);
    server.stop();
    refused_as_stale(&members, 1, d);
    members[1] = new;
    let server = Server::start(d, &members);
    assert_eq!(
        health(&members[0], d),
        ["healthy"; 3],
        "the replacement after the stale member was given:\n{}",
        server.log()
    );
    assert!(!server.log().contains("is failed"), "{}", server.log());
    assert_same(&volume(&server, d), &image, "restarted with the replacement");
    server.stop();
    check_clean(&members, d, "raid5 after its replacement came back");
}

#[test]
fn raid0_refuses_to_fail_a_member_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let members = create_array(d, "raid0", 1, 2, "16M", &[]);
    let server = Server::start(d, &members);
    let out = swan(&["fail", "--member", "1", members[0].to_str().unwrap()], d);
    assert!(!out.status.success(), "swan fail on RAID0 succeeded");
    assert!(text(&out.stderr).contains("no parity"), "{}", describe("swan fail", &out));
    let out =
        swan(&["replace", "--member", "1", "--new", d.join("x").to_str().unwrap(), members[0].to_str().unwrap()], d);
    assert!(!out.status.success() && text(&out.stderr).contains("healthy"), "{}", describe("swan replace", &out));
    server.stop();
}

/// A RAID0 member whose superblock is damaged (a flipped bit, then a zeroed first block):
/// `swan serve` says RAID0 cannot serve it `missing` and names `swan repair-superblock`,
/// which rewrites it from the peer's; the array then serves the same volume.
#[test]
fn raid0_member_with_a_damaged_superblock_is_repaired_from_its_peers() {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let members = create_array(d, "raid0", 1, 3, "16M", &[]);
    let server = Server::start(d, &members);
    let image = random_image(&d.join("image"), export_size(&server.uri()), 31);
    nbdcopy(d.join("image").to_str().unwrap(), &server.uri());
    server.stop();
    let names: Vec<&str> = members.iter().map(|m| m.to_str().unwrap()).collect();
    for damage in [&[0x40u8][..], &[0u8; 4096][..]] {
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&members[1]).unwrap();
        if damage.len() == 1 {
            let mut byte = [0u8; 1];
            f.seek(SeekFrom::Start(100)).unwrap();
            f.read_exact(&mut byte).unwrap();
            f.seek(SeekFrom::Start(100)).unwrap();
            f.write_all(&[byte[0] ^ damage[0]]).unwrap();
        } else {
            f.write_all(damage).unwrap();
        }
        drop(f);
        let out = swan(&[&["serve", "--listen", "127.0.0.1:0"][..], &names].concat(), d);
        let err = text(&out.stderr);
        assert!(
            !out.status.success()
                && err.contains(names[1])
                && err.contains("RAID0")
                && err.contains("swan repair-superblock")
                && !err.contains("run swan replace again"),
            "{}",
            describe("swan serve over a damaged RAID0 superblock", &out)
        );
        let said = swan_ok(&[&["repair-superblock"][..], &names].concat(), d);
        assert!(said.contains(&format!("{} as member 1", names[1])), "{said}");
        let out = swan(&[&["repair-superblock"][..], &names].concat(), d);
        assert!(
            !out.status.success() && text(&out.stderr).contains("nothing to repair"),
            "{}",
            describe("again", &out)
        );
        check_clean(&members, d, "raid0 after its superblock was rewritten");
        let server = Server::start(d, &members);
        assert_same(&volume(&server, d), &image, "raid0 served after the repair");
        server.stop();
    }
}

/// A member that disappears under the server (its file truncated to nothing: every read
/// of it fails) is failed by the server itself, and every read is answered from parity —
/// in place (RAID5) and log-structured (SWAN5, where the reads go through the I/O pool and
/// come back to the engine when their member fails under them).
fn member_vanishes(scheme: &str, rgroups: u32, ssds: u32, victim: usize) {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let members = create_array(d, scheme, rgroups, ssds, "24M", &[]);
    let server = Server::start(d, &members);
    let image = random_image(&d.join("image"), export_size(&server.uri()), 9);
    nbdcopy(d.join("image").to_str().unwrap(), &server.uri());
    // Out of the page cache's reach: the member is gone.
    std::fs::OpenOptions::new().write(true).open(&members[victim]).unwrap().set_len(0).unwrap();
    assert_same(&volume(&server, d), &image, &format!("{scheme}: member {victim} vanished"));
    let h = health(&members[(victim + 1) % members.len()], d);
    assert_eq!(h[victim], "failed", "{scheme}: the vanished member was not failed: {h:?}\n{}", server.log());
    assert!(server.log().contains("FAILED"), "{scheme}: no word of the failure:\n{}", server.log());
    // Writes go on without it, and read back.
    let again = random_image(&d.join("again"), image.len() as u64, 10);
    nbdcopy(d.join("again").to_str().unwrap(), &server.uri());
    assert_same(&volume(&server, d), &again, &format!("{scheme}: rewritten without member {victim}"));
    server.stop();
    // The dead member is gone for good: without it the array is refused, with a word of
    // `missing`; given as `missing`, it is served degraded.
    std::fs::remove_file(&members[victim]).unwrap();
    let mut without: Vec<String> = members.iter().map(|m| m.display().to_string()).collect();
    without.remove(victim);
    let out = swan(
        &[&["serve", "--listen", "127.0.0.1:0"][..], &without.iter().map(String::as_str).collect::<Vec<_>>()].concat(),
        d,
    );
    assert!(!out.status.success(), "{scheme}: served with a member left out");
    assert!(text(&out.stderr).contains("`missing`"), "{scheme}: {}", describe("serve without a member", &out));
    let mut given = members.clone();
    given[victim] = "missing".into();
    let server = Server::start(d, &given);
    let any = members[(victim + 1) % members.len()].clone();
    assert_eq!(health(&any, d)[victim], "failed", "{scheme}: a missing member is not failed");
    assert_same(&volume(&server, d), &again, &format!("{scheme}: restarted with member {victim} missing"));
    let new = d.join("new");
    swan_ok(
        &["replace", "--member", &victim.to_string(), "--new", new.to_str().unwrap(), "--wait", any.to_str().unwrap()],
        d,
    );
    assert_same(&volume(&server, d), &again, &format!("{scheme}: member {victim} rebuilt from missing"));
    server.stop();
    given[victim] = new;
    check_clean(&given, d, &format!("{scheme}: rebuilt onto a new member after restarting without it"));
}

#[test]
fn raid5_member_that_vanishes_is_failed_and_read_around() {
    member_vanishes("raid5", 1, 4, 2);
}

#[test]
fn swan5_member_that_vanishes_is_failed_and_read_around() {
    member_vanishes("swan5", 2, 3, 4);
}

/// A clean stop leaves the front-end's last stripe row half filled. A member missing at the
/// next start (lost while the array was stopped, or given stale) must lose none of it: the
/// stop gives those rows their parity. Each member of the front-end R-group in turn.
#[test]
fn swan5_clean_stop_then_a_member_missing_loses_nothing() {
    clean_stop_then_a_member_missing(&[]);
}

/// The same over emulated zoned members: the stop writes each filling row's parity once, as
/// it stands, and the restart pads the rest of the row with the zeroes that parity assumed.
#[test]
fn swan5_over_zones_clean_stop_then_a_member_missing_loses_nothing() {
    clean_stop_then_a_member_missing(&["--zone-size", "512K"]);
}

fn clean_stop_then_a_member_missing(create_flags: &[&str]) {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let members = create_array(d, "swan5", 2, 3, "24M", create_flags);
    let server = Server::start(d, &members);
    // 25 blocks over rows of 2 data blocks: the last row is half filled.
    let image = random_image(&d.join("image"), 25 * 4096, 11);
    nbdcopy(d.join("image").to_str().unwrap(), &server.uri());
    let front = status(&members[0], d)["groups"]
        .as_array()
        .unwrap()
        .iter()
        .position(|g| g["role"] == "front-end")
        .expect("a front-end R-group");
    server.stop();
    for column in 0..3 {
        let victim = front * 3 + column;
        let run = d.join(format!("missing{victim}"));
        std::fs::create_dir(&run).unwrap();
        let mut given: Vec<std::path::PathBuf> = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let copy = run.join(format!("m{i}"));
            if i != victim {
                std::fs::copy(m, &copy).unwrap();
                given.push(copy);
            } else {
                given.push("missing".into());
            }
        }
        let server = Server::start(&run, &given);
        let got = volume(&server, &run);
        assert_same(&got[..image.len()], &image, &format!("restarted with member {victim} missing"));
        assert!(!server.log().contains("is lost"), "member {victim} missing after a clean stop:\n{}", server.log());
        let said = format!("member {victim} (missing(member {victim})) is failed at this start");
        assert!(server.log().contains(&said), "a degraded start is not said:\n{}", server.log());
        server.stop();
    }
}
