//! Members that misbehave without failing, through the real server and real NBD clients.
//!
//! - A member that hangs: one member file is served through nbdfuse from nbdkit with its
//!   pause filter, so its reads, writes and syncs hang on command (a real hang: the
//!   server's thread waits in the system call). With `--member-timeout 2` the array must go
//!   degraded within the timeout and a margin, keep serving the right data from the other
//!   members, show the member failed in `swan status`, refuse to rebuild onto the same file
//!   while its stuck call may still write there, and `swan replace` must rebuild it
//!   elsewhere. On RAID0, with nothing to rebuild from, the client's request fails instead.
//! - A member that is full: the members are sparse files on a small tmpfs that is then
//!   filled. A fill that clears within the member timeout costs a pause and nothing else;
//!   one that outlasts it fails the client's write with an error, the log names the member
//!   and says its file system is full, nothing flushed before is lost, no member is failed,
//!   and once space is back a restart serves the array again with no rebuild. Or, with no
//!   restart, the array resumes by itself: `swan status` says durability stopped by a full
//!   file system, then on again; writes and FLUSH succeed, what was flushed is intact, and
//!   `swan check` is clean after the stop.
//!
//! Needs root (mount, FUSE), /dev/fuse, nbdfuse, nbdkit (its file plugin and pause filter),
//! nbdcopy and nbdinfo.

mod common;

use common::pausable::Pausable;
use common::*;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use swan_testkit::rng::SplitMix64;

const DEADLINE: Duration = Duration::from_secs(180);

/// The whole volume, read back through NBD.
fn volume(uri: &str, dir: &Path) -> Vec<u8> {
    let out = dir.join("readback");
    let _ = std::fs::remove_file(&out);
    nbdcopy(uri, out.to_str().unwrap());
    std::fs::read(&out).expect("read back")
}

/// `len` bytes of the volume from byte `offset`, read back through NBD (nbdkit's offset
/// filter cuts the range out).
fn read_range(uri: &str, offset: u64, len: u64, dir: &Path) -> Vec<u8> {
    let out = dir.join("range");
    let _ = std::fs::remove_file(&out);
    let got = run(
        Command::new("nbdcopy")
            .args(["--", "[", "nbdkit", "--exit-with-parent", "--filter=offset", "nbd"])
            .arg(format!("uri={uri}"))
            .arg(format!("offset={offset}"))
            .arg(format!("range={len}"))
            .arg("]")
            .arg(&out),
        "nbdcopy of a range",
        DEADLINE,
    );
    assert!(got.status.success(), "{}", describe("nbdcopy of a range", &got));
    std::fs::read(&out).expect("read back")
}

fn assert_same(got: &[u8], want: &[u8], when: &str) {
    assert_eq!(got.len(), want.len(), "{when}: the sizes differ");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!("{when}: differs from what was written, first at byte {i} (block {})", i / 4096);
    }
}

fn health(member: &Path, dir: &Path) -> Vec<String> {
    let st = status(member, dir);
    st["members"].as_array().expect("members").iter().map(|m| m["health"].as_str().unwrap().to_string()).collect()
}

/// `nbdcopy --flush` of `file` to the volume at byte `offset` (the whole file), run in the
/// background.
fn copy_in(file: &Path, uri: &str, offset: u64) -> std::process::Child {
    let len = std::fs::metadata(file).expect("image").len();
    // nbdcopy writes at offset 0 of its destination: nbdkit's offset filter, in front of
    // the server, moves that to `offset`.
    Command::new("nbdcopy")
        .arg("--flush")
        .arg("--")
        .arg(file)
        .args(["[", "nbdkit", "--exit-with-parent", "--filter=offset", "nbd"])
        .arg(format!("uri={uri}"))
        .arg(format!("offset={offset}"))
        .arg(format!("range={len}"))
        .arg("]")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nbdcopy")
}

