//! A real filesystem on `swan serve`, with no kernel NBD module: the export is exposed as a
//! file by nbdfuse, attached to a loop device (direct I/O, 4 KiB sectors), formatted ext4
//! and mounted; RocksDB's db_bench fills a database on it. Then everything is taken down
//! in order (umount, losetup -d, FUSE unmount, SIGTERM the server), the server is started
//! again on the same members, and the filesystem must come back: `e2fsck -fn` clean, and
//! db_bench finds every one of the keys. `swan check` must find the array clean at the end.
//!
//! db_bench's `fillrandom` draws keys with replacement (about 63 % of `--num` distinct keys),
//! so "(200000 of 200000 found)" could never hold after it; the fill here is
//! `filluniquerandom` (every key once, in random order), then `overwrite` (random rewrites
//! of existing keys), then a short `overwrite --sync=1` so every write reaches the server
//! as a FLUSH through ext4, the loop device and FUSE.
//!
//! Needs root (losetup, mount), /dev/fuse and loop devices. Every process, mount and loop
//! device is released by guards, in order, whatever fails.

mod common;

use common::*;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEYS: u32 = 200_000;

struct Tools {
    nbdfuse: PathBuf,
    losetup: PathBuf,
    mkfs: PathBuf,
    e2fsck: PathBuf,
    mount: PathBuf,
    umount: PathBuf,
    db_bench: PathBuf,
    /// fusermount3 or fusermount if installed (package fuse3); otherwise root's umount.
    fusermount: Option<PathBuf>,
}

impl Tools {
    fn new() -> Self {
        Tools {
            nbdfuse: require("nbdfuse", "libnbd-bin (Debian 12; nbdfuse on later releases)"),
            losetup: require("losetup", "mount"),
            mkfs: require("mkfs.ext4", "e2fsprogs"),
            e2fsck: require("e2fsck", "e2fsprogs"),
            mount: require("mount", "mount"),
            umount: require("umount", "mount"),
            db_bench: require("db_bench", "rocksdb-tools"),
            fusermount: find("fusermount3").or_else(|| find("fusermount")),
        }
    }
}

/// Mount points at or under `dir`, from /proc/self/mounts.
fn mounts_under(dir: &Path) -> Vec<String> {
    let prefix = dir.to_string_lossy().into_owned();
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
        .filter(|m| m == &prefix || m.starts_with(&format!("{prefix}/")))
        .collect()
}

/// The test's directory. If anything is still mounted in it when it is dropped (a cleanup
/// failed), it is left in place rather than removed through the mount.
struct SafeDir(Option<tempfile::TempDir>);

impl SafeDir {
    fn path(&self) -> &Path {
        self.0.as_ref().expect("temp dir").path()
    }
}

