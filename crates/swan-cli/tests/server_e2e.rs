//! End-to-end tests of the real block server: `swan create` members in a temporary
//! directory, start `swan serve` as a child process on a loopback port, and drive it with
//! real clients (fio's nbd engine, nbdinfo, nbdcopy, qemu-img) and with a hand-rolled NBD
//! client that misbehaves on purpose. Then stop it with SIGTERM, `swan check` the members
//! offline, and restart it to prove the data survived.
//!
//! - `fio_*`: 8 KiB random writes with crc32c verification over 90 % of the export, with
//!   enough overwrites that every R-group of the log-structured schemes has collected
//!   victims; clean stop, `swan check`, restart, `--verify_only` of the same job.
//! - `qemu_img_and_nbdcopy_round_trip`: images in and out, byte for byte; `nbdinfo --json`.
//! - `hostile_clients_do_not_disturb_a_good_one`: refused requests get the right errno while
//!   another connection keeps writing and reading; broken handshakes and clients that vanish
//!   mid-request or mid-reply end only their own connection.
//! - `create_and_serve_refuse_bad_members`: the errors of `swan create` and `swan serve`.
//!
//! Every client tool is required: a missing one fails the test and names its Debian package
//! (scripts/test.sh installs them). Every child process and every wait has a deadline, and the
//! server is stopped (SIGTERM, then SIGKILL) when its guard is dropped, also on a failed test.
//! The server listens on 127.0.0.1:0 and the test reads the port it got from its log, so
//! parallel tests never race for a port.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};
use swan_testkit::rng::SplitMix64;

const SWAN: &str = env!("CARGO_BIN_EXE_swan");

/// A `swan create`, `check`, `status`, nbdinfo, qemu-img or nbdcopy run.
const COMMAND_DEADLINE: Duration = Duration::from_secs(60);
/// One fio run (the longest takes about 15 s).
const FIO_DEADLINE: Duration = Duration::from_secs(180);
/// From spawning `swan serve` to its "serving on" line.
const SERVER_START: Duration = Duration::from_secs(30);
/// From SIGTERM to exit (the server's own shutdown grace is 5 s).
const SERVER_STOP: Duration = Duration::from_secs(30);
/// Any single socket read or write of the hand-rolled client.
const NBD_IO_TIMEOUT: Duration = Duration::from_secs(30);

const MIB: u64 = 1 << 20;

// ------------------------------------------------------------------ processes

/// Fails the test unless `tool` is on PATH, naming the Debian package that provides it.
fn require(tool: &str, package: &str) {
    use std::os::unix::fs::PermissionsExt;
    let found = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    });
    assert!(
        found,
        "`{tool}` is not on PATH, and the server's end-to-end tests drive swan with it (they are never skipped): \
         install it with `apt-get install -y {package}` (scripts/test.sh does this when run as root)"
    );
}