fn finish(child: std::process::Child, what: &str) -> std::process::Output {
    let mut g = Guard::new(child);
    let mut out = String::new();
    let mut err = String::new();
    let status =
        wait_deadline(g.child(), DEADLINE).unwrap_or_else(|| panic!("{what}: still running after {DEADLINE:?}"));
    let mut c = g.child.take().expect("child");
    if let Some(mut o) = c.stdout.take() {
        let _ = o.read_to_string(&mut out);
    }
    if let Some(mut e) = c.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    // Reaped already by `wait_deadline`: this only returns its status again.
    let status = c.wait().unwrap_or(status);
    std::process::Output { status, stdout: out.into_bytes(), stderr: err.into_bytes() }
}

/// SWAN5 or RAID5: member `victim` hangs; the array fails it within the timeout and a
/// margin, serves the right data, and rebuilds it onto a new file.
fn hung_member_is_failed_and_rebuilt(scheme: &str, rgroups: u32, victim: usize) {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut members = create_array(d, scheme, rgroups, 3, "32M", &[]);
    let shim = Pausable::start(&members[victim], &d.join("fuse"), &format!("m{victim}"));
    let mut served = members.clone();
    served[victim] = shim.file.clone();
    let timeout = 2.0;
    let server = Server::start_with(d, &served, &["--member-timeout", "2"]);
    let uri = server.uri();
    let size = export_size(&uri);
    let a = SplitMix64(1).bytes(size as usize);
    std::fs::write(d.join("a"), &a).unwrap();
    nbdcopy(d.join("a").to_str().unwrap(), &uri);
    assert_same(&volume(&uri, d), &a, "written with every member answering");

    // The member stops answering; a rewrite of the whole volume (with its FLUSH) must reach
    // it, and must still succeed.
    shim.pause();
    let paused = Instant::now();
    let b = SplitMix64(2).bytes(size as usize);
    std::fs::write(d.join("b"), &b).unwrap();
    let writer = copy_in(&d.join("b"), &uri, 0);
    let any = &members[(victim + 1) % members.len()];
    let failed_after = loop {
        if health(any, d)[victim] == "failed" {
            break paused.elapsed();
        }
        assert!(paused.elapsed() < Duration::from_secs(60), "member {victim} not failed 60 s after it hung");
        std::thread::sleep(Duration::from_millis(50));
    };
    println!(
        "{scheme}: member {victim} hung; failed after {:.2} s (--member-timeout {timeout})",
        failed_after.as_secs_f64()
    );
    assert!(
        failed_after.as_secs_f64() < timeout + 15.0,
        "member {victim} failed {failed_after:?} after it hung, with a timeout of {timeout} s"
    );
    let out = finish(writer, "nbdcopy while the member hangs");
    assert!(out.status.success(), "{}", describe("nbdcopy while a member hangs", &out));
    assert_same(&volume(&uri, d), &b, "rewritten while a member hangs");
    let log = server.log();
    assert!(log.contains(&format!("member {victim}")) && log.contains("the member hangs"), "{log}");

    // The stuck call may still write to that file: no rebuild onto it.
    let i = victim.to_string();
    let out = swan(&["replace", "--member", &i, "--new", shim.file.to_str().unwrap(), any.to_str().unwrap()], d);
    assert!(!out.status.success(), "a rebuild onto the hung file was accepted: {}", describe("swan replace", &out));
    assert!(text(&out.stderr).contains("stuck"), "{}", describe("swan replace", &out));

    let new = d.join(format!("m{victim}-new"));
    let out = swan(&["replace", "--member", &i, "--new", new.to_str().unwrap(), "--wait", any.to_str().unwrap()], d);
    assert!(out.status.success(), "{}", describe("swan replace", &out));
    assert!(health(any, d).iter().all(|h| h == "healthy"), "after the rebuild: {:?}", health(any, d));
    assert_same(&volume(&uri, d), &b, "after the rebuild");
    shim.resume();
    server.stop();
    drop(shim);
    members[victim] = new;
    check_clean(&members, d, &format!("{scheme} after the hung member was rebuilt"));
    let server = Server::start(d, &members);
    assert_same(&volume(&server.uri(), d), &b, "restarted on the rebuilt member");
    server.stop();
}