impl Drop for SafeDir {
    fn drop(&mut self) {
        if let Some(d) = self.0.take() {
            let left = mounts_under(d.path());
            if left.is_empty() {
                drop(d);
            } else {
                eprintln!("server_fs: {left:?} still mounted: leaving {} in place", d.path().display());
                std::mem::forget(d);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// nbdfuse, the loop device, the mount: each undone by its own guard

/// nbdfuse serving the export as `dir/nbd`.
struct Fuse {
    proc: Guard,
    dir: PathBuf,
    log: PathBuf,
    unmount: Vec<PathBuf>,
}

impl Fuse {
    fn start(t: &Tools, dir: &Path, uri: &str, log: &Path) -> Fuse {
        let child = Command::new(&t.nbdfuse)
            .arg(dir)
            .arg(uri)
            .stdin(Stdio::null())
            .stdout(File::create(log).expect("nbdfuse log"))
            .stderr(File::create(log.with_extension("err")).expect("nbdfuse log"))
            .spawn()
            .expect("start nbdfuse");
        let unmount = t.fusermount.iter().cloned().chain([t.umount.clone()]).collect();
        let mut f =
            Fuse { proc: Guard { child: Some(child) }, dir: dir.to_path_buf(), log: log.to_path_buf(), unmount };
        let start = Instant::now();
        while !f.file().metadata().is_ok_and(|m| m.len() > 0) {
            if let Some(st) = f.proc.child().try_wait().expect("poll nbdfuse") {
                panic!("nbdfuse exited ({st}) before exposing {}:\n{}", f.file().display(), f.output());
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no {} after 30 s:\n{}", f.file().display(), f.output());
            std::thread::sleep(Duration::from_millis(20));
        }
        f
    }

    fn file(&self) -> PathBuf {
        self.dir.join("nbd")
    }

    fn output(&self) -> String {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!("{}{}", read(&self.log), read(&self.log.with_extension("err")))
    }

    /// FUSE unmount (fusermount3 -u, fusermount -u, or umount as root); nbdfuse then exits.
    fn try_unmount(&mut self) -> Result<(), String> {
        let mut errors = String::new();
        for tool in &self.unmount {
            let fuse = tool.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fusermount"));
            let mut cmd = Command::new(tool);
            if fuse {
                cmd.arg("-u");
            }
            let out = run(cmd.arg(&self.dir), "FUSE unmount", Duration::from_secs(60));
            if out.status.success() {
                return match wait_deadline(self.proc.child(), Duration::from_secs(30)) {
                    Some(_) => Ok(()),
                    None => Err(format!("nbdfuse still running 30 s after {}", tool.display())),
                };
            }
            errors.push_str(&describe(&tool.display().to_string(), &out));
        }
        Err(errors)
    }

    fn unmount(mut self) {
        if let Err(e) = self.try_unmount() {
            panic!("could not unmount nbdfuse at {}: {e}", self.dir.display());
        }
    }
}

impl Drop for Fuse {
    fn drop(&mut self) {
        if self.proc.child.as_mut().is_some_and(|c| c.try_wait().ok().flatten().is_none()) {
            let _ = self.try_unmount();
        }
        // `proc` then kills nbdfuse if it is still there.
    }
}

/// A loop device over the nbdfuse file.
struct Loop {
    losetup: PathBuf,
    dev: String,
}

impl Loop {
    fn attach(t: &Tools, file: &Path) -> Loop {
        let args = |sector: bool| {
            let mut a: Vec<String> = ["--find", "--show", "--direct-io=on"].map(String::from).to_vec();
            if sector {
                a.extend(["--sector-size".into(), "4096".into()]);
            }
            a.push(file.display().to_string());
            a
        };
        let mut out = run(Command::new(&t.losetup).args(args(true)), "losetup", Duration::from_secs(60));
        if !out.status.success() {
            println!(
                "losetup refused --sector-size 4096 ({}); attaching with 512-byte sectors",
                text(&out.stderr).trim()
            );
            out = run(Command::new(&t.losetup).args(args(false)), "losetup", Duration::from_secs(60));
        }
        assert!(out.status.success(), "{}", describe("losetup --find --show --direct-io=on", &out));
        let dev = text(&out.stdout).trim().to_string();
        assert!(dev.starts_with("/dev/loop"), "losetup printed {dev:?}");
        Loop { losetup: t.losetup.clone(), dev }
    }

    fn try_detach(&mut self) -> Result<(), String> {
        let out = run(Command::new(&self.losetup).args(["-d", &self.dev]), "losetup -d", Duration::from_secs(60));
        if out.status.success() {
            self.dev.clear();
            Ok(())
        } else {
            Err(describe(&format!("losetup -d {}", self.dev), &out))
        }
    }

    fn detach(mut self) {
        if let Err(e) = self.try_detach() {
            panic!("{e}");
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if !self.dev.is_empty() {
            let _ = self.try_detach();
        }
    }
}

/// A mounted filesystem.
struct Mount {
    umount: PathBuf,
    dir: PathBuf,
    mounted: bool,
}

impl Mount {
    fn new(t: &Tools, dev: &str, dir: &Path) -> Mount {
        ok(Command::new(&t.mount).arg(dev).arg(dir), "mount", Duration::from_secs(60));
        Mount { umount: t.umount.clone(), dir: dir.to_path_buf(), mounted: true }
    }

    fn unmount(mut self) {
        ok(Command::new(&self.umount).arg(&self.dir), "umount", Duration::from_secs(120));
        self.mounted = false;
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if self.mounted {
            let out = run(Command::new(&self.umount).arg(&self.dir), "umount", Duration::from_secs(120));
            if !out.status.success() {
                let _ = run(Command::new(&self.umount).arg("-l").arg(&self.dir), "umount -l", Duration::from_secs(60));
            }
        }
    }
}

/// The export as a block device: nbdfuse and a loop device over it. Fields drop in order:
/// the loop device goes before the FUSE mount it sits on.
struct Attached {
    lo: Loop,
    fuse: Fuse,
}

impl Attached {
    fn new(t: &Tools, dir: &Path, server: &Server, n: u32) -> Attached {
        let fuse = Fuse::start(t, &dir.join("fuse"), &server.uri(), &dir.join(format!("nbdfuse-{n}.log")));
        let lo = Loop::attach(t, &fuse.file());
        Attached { lo, fuse }
    }

    fn detach(self) {
        let Attached { lo, fuse } = self;
        lo.detach();
        fuse.unmount();
    }
}

// ---------------------------------------------------------------------------------------------
// db_bench

fn db_bench(t: &Tools, db: &Path, args: &[&str], what: &str) -> String {
    let started = Instant::now();
    let out = ok(
        Command::new(&t.db_bench).args(args).args([
            &format!("--db={}", db.display()),
            &format!("--num={KEYS}"),
            "--value_size=400",
            "--compression_type=none",
        ]),
        what,
        Duration::from_secs(300),
    );
    for line in out.lines().filter(|l| l.contains("micros/op")) {
        // db_bench prints its progress on the same line, after carriage returns.
        println!("  {}", line.rsplit('\r').next().unwrap_or(line).trim());
    }
    println!("  ({what}: {:.1} s)", started.elapsed().as_secs_f64());
    out
}

fn all_found(out: &str, what: &str) {
    let want = format!("({KEYS} of {KEYS} found)");
    assert!(out.contains(&want), "{what}: db_bench did not report {want}:\n{out}");
}

// ---------------------------------------------------------------------------------------------
// the test

#[test]
fn ext4_and_rocksdb_over_nbdfuse_survive_a_restart() {
    two_lives("swan0 3x2 (256 MiB members)", &[]);
}

/// The same over emulated zoned members (4 MiB zones, a segment each): ext4's and
/// RocksDB's writes reach the zones in order, GC resets what it frees, and the restart
/// finds the zones as the write pointers left them.
#[test]
fn ext4_and_rocksdb_over_zoned_members_survive_a_restart() {
    two_lives(
        "swan0 3x2 (256 MiB emulated zoned members, 4 MiB zones, 3 active)",
        &["--zone-size", "4M", "--max-active-zones", "3"],
    );
}

/// Format, fill, overwrite and read ext4 and RocksDB over an array made with `made` flags;
/// then a second server finds the file system clean and every key.
fn two_lives(what: &str, made: &[&str]) {
    let t = Tools::new();
    let uid = ok(Command::new("id").arg("-u"), "id -u", Duration::from_secs(10));
    assert_eq!(
        uid.trim(),
        "0",
        "server_fs needs root: it attaches a loop device and mounts ext4 (run the tests as root)"
    );
    let started = Instant::now();
    let tmp = SafeDir(Some(tempfile::Builder::new().prefix("swan-fs-").tempdir().expect("temp dir")));
    let dir = tmp.path();
    let (fuse_dir, mnt) = (dir.join("fuse"), dir.join("mnt"));
    for d in [&fuse_dir, &mnt] {
        std::fs::create_dir_all(d).expect("create a directory");
    }
    let members: Vec<PathBuf> = (0..6).map(|i| dir.join(format!("m{i}"))).collect();
    let mut args =
        vec!["create", "--scheme", "swan0", "--rgroups", "3", "--ssds-per-rgroup", "2", "--member-size", "256M"];
    args.extend(made);
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir);
    assert!(out.status.success(), "{}", describe("swan create", &out));
    let db = mnt.join("db");

    // First life: format, fill, overwrite, read.
    let server = Server::start(dir, &members);
    let dev = Attached::new(&t, dir, &server, 1);
    println!("{what} served at {}, {} over {}", server.uri(), dev.lo.dev, dev.fuse.file().display());
    ok(Command::new(&t.mkfs).args(["-q", "-F", &dev.lo.dev]), "mkfs.ext4", Duration::from_secs(120));
    let fs = Mount::new(&t, &dev.lo.dev, &mnt);
    let out = db_bench(
        &t,
        &db,
        &["--benchmarks=filluniquerandom,overwrite,readrandom", &format!("--reads={KEYS}"), "--seed=1"],
        "db_bench fill",
    );
    all_found(&out, "db_bench fill");
    db_bench(
        &t,
        &db,
        &["--benchmarks=overwrite", "--use_existing_db=1", "--sync=1", "--writes=3000", "--seed=2"],
        "db_bench synced overwrite",
    );
    let s = status(&members[0], dir);
    println!(
        "  server: {} MiB written, {} sync points, {} GC victims",
        s["user_bytes_written"].as_u64().unwrap_or(0) >> 20,
        s["sync_points"],
        s["victims"]
    );
    fs.unmount();
    dev.detach();
    server.stop();

    // Second life: the same members, a new server, a new FUSE mount and loop device.
    let server = Server::start(dir, &members);
    let dev = Attached::new(&t, dir, &server, 2);
    let out = run(Command::new(&t.e2fsck).args(["-fn", &dev.lo.dev]), "e2fsck -fn", Duration::from_secs(300));
    assert!(
        out.status.success(),
        "the filesystem is not clean after a restart of the server:\n{}",
        describe("e2fsck -fn", &out)
    );
    println!("  e2fsck -fn {}: clean", dev.lo.dev);
    let fs = Mount::new(&t, &dev.lo.dev, &mnt);
    let out = db_bench(
        &t,
        &db,
        &["--benchmarks=readrandom", "--use_existing_db=1", &format!("--reads={KEYS}"), "--seed=3"],
        "db_bench readrandom after the restart",
    );
    all_found(&out, "db_bench readrandom after the restart");
    fs.unmount();
    dev.detach();
    server.stop();

    let mut args = vec!["check"];
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir);
    assert!(out.status.success() && text(&out.stdout).contains("clean"), "{}", describe("swan check", &out));
    println!("  swan check: clean; {:.1} s in all", started.elapsed().as_secs_f64());
}
