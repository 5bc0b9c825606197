//! The NBD client against a real server of another make: `nbdkit memory` (Debian package
//! nbdkit; scripts/test.sh installs it). Never skipped: a missing nbdkit fails the test and
//! names the package.
//!
//! - pipelined writes and reads over a unix socket, data compared byte for byte, FLUSH;
//! - the same over TCP, with the export's size and flags as nbdkit states them;
//! - requests nbdkit fails (its error filter) come back as failed completions naming the
//!   request and the errno, and the connection keeps working; requests out of range are
//!   refused before they are sent.

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use swan_nbd::client::{Client, NbdUri, Op};

/// nbdkit, killed and reaped when dropped (also on a failed test).
struct Nbdkit(Child);

impl Drop for Nbdkit {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn nbdkit(args: &[&str]) -> Nbdkit {
    let child = Command::new("nbdkit")
        .args(["--foreground", "--exit-with-parent"])
        .args(args)
        .stdin(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start nbdkit ({e}): this test needs it; install the Debian package nbdkit (scripts/test.sh does)")
        });
    Nbdkit(child)
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("swan-nbd-client-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Connects, retrying while the server is still starting (for at most 30 s).
fn connect(uri: &NbdUri, server: &mut Nbdkit) -> Client {
    let start = Instant::now();
    loop {
        match Client::connect_timeout(uri, Duration::from_secs(10)) {
            Ok(c) => return c,
            Err(e) if start.elapsed() < Duration::from_secs(30) => {
                if let Some(status) = server.0.try_wait().unwrap() {
                    panic!("nbdkit exited ({status}) before accepting a connection: {e}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot connect to nbdkit at {uri}: {e}"),
        }
    }
}

fn pattern(offset: u64, len: usize) -> Vec<u8> {
    (0..len as u64).map(|i| ((offset + i).wrapping_mul(0x9E37_79B9) >> 7) as u8).collect()
}

/// 64 writes of 4–64 KiB in flight at once, a flush, then the same ranges read back in
/// flight at once; every reply matched to its request by cookie.
fn round_trip(client: Client) {
    let size = client.export().size;
    let (mut sub, mut done) = client.split().unwrap();
    let mut sent = HashMap::new();
    for i in 0..64u64 {
        let len = 4096 * (1 + (i * 7) % 16) as usize;
        let offset = (i * 1_048_576 + i * 4096) % (size - 65536);
        let cookie = sub.write(offset, &pattern(offset, len), i % 8 == 0).unwrap();
        sent.insert(cookie, (offset, len));
    }
    assert!(sub.in_flight() > 0);
    for _ in 0..64 {
        let c = done.wait().unwrap();
        c.result.unwrap();
        assert_eq!(c.op, Op::Write);
        assert_eq!(sent.get(&c.cookie).map(|&(o, l)| (o, l as u32)), Some((c.offset, c.len)));
    }
    let f = sub.flush().unwrap();
    let c = done.wait().unwrap();
    assert_eq!((c.cookie, c.op), (f, Op::Flush));
    c.result.unwrap();
    let mut reads = HashMap::new();
    for &(offset, len) in sent.values() {
        reads.insert(sub.read(offset, len as u32).unwrap(), (offset, len));
    }
    for _ in 0..reads.len() {
        let c = done.wait().unwrap();
        c.result.unwrap();
        let (offset, len) = reads.remove(&c.cookie).expect("a reply to a read in flight");
        assert_eq!(c.data, pattern(offset, len), "data read back at {offset}");
    }
    assert_eq!(sub.in_flight(), 0);
    // Out of range and unaligned requests are refused before they reach the server.
    let e = sub.read(size - 4096, 8192).unwrap_err().to_string();
    assert!(e.contains("runs past the end"), "{e}");
    sub.disconnect().unwrap();
}

#[test]
fn pipelined_io_against_nbdkit_memory_over_a_unix_socket() {
    let dir = tmpdir("unix");
    let sock = dir.join("nbdkit.sock");
    let mut server = nbdkit(&["-U", sock.to_str().unwrap(), "memory", "64M"]);
    let uri: NbdUri = format!("nbd+unix:///?socket={}", sock.display()).parse().unwrap();
    let client = connect(&uri, &mut server);
    assert_eq!(client.export().size, 64 << 20);
    assert!(client.export().can_flush());
    round_trip(client);
}

#[test]
fn pipelined_io_against_nbdkit_memory_over_tcp() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut server = nbdkit(&["-i", "127.0.0.1", "-p", &port.to_string(), "memory", "32M"]);
    let uri: NbdUri = format!("nbd://127.0.0.1:{port}/anyname").parse().unwrap();
    let client = connect(&uri, &mut server);
    assert_eq!(client.export().size, 32 << 20);
    assert!(!client.export().read_only());
    round_trip(client);
}

#[test]
fn server_errors_come_back_as_failed_requests() {
    let dir = tmpdir("errors");
    let sock = dir.join("nbdkit.sock");
    let trigger = dir.join("fail-now");
    let mut server = nbdkit(&[
        "-U",
        sock.to_str().unwrap(),
        "--filter=error",
        "memory",
        "8M",
        "error-pwrite=EIO",
        "error-pwrite-rate=100%",
        &format!("error-pwrite-file={}", trigger.display()),
    ]);
    let uri: NbdUri = format!("nbd+unix:///?socket={}", sock.display()).parse().unwrap();
    let (mut sub, mut done) = connect(&uri, &mut server).split().unwrap();
    sub.write(0, &[7u8; 4096], false).unwrap();
    done.wait().unwrap().result.unwrap();
    std::fs::write(&trigger, b"").unwrap();
    sub.write(4096, &[8u8; 4096], false).unwrap();
    let e = done.wait().unwrap().result.unwrap_err().to_string();
    assert_eq!(e, "Write of 4096 bytes at 4096 failed on the server: EIO: input/output error");
    std::fs::remove_file(&trigger).unwrap();
    sub.read(0, 4096).unwrap();
    let c = done.wait().unwrap();
    c.result.unwrap();
    assert_eq!(c.data, vec![7u8; 4096], "the connection still works after a failed request");
    sub.disconnect().unwrap();
    assert!(!Path::new(&trigger).exists());
}