#[test]
fn swan5_fails_a_hung_member_and_rebuilds_it() {
    hung_member_is_failed_and_rebuilt("swan5", 2, 4);
}

#[test]
fn raid5_fails_a_hung_member_and_rebuilds_it() {
    hung_member_is_failed_and_rebuilt("raid5", 1, 1);
}

/// RAID0 has nothing to serve a hung member's blocks from: the request fails (EIO), the
/// server keeps answering, and once the member answers again a restart serves it all.
#[test]
fn raid0_fails_the_request_when_a_member_hangs() {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let members = create_array(d, "raid0", 1, 2, "16M", &[]);
    let shim = Pausable::start(&members[1], &d.join("fuse"), "m1");
    let served = vec![members[0].clone(), shim.file.clone()];
    let server = Server::start_with(d, &served, &["--member-timeout", "2"]);
    let uri = server.uri();
    let size = export_size(&uri);
    let a = SplitMix64(3).bytes(size as usize);
    std::fs::write(d.join("a"), &a).unwrap();
    nbdcopy(d.join("a").to_str().unwrap(), &uri);
    shim.pause();
    let started = Instant::now();
    let out = finish(copy_in(&d.join("a"), &uri, 0), "nbdcopy while a RAID0 member hangs");
    assert!(!out.status.success(), "a write to a hung RAID0 member succeeded");
    println!("raid0: the write failed after {:.2} s: {}", started.elapsed().as_secs_f64(), text(&out.stderr).trim());
    assert!(started.elapsed() < Duration::from_secs(60), "the failed write took {:?}", started.elapsed());
    let log = server.log();
    assert!(log.contains("the member hangs"), "{log}");
    // The server still answers (status, and the member is not failed: RAID0 cannot).
    assert!(health(&members[0], d).iter().all(|h| h == "healthy"));
    shim.resume();
    server.kill9();
    drop(shim);
    let server = Server::start(d, &members);
    assert_same(&volume(&server.uri(), d), &a, "restarted once the member answers");
    server.stop();
    check_clean(&members, d, "raid0 after the hang");
}

// ---------------------------------------------------------------------------------------------
// a member whose file system fills

/// A tmpfs of `size` mounted at `dir`, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = run(
            Command::new(require("mount", "mount"))
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(dir),
            "mount -t tmpfs",
            DEADLINE,
        );
        assert!(out.status.success(), "{}", describe("mount -t tmpfs (needs root)", &out));
        Tmpfs(dir.to_path_buf())
    }

    /// Fill what is left with a file `filler`.
    fn fill(&self) -> PathBuf {
        let filler = self.0.join("filler");
        let out = run(
            Command::new("dd").args(["if=/dev/zero", "bs=1M"]).arg(format!("of={}", filler.display())),
            "dd",
            DEADLINE,
        );
        assert!(text(&out.stderr).contains("No space left"), "{}", describe("dd until the tmpfs is full", &out));
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// A swan5 array (2 R-groups x 3) of 6 sparse members of 32 MiB (192 MiB) on a 48 MiB tmpfs
/// under `d`: room for what is written first, not for the whole volume.
fn swan5_on_a_small_tmpfs(d: &Path) -> (Tmpfs, Vec<PathBuf>) {
    let fs = Tmpfs::mount(&d.join("fs"), "48M");
    let members: Vec<PathBuf> = (0..6).map(|i| fs.0.join(format!("m{i}"))).collect();
    let mut args =
        vec!["create", "--scheme", "swan5", "--rgroups", "2", "--ssds-per-rgroup", "3", "--member-size", "32M"];
    args.extend(members.iter().map(|m| m.to_str().unwrap()));
    let out = swan(&args, d);
    assert!(out.status.success(), "{}", describe("swan create", &out));
    (fs, members)
}

/// Three 8 MiB files `a`, `b`, `c` in `d`, from seeds `seed`, `seed + 1`, `seed + 2`, for
/// nbdcopy to write into the export; their contents, to check what reads back.
fn three_chunk_files(d: &Path, seed: u64) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let chunk = 8 << 20;
    let (a, b, c) =
        (SplitMix64(seed).bytes(chunk), SplitMix64(seed + 1).bytes(chunk), SplitMix64(seed + 2).bytes(chunk));
    for (name, data) in [("a", &a), ("b", &b), ("c", &c)] {
        std::fs::write(d.join(name), data).unwrap();
    }
    (a, b, c)
}