/// What a finished command left behind.
struct Ran {
    what: String,
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Ran {
    /// Panics unless the command succeeded.
    fn ok(self) -> Ran {
        assert!(self.status.success(), "{} failed ({}):\n{}", self.what, self.status, self.output());
        self
    }

    /// Panics unless the command failed (and did not crash).
    fn failed(self) -> Ran {
        assert!(!self.status.success(), "{} should have failed but succeeded:\n{}", self.what, self.output());
        assert!(
            self.status.code().is_some(),
            "{} was killed by a signal ({}):\n{}",
            self.what,
            self.status,
            self.output()
        );
        assert!(!self.stderr.contains("panicked"), "{} panicked:\n{}", self.what, self.output());
        self
    }

    fn output(&self) -> String {
        format!("--- stdout (end)\n{}\n--- stderr (end)\n{}", tail(&self.stdout, 6000), tail(&self.stderr, 6000))
    }
}

/// The last `n` bytes of `s` (at a character boundary).
fn tail(s: &str, n: usize) -> &str {
    let mut at = s.len().saturating_sub(n);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    &s[at..]
}

/// Runs `cmd` to completion; kills it and fails the test if it outlives `limit`.
fn run(cmd: &mut Command, limit: Duration) -> Ran {
    let what = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    let Some(status) = wait_until(&mut child, limit) else {
        let _ = child.kill();
        let _ = child.wait();
        let (out, err) = (stdout.join().unwrap_or_default(), stderr.join().unwrap_or_default());
        panic!(
            "{what} still running after {limit:?}: killed\n--- stdout\n{}\n--- stderr\n{}",
            tail(&out, 4000),
            tail(&err, 4000)
        );
    };
    Ran { what, status, stdout: stdout.join().expect("stdout reader"), stderr: stderr.join().expect("stderr reader") }
}

/// Waits for `child` to exit, for at most `limit`.
fn wait_until(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("waiting for a child process") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
}

/// Sends SIGTERM to `pid` (through kill(1): the test crate has no libc binding).
fn sigterm(pid: u32) {
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// `swan` with its control socket in `run_dir`, so parallel tests never share one.
fn swan_in(run_dir: &Path) -> Command {
    let mut c = Command::new(SWAN);
    c.env("SWAN_RUN_DIR", run_dir).current_dir(run_dir);
    c
}

// --------------------------------------------------------------------- arrays

/// Members of one array in a temporary directory (removed on drop).
struct Array {
    dir: tempfile::TempDir,
    members: Vec<PathBuf>,
    uuid: String,
    scheme: String,
    ssds_per_rgroup: usize,
    /// Serve with `--direct` (O_DIRECT members).
    direct: bool,
}

impl Array {
    /// `swan create` over fresh 128 MiB members with 1 MiB segments.
    fn create(scheme: &str, rgroups: usize, ssds_per_rgroup: usize) -> Array {
        let dir = tempfile::Builder::new().prefix("swan-e2e-").tempdir().expect("create a temporary directory");
        let members: Vec<PathBuf> = (0..rgroups * ssds_per_rgroup).map(|i| dir.path().join(format!("m{i}"))).collect();
        let ran = run(
            swan_in(dir.path())
                .args(["create", "--scheme", scheme, "--rgroups", &rgroups.to_string()])
                .args(["--ssds-per-rgroup", &ssds_per_rgroup.to_string(), "--member-size", "128M", "--segment", "1M"])
                .args(&members),
            COMMAND_DEADLINE,
        )
        .ok();
        let uuid = created_uuid(&ran.stdout);
        Array { dir, members, uuid, scheme: scheme.to_string(), ssds_per_rgroup, direct: false }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn swan(&self) -> Command {
        swan_in(self.path())
    }

    fn log_structured(&self) -> bool {
        !self.scheme.starts_with("raid")
    }

    /// R-groups GC runs in: SWAN's R-groups, or Log-RAID's one log over every member.
    fn gc_groups(&self) -> usize {
        if self.scheme.starts_with("swan") {
            self.members.len() / self.ssds_per_rgroup
        } else {
            1
        }
    }

    fn group_of(&self, member: usize) -> usize {
        if self.scheme.starts_with("swan") {
            member / self.ssds_per_rgroup
        } else {
            0
        }
    }

    /// Starts `swan serve` over the members in array order.
    fn serve(&self) -> Server {
        Server::start(self, &self.members)
    }

    /// Starts `swan serve` with the members in reverse order (each one's superblock says
    /// where it belongs).
    fn serve_reversed(&self) -> Server {
        let reversed: Vec<PathBuf> = self.members.iter().rev().cloned().collect();
        Server::start(self, &reversed)
    }

    /// `swan status --json` of the running server.
    fn status(&self) -> Value {
        let ran = run(self.swan().args(["status", "--json"]).arg(&self.members[0]), COMMAND_DEADLINE).ok();
        serde_json::from_str(&ran.stdout)
            .unwrap_or_else(|e| panic!("swan status --json printed no JSON ({e}):\n{}", ran.output()))
    }

    /// `swan check` must exit 0 and say "clean".
    fn check_clean(&self) {
        let ran = run(self.swan().arg("check").args(&self.members), COMMAND_DEADLINE).ok();
        assert!(ran.stdout.lines().any(|l| l.trim() == "clean"), "swan check did not say \"clean\":\n{}", ran.output());
    }
}

/// The UUID in `swan create`'s "created <scheme> array <uuid>: ..." line.
fn created_uuid(stdout: &str) -> String {
    let uuid = stdout
        .split_once(" array ")
        .and_then(|(_, rest)| rest.split(':').next())
        .unwrap_or_else(|| panic!("no \"created ... array UUID:\" in swan create's output:\n{stdout}"));
    assert_eq!(uuid.len(), 36, "not a UUID: {uuid:?} in {stdout:?}");
    uuid.to_string()
}

// --------------------------------------------------------------------- server

/// A running `swan serve`. Dropping it stops the server: SIGTERM, then SIGKILL after 10 s.
struct Server {
    child: Child,
    pid: u32,
    /// The address it serves on, from its "serving on IP:PORT" line.
    addr: String,
    log: Arc<Mutex<String>>,
    log_thread: Option<JoinHandle<()>>,
    exited: bool,
}

impl Server {
    fn start(array: &Array, members: &[PathBuf]) -> Server {
        let mut child = array
            .swan()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(array.direct.then_some("--direct"))
            .args(members)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start swan serve");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let log2 = Arc::clone(&log);
        let log_thread = thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // Logged before the address is handed over, so the log has the line too.
                {
                    let mut l = log2.lock().unwrap_or_else(|e| e.into_inner());
                    l.push_str(&line);
                    l.push('\n');
                }
                if let Some((_, rest)) = line.split_once("serving on ") {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_string());
                }
            }
        });
        // From here on, a panic stops the server through Drop.
        let pid = child.id();
        let mut server = Server { child, pid, addr: String::new(), log, log_thread: Some(log_thread), exited: false };
        let deadline = Instant::now() + SERVER_START;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(addr) => {
                    server.addr = addr;
                    break;
                }
                Err(mpsc::RecvTimeoutError::Timeout) if Instant::now() < deadline => {
                    if let Some(status) = server.child.try_wait().expect("wait for swan serve") {
                        server.exited = true;
                        thread::sleep(Duration::from_millis(100));
                        panic!("swan serve exited ({status}) before serving:\n{}", server.log());
                    }
                }
                Err(_) => panic!("swan serve did not start serving within {SERVER_START:?}:\n{}", server.log()),
            }
        }
        assert!(server.addr.parse::<SocketAddr>().is_ok(), "bad listen address {:?}:\n{}", server.addr, server.log());
        server
    }

    fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn uri(&self) -> String {
        format!("nbd://{}", self.addr)
    }

    fn port(&self) -> u16 {
        self.addr.parse::<SocketAddr>().expect("listen address").port()
    }

    /// Fails the test if the server has exited.
    fn assert_alive(&mut self, after: &str) {
        if let Some(status) = self.child.try_wait().expect("wait for swan serve") {
            self.exited = true;
            thread::sleep(Duration::from_millis(100));
            panic!("swan serve exited ({status}) after {after}:\n{}", self.log());
        }
    }

    /// SIGTERM; the server must exit 0 within [`SERVER_STOP`] saying it stopped cleanly.
    fn stop(mut self) -> String {
        sigterm(self.pid);
        let Some(status) = wait_until(&mut self.child, SERVER_STOP) else {
            panic!("swan serve still running {SERVER_STOP:?} after SIGTERM:\n{}", self.log());
        };
        self.exited = true;
        if let Some(t) = self.log_thread.take() {
            let _ = t.join();
        }
        let log = self.log();
        assert!(status.success(), "swan serve exited {status} after SIGTERM:\n{log}");
        assert!(log.contains("stopped cleanly"), "swan serve did not report a clean stop:\n{log}");
        assert!(!log.contains("panicked"), "swan serve panicked:\n{log}");
        log
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.exited || matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        sigterm(self.pid);
        if wait_until(&mut self.child, Duration::from_secs(10)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

// ------------------------------------------------------------------ utilities

/// Deterministic bytes for images and patterns (splitmix64).
fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut rng = SplitMix64(seed);
    let mut v = vec![0u8; len];
    for chunk in v.chunks_mut(8) {
        let x = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&x[..chunk.len()]);
    }
    v
}

/// The first offset at which `a` and `b` differ, if any.
fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or_else(|| (a.len() != b.len()).then_some(a.len().min(b.len())))
}

/// Compares the file at `path`, from `offset`, with `expected`, in chunks.
fn assert_file_region(path: &Path, offset: u64, expected: &[u8], what: &str) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; 4 << 20];
    let mut at = 0;
    while at < expected.len() {
        let n = (expected.len() - at).min(buf.len());
        f.read_exact(&mut buf[..n])
            .unwrap_or_else(|e| panic!("{what}: {} is short at {}: {e}", path.display(), offset + at as u64));
        if let Some(d) = first_difference(&buf[..n], &expected[at..at + n]) {
            panic!("{what}: {} differs at byte {}", path.display(), offset + (at + d) as u64);
        }
        at += n;
    }
}

/// Every byte of the file at `path` from `offset` on is zero.
fn assert_file_zero_from(path: &Path, offset: u64, what: &str) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    f.seek(SeekFrom::Start(offset)).expect("seek");
    let mut buf = vec![0u8; 4 << 20];
    let mut at = offset;
    loop {
        let n = f.read(&mut buf).expect("read");
        if n == 0 {
            return;
        }
        if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
            panic!("{what}: {} has a non-zero byte at {} (never written)", path.display(), at + i as u64);
        }
        at += n as u64;
    }
}

/// `nbdinfo --size URI`.
fn export_size(uri: &str) -> u64 {
    let ran = run(Command::new("nbdinfo").args(["--size", uri]), COMMAND_DEADLINE).ok();
    ran.stdout.trim().parse().unwrap_or_else(|e| panic!("nbdinfo --size printed no number ({e}):\n{}", ran.output()))
}

// ------------------------------------------------------------------------ fio

/// The fio job of the first test: the same options for the write run and the
/// `--verify_only` run after the restart, so fio replays the same offsets and headers.
fn fio_job(uri: &str, size_mib: u64, io_mib: u64, seed: u64) -> Vec<String> {
    [
        "--name=swan-e2e",
        "--ioengine=nbd",
        &format!("--uri={uri}"),
        "--rw=randwrite",
        "--bs=8k",
        "--iodepth=16",
        "--verify=crc32c",
        "--do_verify=1",
        "--verify_fatal=1",
        &format!("--size={size_mib}M"),
        // io_size beyond size: with norandommap fio keeps choosing random blocks (so blocks
        // are overwritten and the log schemes must collect garbage), and it verifies the
        // last version of each block it wrote.
        &format!("--io_size={io_mib}M"),
        "--norandommap",
        // fio 3.33 ignores randseed while randrepeat=1 (the default).
        "--randrepeat=0",
        &format!("--randseed={seed}"),
        "--output-format=json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs fio in `dir` (where it leaves verify state on failure); returns jobs[0] of its JSON.
fn run_fio(dir: &Path, args: &[String], what: &str) -> Value {
    let ran = run(Command::new("fio").args(args).current_dir(dir), FIO_DEADLINE);
    assert!(ran.status.success(), "fio ({what}) failed ({}):\n{}", ran.status, ran.output());
    // The nbd engine prints "fio: connected to NBD server" before the JSON.
    let json = ran.stdout.find("\n{").map_or(ran.stdout.as_str(), |i| &ran.stdout[i + 1..]);
    let v: Value =
        serde_json::from_str(json).unwrap_or_else(|e| panic!("fio ({what}) printed no JSON ({e}):\n{}", ran.output()));
    let job = v["jobs"][0].clone();
    assert_eq!(job["error"].as_u64(), Some(0), "fio ({what}) reports an error:\n{}", ran.output());
    job
}

struct FioCase {
    scheme: &'static str,
    rgroups: usize,
    ssds_per_rgroup: usize,
    /// Written beyond `--size`, as a percentage of the export, so that GC reaches every R-group.
    extra_percent: u64,
    seed: u64,
    /// O_DIRECT members: reads go through the io_uring, writes bypass the page cache.
    direct: bool,
}

fn fio_verify_gc_restart(case: FioCase) {
    require("fio", "fio");
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let mut array = Array::create(case.scheme, case.rgroups, case.ssds_per_rgroup);
    array.direct = case.direct;
    let server = array.serve();
    let export = export_size(&server.uri());
    let size_mib = export * 9 / 10 / MIB;
    let io_mib = size_mib + export * case.extra_percent / 100 / MIB;
    let written = run_fio(array.path(), &fio_job(&server.uri(), size_mib, io_mib, case.seed), "write and verify");
    assert_eq!(written["write"]["io_bytes"].as_u64(), Some(io_mib * MIB), "fio wrote less than --io_size");
    let verified = written["read"]["io_bytes"].as_u64().unwrap_or(0);
    assert!(verified >= size_mib * MIB / 2, "fio verified only {verified} bytes of a {size_mib} MiB region");

    let status = array.status();
    assert_eq!(status["volume_bytes"].as_u64(), Some(export), "status and NBD disagree on the export size");
    assert_eq!(status["user_bytes_written"].as_u64(), Some(io_mib * MIB), "status counts other user writes than fio's");
    if array.log_structured() {
        assert_gc_in_every_group(&array, &status);
    } else {
        assert_eq!(status["victims"].as_u64(), Some(0), "in-place RAID collected victims:\n{status:#}");
        assert_eq!(status["gc_blocks_moved"].as_u64(), Some(0), "in-place RAID moved blocks:\n{status:#}");
    }
    server.stop();
    array.check_clean();

    // Same job, same seed, nothing written: every block must still carry what fio wrote last.
    let server = array.serve_reversed();
    assert_eq!(export_size(&server.uri()), export, "the export changed size across a restart");
    let mut args = fio_job(&server.uri(), size_mib, io_mib, case.seed);
    args.push("--verify_only".into());
    let replayed = run_fio(array.path(), &args, "verify_only after restart");
    assert_eq!(
        replayed["read"]["io_bytes"].as_u64(),
        Some(verified),
        "the verify_only replay checked other blocks than the first run verified"
    );
    let status = array.status();
    assert_eq!(status["user_bytes_written"].as_u64(), Some(0), "verify_only wrote:\n{status:#}");
    server.stop();
    array.check_clean();
}

/// Every R-group GC runs in has collected at least one victim.
fn assert_gc_in_every_group(array: &Array, status: &Value) {
    let victims = status["victims"].as_u64().unwrap_or(0);
    assert!(victims > 0, "{}: no victim collected:\n{status:#}", array.scheme);
    let groups = status["groups"].as_array().unwrap_or_else(|| panic!("no groups in status:\n{status:#}"));
    assert_eq!(groups.len(), array.gc_groups(), "R-groups in status:\n{status:#}");
    // GC reads a victim's live blocks from its own R-group's members.
    let members = status["members"].as_array().unwrap_or_else(|| panic!("no members in status:\n{status:#}"));
    let mut gc_read = vec![0u64; groups.len()];
    for m in members {
        let path = m["path"].as_str().unwrap_or_default();
        let index = array
            .members
            .iter()
            .position(|p| p.as_os_str() == path)
            .unwrap_or_else(|| panic!("status names member {path:?}, not one of {:?}", array.members));
        gc_read[array.group_of(index)] += m["gc_bytes_read"].as_u64().unwrap_or(0);
    }
    for (g, bytes) in gc_read.iter().enumerate() {
        assert!(*bytes > 0, "{}: GC read nothing from R-group {g}'s members:\n{status:#}", array.scheme);
    }
    for (i, g) in groups.iter().enumerate() {
        let Some(jobs) = g.get("gc_jobs").and_then(Value::as_u64) else {
            panic!("{}: status has no groups[{i}].gc_jobs counter:\n{status:#}", array.scheme);
        };
        assert!(jobs >= 1, "{}: R-group {i} collected no victim (gc_jobs {jobs}):\n{status:#}", array.scheme);
    }
}

#[test]
fn fio_swan0_3x2_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan0",
        rgroups: 3,
        ssds_per_rgroup: 2,
        extra_percent: 30,
        seed: 1,
        direct: false,
    });
}

#[test]
fn fio_swan5_2x3_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan5",
        rgroups: 2,
        ssds_per_rgroup: 3,
        extra_percent: 40,
        seed: 2,
        direct: false,
    });
}

/// O_DIRECT members: plain reads go through the io_uring (`swan_server::uring`) and are
/// verified there, GC and parity as above.
#[test]
fn fio_swan5_2x3_direct_gc_in_every_rgroup_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "swan5",
        rgroups: 2,
        ssds_per_rgroup: 3,
        extra_percent: 40,
        seed: 6,
        direct: true,
    });
}