#[test]
fn a_full_member_file_system_fails_writes_loses_nothing_and_needs_no_rebuild() {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    require("nbdkit", "nbdkit");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (fs, members) = swan5_on_a_small_tmpfs(d);
    let (a, b, c) = three_chunk_files(d, 11);
    let chunk = a.len();

    // A fill that clears within the member timeout: the write waits, then lands.
    let server = Server::start_with(d, &members, &["--member-timeout", "20"]);
    let uri = server.uri();
    nbdcopy(d.join("a").to_str().unwrap(), &uri);
    let filler = fs.fill();
    let writer = copy_in(&d.join("b"), &uri, chunk as u64);
    std::thread::sleep(Duration::from_secs(2));
    std::fs::remove_file(&filler).unwrap();
    let out = finish(writer, "nbdcopy across a short fill");
    assert!(out.status.success(), "{}", describe("nbdcopy across a short fill", &out));
    let log = server.stop();
    assert!(log.contains("its file system is full; waiting"), "the wait for space left no word:\n{log}");

    // A fill that outlasts it: the write fails, the log says which member and why.
    let server = Server::start_with(d, &members, &["--member-timeout", "1"]);
    let uri = server.uri();
    let filler = fs.fill();
    let out = finish(copy_in(&d.join("c"), &uri, 2 * chunk as u64), "nbdcopy into a full file system");
    assert!(!out.status.success(), "a write into a full file system succeeded");
    println!("full: the client saw: {}", text(&out.stderr).trim());
    let log = server.log();
    let full_line = log.lines().find(|l| l.contains("the file system holding the member is full"));
    let full_line = full_line.unwrap_or_else(|| panic!("no member named as full in the log:\n{log}"));
    assert!(members.iter().any(|m| full_line.contains(m.to_str().unwrap())), "{full_line}");
    assert!(!log.contains("FAILED"), "a member was failed for a full file system:\n{log}");
    // Nothing flushed before is lost, and the server still answers.
    let v = read_range(&uri, 0, 2 * chunk as u64, d);
    assert_same(&v, &[a.as_slice(), b.as_slice()].concat(), "flushed before the fill");
    // The write that failed reads as an error until it is written again (not as stale data).
    let out = run(
        Command::new("nbdcopy")
            .args(["--", "[", "nbdkit", "--exit-with-parent", "--filter=offset", "nbd"])
            .arg(format!("uri={uri}"))
            .arg(format!("offset={}", 2 * chunk))
            .arg(format!("range={chunk}"))
            .args(["]", "null:"]),
        "nbdcopy of the failed range",
        DEADLINE,
    );
    println!("full: reading the range whose write failed: {}", text(&out.stderr).trim());
    assert!(health(&members[0], d).iter().all(|h| h == "healthy"), "{:?}", health(&members[0], d));
    server.kill9();

    // Space comes back: a restart serves the array again, no member to rebuild.
    std::fs::remove_file(&filler).unwrap();
    let server = Server::start_with(d, &members, &["--member-timeout", "1"]);
    let uri = server.uri();
    assert!(health(&members[0], d).iter().all(|h| h == "healthy"));
    let out = finish(copy_in(&d.join("c"), &uri, 2 * chunk as u64), "nbdcopy once space is back");
    assert!(out.status.success(), "{}", describe("nbdcopy once space is back", &out));
    let v = volume(&uri, d);
    assert_same(&v[..3 * chunk], &[a.as_slice(), b.as_slice(), c.as_slice()].concat(), "after space came back");
    server.stop();
    check_clean(&members, d, "swan5 after its file system filled");
}