#[test]
fn fio_lograid5_1x4_gc_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "lograid5",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 25,
        seed: 3,
        direct: false,
    });
}

#[test]
fn fio_raid5_1x4_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "raid5",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 0,
        seed: 4,
        direct: false,
    });
}

#[test]
fn fio_raid0_1x4_survives_restart() {
    fio_verify_gc_restart(FioCase {
        scheme: "raid0",
        rgroups: 1,
        ssds_per_rgroup: 4,
        extra_percent: 0,
        seed: 5,
        direct: false,
    });
}

// ------------------------------------------------ one owner per array; spare space

/// A served array belongs to its server: a second `serve`, a `check` or a `create --force`
/// over the same members is refused, naming the member, while the first keeps serving; once
/// it stops they work. `--spare` sets how much of the payload the volume leaves to GC.
#[test]
fn a_served_array_is_claimed_and_spare_sizes_the_volume() {
    require("nbdinfo", "libnbd-bin");
    let array = Array::create("swan0", 2, 2);
    let mut server = array.serve();
    let default_size = export_size(&server.uri());
    let second =
        run(array.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(&array.members), COMMAND_DEADLINE).failed();
    let check = run(array.swan().arg("check").args(&array.members), COMMAND_DEADLINE).failed();
    let recreate = run(
        array
            .swan()
            .args(["create", "--force", "--scheme", "swan0", "--rgroups", "2", "--ssds-per-rgroup", "2"])
            .args(&array.members),
        COMMAND_DEADLINE,
    )
    .failed();
    for (what, ran) in [("a second serve", &second), ("check", &check), ("create --force", &recreate)] {
        assert!(
            ran.stderr.contains("another process is using it") && ran.stderr.contains("m0"),
            "{what} over a served array was not refused with the member named:\n{}",
            ran.output()
        );
    }
    server.assert_alive("other processes were refused its members");
    server.stop();
    array.check_clean();

    // The default keeps 10 % of the payload spare; --spare 30 keeps 30 %.
    let ran = run(
        array
            .swan()
            .args(["create", "--force", "--scheme", "swan0", "--rgroups", "2", "--ssds-per-rgroup", "2"])
            .args(["--spare", "30%"])
            .args(&array.members),
        COMMAND_DEADLINE,
    )
    .ok();
    assert!(ran.stdout.contains("30.0 % of the data capacity kept spare"), "{}", ran.output());
    let server = array.serve();
    let smaller = export_size(&server.uri());
    let ratio = smaller as f64 / default_size as f64;
    assert!(
        (0.76..0.80).contains(&ratio),
        "--spare 30 gave {smaller} bytes against {default_size} with 10 % (ratio {ratio:.3}, expected 0.7/0.9)"
    );
    server.stop();
    let bad = run(
        array
            .swan()
            .args(["create", "--force", "--spare", "95", "--scheme", "swan0", "--rgroups", "2"])
            .args(["--ssds-per-rgroup", "2"])
            .args(&array.members),
        COMMAND_DEADLINE,
    )
    .failed();
    assert!(bad.stderr.contains("below 90"), "--spare 95 was not refused clearly:\n{}", bad.output());
    let raid = run(
        array
            .swan()
            .args(["create", "--force", "--spare", "5", "--scheme", "raid0", "--rgroups", "2"])
            .args(["--ssds-per-rgroup", "2"])
            .args(&array.members),
        COMMAND_DEADLINE,
    )
    .failed();
    assert!(
        raid.stderr.contains("log-structured"),
        "--spare on in-place RAID was not refused clearly:\n{}",
        raid.output()
    );
}

// ------------------------------------------------------- qemu-img, nbdcopy, nbdinfo

#[test]
fn qemu_img_and_nbdcopy_round_trip() {
    require("qemu-img", "qemu-utils");
    require("nbdcopy", "libnbd-bin");
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let array = Array::create("swan0", 3, 2);
    let server = array.serve();
    let uri = server.uri();
    let dir = array.path();

    // What the export advertises.
    let ran = run(Command::new("nbdinfo").args(["--json", &uri]), COMMAND_DEADLINE).ok();
    let info: Value =
        serde_json::from_str(&ran.stdout).unwrap_or_else(|e| panic!("nbdinfo --json: {e}\n{}", ran.output()));
    let e = &info["exports"][0];
    let size = export_size(&uri);
    assert_eq!(e["export-size"].as_u64(), Some(size), "nbdinfo --json vs --size:\n{info:#}");
    assert_eq!(array.status()["volume_bytes"].as_u64(), Some(size), "nbdinfo vs swan status");
    assert!(size > 64 * MIB, "export of {size} bytes is too small for this test");
    for (key, want) in
        [("block_size_minimum", 4096u64), ("block_size_preferred", 4096), ("block_size_maximum", 33_554_432)]
    {
        assert_eq!(e[key].as_u64(), Some(want), "{key}:\n{info:#}");
    }
    for key in ["can_flush", "can_fua", "can_trim", "can_zero", "can_multi_conn"] {
        assert_eq!(e[key].as_bool(), Some(true), "{key}:\n{info:#}");
    }
    assert_eq!(e["is_read_only"].as_bool(), Some(false), "is_read_only:\n{info:#}");

    // qemu-img: a 64 MiB random image into the export, and the same 64 MiB back out.
    let image = random_bytes(0x5157_414e, (64 * MIB) as usize);
    let image_path = dir.join("image.raw");
    std::fs::write(&image_path, &image).expect("write the image");
    run(
        Command::new("qemu-img").args(["convert", "-n", "-f", "raw", "-O", "raw"]).arg(&image_path).arg(&uri),
        COMMAND_DEADLINE,
    )
    .ok();
    let back_path = dir.join("image.back.raw");
    let source = format!(
        "driver=raw,size={},file.driver=nbd,file.server.type=inet,file.server.host=127.0.0.1,file.server.port={}",
        64 * MIB,
        server.port()
    );
    run(
        Command::new("qemu-img").args(["convert", "-O", "raw", "--image-opts", &source]).arg(&back_path),
        COMMAND_DEADLINE,
    )
    .ok();
    let ran = run(
        Command::new("qemu-img").args(["compare", "-f", "raw", "-F", "raw"]).arg(&image_path).arg(&back_path),
        COMMAND_DEADLINE,
    )
    .ok();
    assert!(ran.stdout.contains("identical"), "qemu-img compare:\n{}", ran.output());
    assert_eq!(std::fs::metadata(&back_path).expect("image copied back").len(), 64 * MIB);
    assert_file_region(&back_path, 0, &image, "qemu-img round trip");

    // nbdcopy: a 40 MiB random file in (flushed), the whole export out. The first 40 MiB are
    // the file, the rest of the 64 MiB the qemu image, and everything after it zeros.
    let file = random_bytes(0x6e62_6463, (40 * MIB) as usize);
    let file_path = dir.join("file.bin");
    std::fs::write(&file_path, &file).expect("write the file");
    run(Command::new("nbdcopy").arg("--flush").arg(&file_path).arg(&uri), COMMAND_DEADLINE).ok();
    let out_path = dir.join("export.bin");
    run(Command::new("nbdcopy").arg(&uri).arg(&out_path), COMMAND_DEADLINE).ok();
    assert_eq!(std::fs::metadata(&out_path).expect("export copied out").len(), size, "nbdcopy copied out another size");
    assert_file_region(&out_path, 0, &file, "nbdcopy round trip");
    assert_file_region(&out_path, 40 * MIB, &image[(40 * MIB) as usize..], "the qemu image after nbdcopy");
    assert_file_zero_from(&out_path, 64 * MIB, "the export beyond what was written");
    drop(image);
    let _ = std::fs::remove_file(&out_path);

    server.stop();
    array.check_clean();
}

// ------------------------------------------------------------ hand-rolled NBD

mod nbd {
    pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
    pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
    pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
    pub const REQUEST_MAGIC: u32 = 0x2560_9513;
    pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
    pub const OPT_GO: u32 = 7;
    pub const REP_ACK: u32 = 1;
    pub const REP_INFO: u32 = 3;
    pub const REP_ERR_BIT: u32 = 1 << 31;
    pub const INFO_EXPORT: u16 = 0;
    pub const INFO_BLOCK_SIZE: u16 = 3;
    pub const CMD_READ: u16 = 0;
    pub const CMD_WRITE: u16 = 1;
    pub const CMD_DISC: u16 = 2;
    pub const CMD_FLUSH: u16 = 3;
    pub const CMD_TRIM: u16 = 4;
    pub const CMD_CACHE: u16 = 5;
    pub const CMD_WRITE_ZEROES: u16 = 6;
    pub const CMD_BLOCK_STATUS: u16 = 7;
    pub const FLAG_FUA: u16 = 1 << 0;
    pub const FLAG_NO_HOLE: u16 = 1 << 1;
    pub const FLAG_DF: u16 = 1 << 2;
    pub const EINVAL: u32 = 22;
    pub const ENOSPC: u32 = 28;
    pub const EOVERFLOW: u32 = 75;
    pub const MAX_PAYLOAD: u32 = 32 << 20;
}

/// A TCP connection to the server with short, bounded reads and writes.
fn connect(addr: &str) -> TcpStream {
    let sa: SocketAddr = addr.parse().expect("server address");
    let s =
        TcpStream::connect_timeout(&sa, Duration::from_secs(10)).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    s.set_read_timeout(Some(NBD_IO_TIMEOUT)).expect("read timeout");
    s.set_write_timeout(Some(NBD_IO_TIMEOUT)).expect("write timeout");
    s.set_nodelay(true).expect("nodelay");
    s
}

fn read_u16(s: &mut TcpStream) -> u16 {
    let mut b = [0u8; 2];
    s.read_exact(&mut b).expect("read from the server");
    u16::from_be_bytes(b)
}

fn read_u32(s: &mut TcpStream) -> u32 {
    let mut b = [0u8; 4];
    s.read_exact(&mut b).expect("read from the server");
    u32::from_be_bytes(b)
}

fn read_u64(s: &mut TcpStream) -> u64 {
    let mut b = [0u8; 8];
    s.read_exact(&mut b).expect("read from the server");
    u64::from_be_bytes(b)
}

/// Reads the server's greeting; returns its handshake flags.
fn greeting(s: &mut TcpStream) -> u16 {
    assert_eq!(read_u64(s), nbd::NBDMAGIC, "greeting magic");
    assert_eq!(read_u64(s), nbd::IHAVEOPT, "greeting: not newstyle");
    let flags = read_u16(s);
    assert!(flags & 1 != 0, "server does not offer fixed newstyle (flags {flags:#x})");
    flags
}

/// True if the server closes `s` (EOF or reset) within `limit`; whatever it sends first is
/// read and dropped.
fn closed_by_server(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).expect("read timeout");
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// One request header's fields but the magic and the cookie.
#[derive(Clone, Copy, Debug)]
struct Req {
    flags: u16,
    kind: u16,
    offset: u64,
    len: u32,
}

const fn rq(flags: u16, kind: u16, offset: u64, len: u32) -> Req {
    Req { flags, kind, offset, len }
}

/// A client in the transmission phase, after `NBD_OPT_GO` for the default export.
struct Nbd {
    s: TcpStream,
    size: u64,
    tflags: u16,
    block_sizes: (u32, u32, u32),
    cookie: u64,
}