/// The server's durability line as `swan status --json` gives it.
fn durability(member: &Path, dir: &Path) -> (String, bool, u64) {
    let st = status(member, dir);
    let line = st["durability"].as_str().expect("durability").to_string();
    (line, st["stopped_by_full"].as_bool().expect("stopped_by_full"), st["resumes"].as_u64().expect("resumes"))
}

#[test]
fn a_full_member_file_system_resumes_by_itself_once_space_returns() {
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    require("nbdkit", "nbdkit");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (fs, members) = swan5_on_a_small_tmpfs(d);
    let (a, b, c) = three_chunk_files(d, 21);
    let chunk = a.len();
    let server = Server::start_with(d, &members, &["--member-timeout", "1"]);
    let uri = server.uri();
    let out = finish(copy_in(&d.join("a"), &uri, 0), "nbdcopy before the fill");
    assert!(out.status.success(), "{}", describe("nbdcopy before the fill", &out));
    assert_eq!(durability(&members[0], d), ("on".to_string(), false, 0));

    // The fill outlasts the member timeout: the write fails and durability stops.
    let filler = fs.fill();
    let out = finish(copy_in(&d.join("c"), &uri, 2 * chunk as u64), "nbdcopy into a full file system");
    assert!(!out.status.success(), "a write into a full file system succeeded");
    println!("full: the client saw: {}", text(&out.stderr).trim());
    let (line, by_full, _) = durability(&members[0], d);
    assert!(by_full && line.contains("full file system"), "swan status says: {line}");
    let human = swan(&["status", members[0].to_str().unwrap()], d);
    assert!(text(&human.stdout).contains("durability: stopped by a full file system"), "{}", text(&human.stdout));
    // While full, a write is refused and reads go on.
    let out = finish(copy_in(&d.join("b"), &uri, chunk as u64), "nbdcopy while full");
    assert!(!out.status.success(), "a write was accepted while durability was stopped");
    assert_same(&read_range(&uri, 0, chunk as u64, d), &a, "flushed before the fill, read while full");

    // Space comes back: the same server process resumes by itself.
    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    loop {
        let (line, _, resumes) = durability(&members[0], d);
        if line == "on" && resumes == 1 {
            break;
        }
        assert!(freed.elapsed() < Duration::from_secs(60), "not resumed 60 s after space came back: {line}");
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("full: resumed {:.2} s after space came back", freed.elapsed().as_secs_f64());
    let log = server.log();
    assert!(log.contains("space is back; array recovered and serving writes"), "{log}");
    assert!(!log.contains("FAILED"), "a member was failed for a full file system:\n{log}");
    assert!(health(&members[0], d).iter().all(|h| h == "healthy"), "{:?}", health(&members[0], d));
    // What was flushed before is there; the failed range reads back old (zeroes) or new.
    assert_same(&read_range(&uri, 0, chunk as u64, d), &a, "flushed before the fill, after the resume");
    let failed = read_range(&uri, 2 * chunk as u64, chunk as u64, d);
    for (i, (got, new)) in failed.chunks(4096).zip(c.chunks(4096)).enumerate() {
        assert!(got == new || got.iter().all(|&x| x == 0), "block {i} of the failed write holds neither old nor new");
    }
    // New writes and FLUSH succeed, without a restart.
    for (name, at) in [("b", chunk), ("c", 2 * chunk)] {
        let out = finish(copy_in(&d.join(name), &uri, at as u64), "nbdcopy after the resume");
        assert!(out.status.success(), "{}", describe("nbdcopy --flush after the resume", &out));
    }
    let want = [a.as_slice(), b.as_slice(), c.as_slice()].concat();
    assert_same(&volume(&uri, d)[..3 * chunk], &want, "written after the resume");
    server.stop();
    check_clean(&members, d, "swan5 after it resumed from a full file system");
    let server = Server::start(d, &members);
    assert_same(&volume(&server.uri(), d)[..3 * chunk], &want, "after a restart");
    server.stop();
}