impl Nbd {
    fn open(addr: &str) -> Nbd {
        let mut s = connect(addr);
        let hflags = greeting(&mut s);
        s.write_all(&u32::from(hflags & 3).to_be_bytes()).expect("send client flags");
        let name = b"";
        let mut opt = Vec::new();
        opt.extend(nbd::IHAVEOPT.to_be_bytes());
        opt.extend(nbd::OPT_GO.to_be_bytes());
        opt.extend((4 + name.len() as u32 + 2).to_be_bytes());
        opt.extend((name.len() as u32).to_be_bytes());
        opt.extend(name);
        opt.extend(0u16.to_be_bytes());
        s.write_all(&opt).expect("send NBD_OPT_GO");
        let (mut size, mut tflags, mut block_sizes) = (None, 0, (0, 0, 0));
        loop {
            assert_eq!(read_u64(&mut s), nbd::OPTION_REPLY_MAGIC, "option reply magic");
            assert_eq!(read_u32(&mut s), nbd::OPT_GO, "option reply to another option");
            let kind = read_u32(&mut s);
            let len = read_u32(&mut s) as usize;
            let mut data = vec![0u8; len];
            s.read_exact(&mut data).expect("option reply data");
            assert!(kind & nbd::REP_ERR_BIT == 0, "NBD_OPT_GO refused: {kind:#x} {:?}", String::from_utf8_lossy(&data));
            if kind == nbd::REP_ACK {
                break;
            }
            if kind == nbd::REP_INFO && len >= 2 {
                match u16::from_be_bytes([data[0], data[1]]) {
                    nbd::INFO_EXPORT if len == 12 => {
                        size = Some(u64::from_be_bytes(data[2..10].try_into().expect("8 bytes")));
                        tflags = u16::from_be_bytes([data[10], data[11]]);
                    }
                    nbd::INFO_BLOCK_SIZE if len == 14 => {
                        let u = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().expect("4 bytes"));
                        block_sizes = (u(2), u(6), u(10));
                    }
                    _ => {}
                }
            }
        }
        let size = size.expect("NBD_OPT_GO succeeded without NBD_INFO_EXPORT");
        Nbd { s, size, tflags, block_sizes, cookie: 0x5a5a_0000_0000_0000 }
    }

    /// Sends one request (and its payload); returns its cookie.
    fn send(&mut self, req: Req, payload: &[u8]) -> u64 {
        self.cookie += 1;
        let mut h = Vec::with_capacity(28);
        h.extend(nbd::REQUEST_MAGIC.to_be_bytes());
        h.extend(req.flags.to_be_bytes());
        h.extend(req.kind.to_be_bytes());
        h.extend(self.cookie.to_be_bytes());
        h.extend(req.offset.to_be_bytes());
        h.extend(req.len.to_be_bytes());
        self.s.write_all(&h).expect("send a request header");
        if !payload.is_empty() {
            self.s.write_all(payload).expect("send a request payload");
        }
        self.cookie
    }

    /// One simple reply's header: (error, cookie).
    fn reply(&mut self) -> (u32, u64) {
        assert_eq!(read_u32(&mut self.s), nbd::SIMPLE_REPLY_MAGIC, "simple reply magic");
        let error = read_u32(&mut self.s);
        (error, read_u64(&mut self.s))
    }

    /// A request and its reply; a successful read's data is returned.
    fn call(&mut self, req: Req, payload: &[u8], read_len: usize) -> Result<Vec<u8>, u32> {
        let cookie = self.send(req, payload);
        let (error, got) = self.reply();
        assert_eq!(got, cookie, "reply to another request");
        if error != 0 {
            return Err(error);
        }
        let mut data = vec![0u8; read_len];
        self.s.read_exact(&mut data).expect("read reply data");
        Ok(data)
    }

    fn read(&mut self, offset: u64, len: usize) -> Vec<u8> {
        self.call(rq(0, nbd::CMD_READ, offset, len as u32), &[], len)
            .unwrap_or_else(|e| panic!("read of {len} bytes at {offset} failed: errno {e}"))
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        if let Err(e) = self.call(rq(0, nbd::CMD_WRITE, offset, data.len() as u32), data, 0) {
            panic!("write of {} bytes at {offset} failed: errno {e}", data.len());
        }
    }

    fn flush(&mut self) {
        if let Err(e) = self.call(rq(0, nbd::CMD_FLUSH, 0, 0), &[], 0) {
            panic!("flush failed: errno {e}");
        }
    }

    /// A request the server must refuse with one of `allowed`, keeping the stream in step.
    fn refused(&mut self, what: &str, req: Req, payload: &[u8], allowed: &[u32]) {
        match self.call(req, payload, 0) {
            Ok(_) => panic!("{what}: the server accepted it"),
            Err(e) => assert!(allowed.contains(&e), "{what}: errno {e}, expected one of {allowed:?}"),
        }
    }

    fn disconnect(mut self) {
        self.send(rq(0, nbd::CMD_DISC, 0, 0), &[]);
        assert!(
            closed_by_server(&mut self.s, Duration::from_secs(10)),
            "server kept the connection after NBD_CMD_DISC"
        );
    }
}

/// What the good client writes in iteration `i`: 64 KiB, to slot `i % GOOD_SLOTS`.
const GOOD_SLOTS: u64 = 64;
const GOOD_LEN: usize = 64 << 10;

fn good_pattern(i: u64) -> Vec<u8> {
    random_bytes(0x600d_0000 + i, GOOD_LEN)
}

/// Writes, reads back and compares until `stop` (and at least `min` iterations); flushes
/// every 8. Returns the iterations done.
fn good_client(addr: String, stop: Arc<AtomicBool>, started: mpsc::Sender<()>, min: u64) -> u64 {
    let mut c = Nbd::open(&addr);
    let mut i = 0u64;
    loop {
        let offset = (i % GOOD_SLOTS) * GOOD_LEN as u64;
        let data = good_pattern(i);
        c.write(offset, &data);
        let back = c.read(offset, GOOD_LEN);
        if let Some(d) = first_difference(&back, &data) {
            panic!("good client: iteration {i} read back other data at byte {d} of offset {offset}");
        }
        if i % 8 == 7 {
            c.flush();
        }
        i += 1;
        if i == 1 {
            let _ = started.send(());
        }
        if i >= min && stop.load(Ordering::Acquire) {
            break;
        }
    }
    c.flush();
    c.disconnect();
    i
}

/// The good client's region after `iterations`: each slot holds its last pattern.
fn assert_good_region(c: &mut Nbd, iterations: u64) {
    for slot in 0..GOOD_SLOTS.min(iterations) {
        let last = (iterations - 1 - slot) / GOOD_SLOTS * GOOD_SLOTS + slot;
        let offset = slot * GOOD_LEN as u64;
        let back = c.read(offset, GOOD_LEN);
        if let Some(d) = first_difference(&back, &good_pattern(last)) {
            panic!("slot {slot} (offset {offset}) does not hold iteration {last}'s data: differs at byte {d}");
        }
    }
}

#[test]
fn hostile_clients_do_not_disturb_a_good_one() {
    use nbd::*;
    require("nbdinfo", "libnbd-bin");
    require("kill", "procps");
    let array = Array::create("swan5", 2, 3);
    let mut server = array.serve();
    let addr = server.addr.clone();

    // Another connection writes and reads back throughout.
    let stop = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = mpsc::channel();
    let good = {
        let (addr, stop) = (addr.clone(), Arc::clone(&stop));
        thread::spawn(move || good_client(addr, stop, started_tx, 16))
    };
    started_rx.recv_timeout(Duration::from_secs(30)).expect("the good client never completed a write and read");

    let mut h = Nbd::open(&addr);
    let size = h.size;
    assert_eq!(h.block_sizes, (4096, 4096, MAX_PAYLOAD), "advertised block sizes");
    assert_eq!(h.tflags & (1 << 1), 0, "export is read-only");
    // Canaries the refused writes aim at: they must be unchanged at the end.
    let canary_at = 32 * MIB;
    let canary = random_bytes(0xca4a, MIB as usize);
    h.write(canary_at, &canary);
    let last_block = random_bytes(0x1a57, 4096);
    h.write(size - 4096, &last_block);

    let block = vec![0xeeu8; 4096];
    let two_blocks = vec![0xeeu8; 8192];
    let oversized = vec![0xeeu8; MAX_PAYLOAD as usize + 4096];
    let big = [EINVAL, EOVERFLOW];
    h.refused("read at the end of the export", rq(0, CMD_READ, size, 4096), &[], &[EINVAL]);
    h.refused("read across the end of the export", rq(0, CMD_READ, size - 4096, 8192), &[], &[EINVAL]);
    h.refused("read far beyond the export", rq(0, CMD_READ, 1 << 50, 4096), &[], &[EINVAL]);
    h.refused("read whose end overflows u64", rq(0, CMD_READ, u64::MAX - 4095, 4096), &[], &[EINVAL]);
    h.refused("write at the end of the export", rq(0, CMD_WRITE, size, 4096), &block, &[ENOSPC]);
    h.refused("write across the end of the export", rq(0, CMD_WRITE, size - 4096, 8192), &two_blocks, &[ENOSPC]);
    h.refused("write-zeroes across the end", rq(0, CMD_WRITE_ZEROES, size - 4096, 8192), &[], &[ENOSPC]);
    h.refused("trim across the end", rq(0, CMD_TRIM, size - 4096, 8192), &[], &[EINVAL]);
    h.refused("read at offset 512", rq(0, CMD_READ, canary_at + 512, 4096), &[], &[EINVAL]);
    h.refused("write at offset 512", rq(0, CMD_WRITE, canary_at + 512, 4096), &block, &[EINVAL]);
    h.refused("read of 512 bytes", rq(0, CMD_READ, canary_at, 512), &[], &[EINVAL]);
    h.refused("write of 4096 + 512 bytes", rq(0, CMD_WRITE, canary_at, 4608), &vec![0xee; 4608], &[EINVAL]);
    h.refused("trim at offset 512", rq(0, CMD_TRIM, canary_at + 512, 4096), &[], &[EINVAL]);
    h.refused("read of zero bytes", rq(0, CMD_READ, canary_at, 0), &[], &[EINVAL]);
    h.refused("read of 32 MiB + 4 KiB", rq(0, CMD_READ, 0, MAX_PAYLOAD + 4096), &[], &big);
    h.refused("write of 32 MiB + 4 KiB", rq(0, CMD_WRITE, canary_at, MAX_PAYLOAD + 4096), &oversized, &big);
    h.refused("write-zeroes of 32 MiB + 4 KiB", rq(0, CMD_WRITE_ZEROES, canary_at, MAX_PAYLOAD + 4096), &[], &big);
    h.refused("unknown command 99", rq(0, 99, canary_at, 4096), &[], &[EINVAL]);
    h.refused("NBD_CMD_CACHE (not advertised)", rq(0, CMD_CACHE, canary_at, 4096), &[], &[EINVAL]);
    h.refused("NBD_CMD_BLOCK_STATUS (no context)", rq(0, CMD_BLOCK_STATUS, canary_at, 4096), &[], &[EINVAL]);
    h.refused("read with unknown flag 0x8000", rq(0x8000, CMD_READ, canary_at, 4096), &[], &[EINVAL]);
    h.refused("write with unknown flag 0x0400", rq(0x0400, CMD_WRITE, canary_at, 4096), &block, &[EINVAL]);
    h.refused(
        "write with NO_HOLE (write-zeroes only)",
        rq(FLAG_NO_HOLE, CMD_WRITE, canary_at, 4096),
        &block,
        &[EINVAL],
    );
    h.refused("read with DF (not advertised)", rq(FLAG_DF, CMD_READ, canary_at, 4096), &[], &[EINVAL]);
    h.refused("flush with an offset", rq(0, CMD_FLUSH, 4096, 0), &[], &[EINVAL]);
    h.refused("flush with a length", rq(0, CMD_FLUSH, 0, 4096), &[], &[EINVAL]);

    // The same, pipelined: every reply comes back, matched by cookie.
    let mut expect = std::collections::HashMap::new();
    for k in 0..64u64 {
        let cookie = match k % 4 {
            0 => h.send(rq(0, CMD_READ, canary_at + 512, 4096), &[]),
            1 => h.send(rq(0, CMD_WRITE, size, 4096), &block),
            2 => h.send(rq(0, 99, 0, 0), &[]),
            _ => h.send(rq(0x8000, CMD_WRITE, canary_at, 4096), &block),
        };
        expect.insert(cookie, if k % 4 == 1 { ENOSPC } else { EINVAL });
    }
    while !expect.is_empty() {
        let (error, cookie) = h.reply();
        let want = expect.remove(&cookie).unwrap_or_else(|| panic!("reply to unknown or repeated cookie {cookie:#x}"));
        assert_eq!(error, want, "pipelined refused request {cookie:#x}");
    }
    server.assert_alive("refused requests");

    // The hostile connection is still in step and its valid requests work.
    let probe = random_bytes(0x9b0b, 8192);
    assert!(h.call(rq(FLAG_FUA, CMD_WRITE, 40 * MIB, 8192), &probe, 0).is_ok(), "FUA write after the refusals");
    assert_eq!(h.read(40 * MIB, 8192), probe, "read after the refusals");
    assert_eq!(h.read(canary_at, MIB as usize), canary, "a refused write changed the canary");
    assert_eq!(h.read(size - 4096, 4096), last_block, "a refused write changed the last block");
    h.disconnect();

    // Broken handshakes.
    {
        let mut s = connect(&addr);
        s.write_all(&[0, 0, 0]).expect("send 3 bytes");
        drop(s);
        let s = connect(&addr);
        drop(s);
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(&[0, 0, 0]).expect("send 3 bytes");
        drop(s);
    }
    server.assert_alive("truncated handshakes");
    {
        // An option claiming 4 GiB of data: the server must hang up, not wait or allocate.
        let mut s = connect(&addr);
        let hflags = greeting(&mut s);
        let mut opt = Vec::new();
        opt.extend(u32::from(hflags & 3).to_be_bytes());
        opt.extend(IHAVEOPT.to_be_bytes());
        opt.extend(OPT_GO.to_be_bytes());
        opt.extend(u32::MAX.to_be_bytes());
        opt.extend([0u8; 64]);
        s.write_all(&opt).expect("send the option");
        assert!(
            closed_by_server(&mut s, Duration::from_secs(10)),
            "an option of length 0xffffffff did not end the connection"
        );
        // Unknown client flags: "the server MUST drop the TCP connection".
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(&0x8000_0003u32.to_be_bytes()).expect("send client flags");
        assert!(closed_by_server(&mut s, Duration::from_secs(10)), "unknown client flags did not end the connection");
    }
    server.assert_alive("hostile options");

    // Broken transmissions.
    {
        // A request header with a bad magic: nothing after it can be trusted.
        let mut c = Nbd::open(&addr);
        c.s.write_all(&[0x13u8; 28]).expect("send garbage");
        assert!(closed_by_server(&mut c.s, Duration::from_secs(10)), "a bad request magic did not end the connection");
        // A write whose payload never comes.
        let mut c = Nbd::open(&addr);
        c.send(rq(0, CMD_WRITE, 48 * MIB, MIB as u32), &[]);
        c.s.write_all(&[0xab; 1000]).expect("send part of a payload");
        drop(c);
        // A write too large even to skip: refused, then the server may hang up.
        let mut c = Nbd::open(&addr);
        let cookie = c.send(rq(0, CMD_WRITE, 0, 0xffff_f000), &[]);
        let (error, got) = c.reply();
        assert_eq!(got, cookie, "reply to the 4 GiB write");
        assert!(big.contains(&error), "4 GiB write: errno {error}");
        assert!(closed_by_server(&mut c.s, Duration::from_secs(10)), "server kept a connection owing it 4 GiB");
        // Clients that vanish in the middle of a 32 MiB reply, or before reading any.
        for _ in 0..3 {
            let mut c = Nbd::open(&addr);
            let cookie = c.send(rq(0, CMD_READ, 0, MAX_PAYLOAD), &[]);
            let (error, got) = c.reply();
            assert_eq!((error, got), (0, cookie), "32 MiB read");
            let mut part = vec![0u8; 100_000];
            c.s.read_exact(&mut part).expect("part of the reply");
            drop(c);
        }
        let mut c = Nbd::open(&addr);
        for _ in 0..8 {
            c.send(rq(0, CMD_READ, 0, MAX_PAYLOAD), &[]);
        }
        drop(c);
    }
    server.assert_alive("broken transmissions");

    stop.store(true, Ordering::Release);
    let iterations = good.join().unwrap_or_else(|_| panic!("the good client failed while the hostile ones ran"));
    server.assert_alive("the good client's end");

    // A fresh client still gets served, and so does a real tool.
    let mut c = Nbd::open(&addr);
    assert_eq!(c.size, size);
    assert_good_region(&mut c, iterations);
    let fresh = random_bytes(0xf4e5, 65536);
    c.write(56 * MIB, &fresh);
    c.flush();
    assert_eq!(c.read(56 * MIB, 65536), fresh);
    c.disconnect();
    assert_eq!(export_size(&server.uri()), size, "nbdinfo after the hostile clients");
    server.stop();
    array.check_clean();

    // And everything acknowledged survived the stop.
    let server = array.serve();
    let mut c = Nbd::open(&server.addr);
    assert_good_region(&mut c, iterations);
    assert_eq!(c.read(canary_at, MIB as usize), canary, "canary after restart");
    assert_eq!(c.read(size - 4096, 4096), last_block, "last block after restart");
    assert_eq!(c.read(40 * MIB, 8192), probe, "FUA write after restart");
    assert_eq!(c.read(56 * MIB, 65536), fresh, "fresh client's write after restart");
    c.disconnect();
    server.stop();
}

// ------------------------------------------------------------- create / serve errors

/// `swan create` over `members` in `dir`.
fn create(
    dir: &Path,
    scheme: &str,
    rgroups: u32,
    ssds: u32,
    member_size: &str,
    members: &[PathBuf],
    extra: &[&str],
) -> Ran {
    run(
        swan_in(dir)
            .args(["create", "--scheme", scheme, "--rgroups", &rgroups.to_string()])
            .args(["--ssds-per-rgroup", &ssds.to_string(), "--member-size", member_size])
            .args(extra)
            .args(members),
        COMMAND_DEADLINE,
    )
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
    let serve_with = |array: &Array, flags: &[&str]| -> Vec<PathBuf> {
        // `Server::start` puts these after `--listen`: flags first, then the members.
        flags.iter().map(PathBuf::from).chain(array.members.iter().cloned()).collect()
    };
    for bad in ["0", "1000000"] {
        let args = serve_with(&a, &["--gc-target", bad]);
        let ran = run(a.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(&args), COMMAND_DEADLINE).failed();
        assert!(
            ran.stderr.contains("--gc-target") && ran.stderr.contains("spare holds"),
            "--gc-target {bad} should be refused naming the bounds:\n{}",
            ran.output()
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
    let server = Server::start(&a, &serve_with(&a, &["--gc-target", &wanted.to_string()]));
    assert_eq!(a.status()["gc_target"].as_u64(), Some(wanted), "swan status does not show --gc-target {wanted}");
    server.stop();

    let l = Array::create("lograid0", 1, 4);
    let args = serve_with(&l, &["--gc-target", "5"]);
    let ran = run(l.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(&args), COMMAND_DEADLINE).failed();
    assert!(ran.stderr.contains("SWAN"), "--gc-target on Log-RAID should say it is SWAN's:\n{}", ran.output());
}

#[test]
fn create_and_serve_refuse_bad_members() {
    let a = Array::create("swan0", 3, 2);
    let dir = a.path();
    let files = |prefix: &str, n: usize| -> Vec<PathBuf> { (0..n).map(|i| dir.join(format!("{prefix}{i}"))).collect() };

    // A member of another array, without --force.
    let mut b = files("b", 4);
    b[0] = a.members[0].clone();
    let ran = create(dir, "lograid5", 1, 4, "128M", &b, &[]).failed();
    assert!(ran.stderr.contains(&a.uuid), "the refusal does not name array {}:\n{}", a.uuid, ran.output());
    assert!(ran.stderr.contains("--force"), "the refusal does not mention --force:\n{}", ran.output());
    a.check_clean();

    // Wrong member counts.
    for n in [5, 7] {
        let members = files(&format!("c{n}-"), n);
        let ran = create(dir, "swan0", 3, 2, "128M", &members, &[]).failed();
        let words: Vec<&str> = ran.stderr.split(|c: char| !c.is_ascii_alphanumeric()).collect();
        assert!(
            words.contains(&"6") && words.contains(&n.to_string().as_str()),
            "the error does not say 6 members are needed and {n} were given:\n{}",
            ran.output()
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
        let ran = create(dir, scheme, rgroups, ssds, "1M", &small, extra).failed();
        let Some(size) = suggested_member_size(&ran.stderr) else {
            panic!("{scheme} {extra:?} with 1 MiB members: the error suggests no --member-size:\n{}", ran.output());
        };
        let fresh = files(&format!("e-{scheme}-{}-", extra.len()), n);
        let ok = create(dir, scheme, rgroups, ssds, &size, &fresh, extra);
        assert!(
            ok.status.success(),
            "{scheme} {extra:?}: the suggested --member-size {size} does not work:\n{}",
            ok.output()
        );
        for f in fresh {
            let _ = std::fs::remove_file(f);
        }
    }

    // Members of two arrays.
    let c = files("f", 6);
    let c_uuid = created_uuid(&create(dir, "swan0", 3, 2, "128M", &c, &[]).ok().stdout);
    let mut mixed = a.members[..3].to_vec();
    mixed.extend_from_slice(&c[3..]);
    for members in [&mixed, &[a.members.clone(), vec![c[0].clone()]].concat()] {
        let ran = run(a.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(members), COMMAND_DEADLINE).failed();
        assert!(
            ran.stderr.contains(&a.uuid) && ran.stderr.contains(&c_uuid),
            "refusing members of two arrays should name both:\n{}",
            ran.output()
        );
    }
    let ran = run(a.swan().arg("check").args(&mixed), COMMAND_DEADLINE).failed();
    assert!(ran.stderr.contains(&c_uuid), "swan check of two arrays' members:\n{}", ran.output());

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
    let ran = run(a.swan().args(["serve", "--listen", "127.0.0.1:0"]).args(&c), COMMAND_DEADLINE).failed();
    assert!(ran.stderr.contains("checksum"), "swan serve over a corrupt superblock:\n{}", ran.output());
    assert!(ran.stderr.contains("f2"), "swan serve does not name the corrupt member:\n{}", ran.output());
    let ran = run(a.swan().arg("check").args(&c), COMMAND_DEADLINE).failed();
    assert!(ran.stderr.contains("checksum") || ran.stdout.contains("checksum"), "swan check:\n{}", ran.output());

    // --force reuses a member of another array.
    let ran = create(dir, "lograid5", 1, 4, "128M", &b, &["--force"]).ok();
    assert_ne!(created_uuid(&ran.stdout), a.uuid);
}
