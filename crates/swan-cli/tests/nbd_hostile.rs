//! Hostile NBD clients against the real `swan serve` on loopback: one regression test per
//! root cause behind the known CVEs of NBD servers (nbd-server, qemu-nbd, nbdkit), named
//! after the root cause and, where its advisory was checked, the CVE id. Each test ends by
//! showing the server alive and still serving a well-behaved client; the same root causes
//! are tested at the protocol level in `crates/swan-nbd/src/cve_tests.rs`.
//!
//! Every wait is bounded; the server is killed when its guard drops, also on a failed test.

mod common;
mod nbd_wire;

use common::{require, Certs, Server};
use nbd_wire::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const CLOSE: Duration = Duration::from_secs(5);

struct Fixture {
    dir: tempfile::TempDir,
    members: Vec<PathBuf>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new().prefix("swan-hostile-").tempdir().expect("temporary directory");
        let members = common::small_array(dir.path());
        Fixture { dir, members }
    }

    fn serve(&self, flags: &[&str]) -> Server {
        Server::start_with(self.dir.path(), &self.members, flags)
    }
}

/// The server is alive, answers a fresh client's write and read, and has not panicked.
fn still_serving(server: &mut Server, after: &str) {
    server.assert_alive(after);
    let mut c = open(server.addr());
    let data = pattern(0x5eed, 65536);
    c.write(1 << 20, &data);
    assert_eq!(c.read(1 << 20, 65536), data, "a fresh client after {after}");
    c.disconnect();
    assert!(!server.log().contains("panicked"), "the server panicked during {after}:\n{}", server.log());
}

fn run_tool(cmd: &mut Command, what: &str) -> std::process::Output {
    common::run(cmd, what, Duration::from_secs(60))
}

/// nbd-server's CVE-2005-3534 and its regression CVE-2011-0530: the request length was
/// checked against the buffer without counting the reply header that shared it. Requests of
/// exactly the maximum payload work both ways, byte for byte; one past it, by a reply header
/// or by a request header, is refused with the stream kept in step.
#[test]
fn cve_2005_3534_cve_2011_0530_request_length_not_off_by_the_header_size() {
    let f = Fixture::new();
    let mut server = f.serve(&[]);
    let mut c = open(server.addr());
    let max = pattern(0x3534, MAX_PAYLOAD as usize);
    c.write(0, &max);
    assert!(c.read(0, MAX_PAYLOAD) == max, "a read of exactly the maximum payload differs from what was written");
    for over in [16u32, 28, 4096] {
        let len = MAX_PAYLOAD + over;
        let e = c.call(CMD_READ, 0, len, &[]).expect_err("an oversized read was served");
        assert!([EINVAL, EOVERFLOW].contains(&e), "read of {len}: errno {e}");
        let payload = vec![0xee; len as usize];
        let e = c.call(CMD_WRITE, 0, len, &payload).expect_err("an oversized write was accepted");
        assert!([EINVAL, EOVERFLOW].contains(&e), "write of {len}: errno {e}");
    }
    assert!(c.read(0, MAX_PAYLOAD) == max, "a refused write changed the data");
    c.disconnect();
    still_serving(&mut server, "maximum-size requests");
}

/// nbd-server's CVE-2022-26495 (a name length of 0xffffffff wrapped an allocation) and
/// CVE-2022-26496 (names longer than a 1024-byte buffer in NBD_OPT_INFO/GO): refused with
/// NBD_REP_ERR_INVALID, or looked up and not found, and the negotiation goes on.
#[test]
fn cve_2022_26495_26496_option_name_length_0xffffffff_and_over_1024() {
    let f = Fixture::new();
    let mut server = f.serve(&[]);
    let mut s = greeted(server.addr());
    for option in [OPT_INFO, OPT_GO] {
        for field in [u32::MAX, u32::MAX - 5, 0x8000_0000, 1025] {
            let kind = opt_single(&mut s, option, &info_data(field, b"swan", &[]));
            assert_eq!(kind, REP_ERR_INVALID, "option {option}, name length field {field:#x}");
        }
        for len in [1025usize, 2048, 4096] {
            let name = vec![b'a'; len];
            let kind = opt_single(&mut s, option, &info_data(len as u32, &name, &[INFO_NAME]));
            assert_eq!(kind, REP_ERR_UNKNOWN, "option {option}, {len}-byte name");
        }
    }
    // Same connection, still in step: the real export by name.
    let export = go(&mut s, "swan").expect("NBD_OPT_GO after the refused names");
    let mut c = Conn::new(s, export);
    assert_eq!(c.read(0, 4096).len(), 4096);
    c.disconnect();
    still_serving(&mut server, "bad name lengths");
}

/// qemu-nbd's CVE-2017-15118: export names up to the spec's 4096 bytes smashed a 256-byte
/// stack buffer (its advisory's reproducer: a client asking for a 3000-byte name). Real
/// clients asking for 3000- and 4096-byte names get "no such export"; 4097 bytes are refused
/// as invalid, and by NBD_OPT_EXPORT_NAME end only that connection.
#[test]
fn cve_2017_15118_4096_byte_export_names() {
    require("nbdinfo", "libnbd-bin");
    require("qemu-img", "qemu-utils");
    let f = Fixture::new();
    let mut server = f.serve(&[]);
    for len in [3000, 4096] {
        let uri = format!("{}/{}", server.uri(), "a".repeat(len));
        let out = run_tool(Command::new("nbdinfo").arg(&uri), "nbdinfo with a long export name");
        assert!(!out.status.success(), "nbdinfo found a {len}-byte export");
        let out = run_tool(Command::new("qemu-img").args(["info", "-f", "raw", &uri]), "qemu-img info, long name");
        assert!(!out.status.success(), "qemu-img opened a {len}-byte export");
        server.assert_alive(&format!("a {len}-byte export name"));
    }
    let mut s = greeted(server.addr());
    let long = vec![b'a'; 4097];
    assert_eq!(opt_single(&mut s, OPT_GO, &info_data(4097, &long, &[])), REP_ERR_INVALID);
    assert_eq!(opt_single(&mut s, OPT_INFO, &info_data(4096, &long[..4096], &[])), REP_ERR_UNKNOWN);
    send_opt(&mut s, OPT_EXPORT_NAME, &long);
    assert!(closed_by_server(&mut s, CLOSE).is_some(), "NBD_OPT_EXPORT_NAME of 4097 bytes kept the connection");
    still_serving(&mut server, "4096-byte names");
}

/// qemu-nbd's CVE-2017-15119: an option announcing up to 4 GB of data was read and thrown
/// away, a long CPU and bandwidth sink. The server hangs up at the header: a client that
/// keeps sending is cut off after a bounded number of bytes.
#[test]
fn cve_2017_15119_4gb_option_payload_ends_the_connection_at_its_header() {
    let f = Fixture::new();
    let mut server = f.serve(&[]);
    for length in [u32::MAX, (64 << 10) + 1] {
        let mut s = greeted(server.addr());
        let mut header = IHAVEOPT.to_be_bytes().to_vec();
        header.extend(OPT_GO.to_be_bytes());
        header.extend(length.to_be_bytes());
        s.write_all(&header).expect("the option header");
        let start = Instant::now();
        let mut sent = 0u64;
        let chunk = vec![0u8; 1 << 16];
        // Keep sending "payload" until the server's close makes a write fail.
        while start.elapsed() < Duration::from_secs(10) {
            match s.write(&chunk) {
                Ok(n) => sent += n as u64,
                Err(_) => break,
            }
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the server went on reading a {length}-byte option");
        assert!(sent < 256 << 20, "the server took {sent} bytes of a {length}-byte option before hanging up");
    }
    still_serving(&mut server, "4 GB options");
}

/// qemu-nbd's CVE-2017-7539 (unexpected data during negotiation hit an assertion) and
/// nbd-server's CVE-2013-7441 (a client closing during negotiation, or naming a missing
/// export, terminated the server): garbage at each step and hang-ups at each step end that
/// connection only.
#[test]
fn cve_2017_7539_cve_2013_7441_unexpected_data_during_the_handshake() {
    let f = Fixture::new();
    let mut server = f.serve(&[]);
    let addr = server.addr().to_string();
    let garbage: [(&str, &[u8]); 5] = [
        ("an HTTP request", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("an SSH banner", b"SSH-2.0-OpenSSH_9.2\r\n"),
        ("a TLS ClientHello without STARTTLS", &[0x16, 3, 1, 0, 0xc8, 1, 0, 0, 0xc4, 3, 3]),
        ("0xff bytes", &[0xff; 64]),
        ("an oldstyle-looking request", &[0x25, 0x60, 0x95, 0x13, 0, 0, 0, 0, 0, 0, 0, 0]),
    ];
    for (what, bytes) in garbage {
        // Instead of the client flags.
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(bytes).expect("send garbage");
        assert!(closed_by_server(&mut s, CLOSE).is_some(), "{what} instead of client flags: not closed");
        // Instead of an option.
        let mut s = greeted(&addr);
        s.write_all(bytes).expect("send garbage");
        assert!(closed_by_server(&mut s, CLOSE).is_some(), "{what} instead of an option: not closed");
        // After a valid option, instead of the next.
        let mut s = greeted(&addr);
        send_opt(&mut s, OPT_LIST, &[]);
        s.write_all(bytes).expect("send garbage");
        let got = closed_by_server(&mut s, CLOSE).unwrap_or_else(|| panic!("{what} after NBD_OPT_LIST: not closed"));
        assert!(got.starts_with(&OPTION_REPLY_MAGIC.to_be_bytes()), "NBD_OPT_LIST was not answered first");
    }
    // Hang-ups at every step.
    drop(connect(&addr));
    let mut s = connect(&addr);
    s.write_all(&[0, 0]).expect("half the flags");
    drop(s);
    let mut s = greeted(&addr);
    s.write_all(&opt_bytes(OPT_GO, &info_data(4, b"swan", &[]))[..20]).expect("half an option");
    drop(s);
    let mut s = greeted(&addr);
    send_opt(&mut s, OPT_GO, &info_data(0, b"", &[]));
    drop(s); // before reading the replies
             // A missing export by NBD_OPT_EXPORT_NAME.
    let mut s = greeted(&addr);
    send_opt(&mut s, OPT_EXPORT_NAME, b"missing");
    assert!(closed_by_server(&mut s, CLOSE).is_some(), "NBD_OPT_EXPORT_NAME of a missing export: not closed");
    still_serving(&mut server, "garbage handshakes");
}

/// qemu-nbd's CVE-2017-10664: it did not ignore SIGPIPE, so a client disconnecting while a
/// reply was being sent killed the server. Clients vanish in the middle of 32 MiB replies,
/// over plain TCP and over TLS (where the write that fails is the TLS thread's).
#[test]
fn cve_2017_10664_client_aborting_mid_reply_does_not_kill_the_server() {
    let f = Fixture::new();
    let certs = Certs::make(f.dir.path(), "certs");
    let flags = certs.flags("on");
    let mut server = f.serve(&flags.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = server.addr().to_string();
    for round in 0..3 {
        let mut c = open(&addr);
        for _ in 0..4 {
            c.send(0, CMD_READ, 0, MAX_PAYLOAD, &[]);
        }
        let mut part = vec![0u8; 100_000 * (round + 1)];
        c.s.read_exact(&mut part).expect("part of the first reply");
        drop(c);
    }
    server.assert_alive("plain clients vanishing mid-reply");
    let config = tls_client_config(&certs.ca);
    for round in 0..3 {
        let mut tls = starttls(greeted(&addr), &config);
        let export = go(&mut tls, "").expect("NBD_OPT_GO over TLS");
        let mut c = Conn::new(tls, export);
        for _ in 0..4 {
            c.send(0, CMD_READ, 0, MAX_PAYLOAD, &[]);
        }
        let mut part = vec![0u8; 100_000 * (round + 1)];
        c.s.read_exact(&mut part).expect("part of the first reply over TLS");
        drop(c);
    }
    // Give the server time to hit the broken pipes.
    std::thread::sleep(Duration::from_millis(500));
    still_serving(&mut server, "clients vanishing mid-reply");
}

/// Open descriptors and threads of process `pid`.
fn fds_and_threads(pid: u32) -> (usize, usize) {
    let count = |d: String| std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{d}: {e}")).count();
    (count(format!("/proc/{pid}/fd")), count(format!("/proc/{pid}/task")))
}

/// qemu's CVE-2024-7409 (a client that never finished negotiating kept its resources, up to
/// stalling the server's shutdown; the fix drops clients that do not negotiate in time) and
/// the general root cause: connections that never finish the handshake, in plaintext or
/// inside a TLS handshake, are closed after the handshake timeout and leave no descriptor or
/// thread behind.
#[test]
fn cve_2024_7409_clients_that_never_finish_the_handshake_are_dropped_leaving_nothing() {
    require("nbdinfo", "libnbd-bin");
    let f = Fixture::new();
    let certs = Certs::make(f.dir.path(), "certs");
    let mut flags = certs.flags("on");
    flags.extend(["--handshake-timeout".to_string(), "1.5".to_string()]);
    let mut server = f.serve(&flags.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = server.addr().to_string();
    let pid = server.pid();
    // Idle after one complete client, so anything started lazily is counted in the baseline.
    still_serving(&mut server, "the first client");
    std::thread::sleep(Duration::from_millis(300));
    let baseline = fds_and_threads(pid);

    let start = Instant::now();
    let mut stalled: Vec<(&str, TcpStream)> = Vec::new();
    for _ in 0..8 {
        stalled.push(("silent", connect(&addr)));
        let mut s = connect(&addr);
        greeting(&mut s);
        s.write_all(&[0, 0]).expect("half the flags");
        stalled.push(("half the client flags", s));
        stalled.push(("no option", greeted(&addr)));
        let mut s = greeted(&addr);
        s.write_all(&opt_bytes(OPT_LIST, &[])[..10]).expect("half an option header");
        stalled.push(("half an option header", s));
        let mut s = greeted(&addr);
        s.write_all(&opt_bytes(OPT_GO, &info_data(4, b"swan", &[]))[..22]).expect("part of an option");
        stalled.push(("part of an option's data", s));
        let mut s = greeted(&addr);
        assert_eq!(opt_single(&mut s, OPT_STARTTLS, &[]), REP_ACK);
        stalled.push(("no ClientHello after STARTTLS", s));
        let mut s = greeted(&addr);
        assert_eq!(opt_single(&mut s, OPT_STARTTLS, &[]), REP_ACK);
        s.write_all(&[0x16, 3, 1, 0, 0xc8, 1, 0]).expect("part of a ClientHello");
        stalled.push(("part of a ClientHello", s));
    }
    let opened = start.elapsed();
    assert!(opened < Duration::from_millis(1200), "opening the stalled clients took {opened:?}");
    let during = fds_and_threads(pid);
    assert!(
        during.0 >= baseline.0 + stalled.len() && during.1 >= baseline.1 + stalled.len(),
        "{} stalled clients: descriptors and threads {during:?}, idle {baseline:?}",
        stalled.len()
    );
    // Each is closed by the server: not before the timeout, within a few seconds after it.
    for (what, s) in &mut stalled {
        let got = closed_by_server(s, Duration::from_secs(10));
        assert!(got.is_some(), "a client sending {what} was not dropped within 10 s");
    }
    let closed = start.elapsed();
    assert!(closed >= Duration::from_millis(1400), "stalled clients dropped after {closed:?}, before the timeout");
    drop(stalled);
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut now = fds_and_threads(pid);
    while now != baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        now = fds_and_threads(pid);
    }
    assert_eq!(now, baseline, "descriptors and threads after the stalled clients were dropped (idle: {baseline:?})");
    still_serving(&mut server, "stalled handshakes");
    let out = run_tool(Command::new("nbdinfo").arg(certs.uri(&addr)), "nbdinfo over TLS");
    assert!(out.status.success(), "{}", common::describe("nbdinfo nbds://", &out));
}

/// nbdkit's CVE-2021-3716: plaintext state (a meddler's injected
/// NBD_OPT_STRUCTURED_REPLY) outlived STARTTLS; and the STARTTLS buffering bugs of other
/// protocols, where plaintext sent after the upgrade request was acted on as if it came
/// through TLS. Injected plaintext options change nothing under TLS (replies stay simple),
/// and plaintext pipelined after STARTTLS is never answered as an option.
#[test]
fn cve_2021_3716_state_is_not_carried_across_starttls() {
    let f = Fixture::new();
    let certs = Certs::make(f.dir.path(), "certs");
    let config = tls_client_config(&certs.ca);
    for mode in ["on", "require"] {
        let flags = certs.flags(mode);
        let mut server = f.serve(&flags.iter().map(String::as_str).collect::<Vec<_>>());
        let addr = server.addr().to_string();
        let refused = if mode == "on" { REP_ERR_UNSUP } else { REP_ERR_TLS_REQD };

        // Injected before STARTTLS: refused, and forgotten.
        let mut s = greeted(&addr);
        assert_eq!(opt_single(&mut s, OPT_STRUCTURED_REPLY, &[]), refused, "--tls {mode}");
        assert_eq!(opt_single(&mut s, OPT_SET_META_CONTEXT, &[0; 8]), refused, "--tls {mode}");
        let mut tls = starttls(s, &config);
        let export = go(&mut tls, "").expect("NBD_OPT_GO under TLS");
        let mut c = Conn::new(tls, export);
        let data = pattern(0x3716, 8192);
        c.write(8192, &data); // reply() fails the test on anything but a simple reply
        assert_eq!(c.read(8192, 8192), data);
        c.disconnect();

        // Pipelined after STARTTLS in the same segment: belongs to the TLS layer, where it
        // is not a valid record, so the session fails; it is never answered in plaintext.
        let mut s = greeted(&addr);
        let mut bytes = opt_bytes(OPT_STARTTLS, &[]);
        bytes.extend(opt_bytes(OPT_GO, &info_data(0, b"", &[])));
        bytes.extend(opt_bytes(OPT_LIST, &[]));
        s.write_all(&bytes).expect("STARTTLS with plaintext behind it");
        let (o, kind, _) = opt_reply(&mut s);
        assert_eq!((o, kind), (OPT_STARTTLS, REP_ACK));
        let after = closed_by_server(&mut s, CLOSE).expect("the server kept a connection whose TLS stream is garbage");
        assert!(
            !after.windows(8).any(|w| w == OPTION_REPLY_MAGIC.to_be_bytes()),
            "plaintext after STARTTLS was answered as an option: {after:02x?}"
        );
        server.assert_alive("STARTTLS injection");
        let mut tls = starttls(greeted(&addr), &config);
        let export = go(&mut tls, "").expect("NBD_OPT_GO under TLS after the injection");
        let mut c = Conn::new(tls, export);
        assert_eq!(c.read(8192, 8192), data, "a fresh TLS client after the injection");
        c.disconnect();
        server.stop();
    }
}

/// Commands before negotiation ends (a root cause of several servers' crashes: a request
/// half-parsed as an option, or served without an export): a request header where an option
/// is due ends the connection without any reply, whether it comes first, after NBD_OPT_INFO
/// (which does not end negotiation), or after an NBD_REP_ERR_TLS_REQD.
#[test]
fn commands_before_negotiation_ends_are_refused() {
    let f = Fixture::new();
    let certs = Certs::make(f.dir.path(), "certs");
    let mut request = REQUEST_MAGIC.to_be_bytes().to_vec();
    request.extend([0, 0, 0, 0]); // flags, NBD_CMD_READ
    request.extend(1u64.to_be_bytes());
    request.extend(0u64.to_be_bytes());
    request.extend(4096u32.to_be_bytes());
    for mode in ["off", "require"] {
        let flags = if mode == "off" { vec![] } else { certs.flags(mode) };
        let mut server = f.serve(&flags.iter().map(String::as_str).collect::<Vec<_>>());
        let addr = server.addr().to_string();

        let mut s = greeted(&addr);
        s.write_all(&request).expect("a request instead of an option");
        let got = closed_by_server(&mut s, CLOSE).expect("a request before any option was not refused");
        assert!(got.is_empty(), "--tls {mode}: the server answered a request before negotiation: {got:02x?}");

        let mut s = greeted(&addr);
        let expect = if mode == "off" { REP_ACK } else { REP_ERR_TLS_REQD };
        send_opt(&mut s, OPT_INFO, &info_data(0, b"", &[]));
        loop {
            let (_, kind, _) = opt_reply(&mut s);
            if kind == expect {
                break;
            }
            assert_eq!(kind, REP_INFO, "--tls {mode}: NBD_OPT_INFO answered {kind:#x}");
        }
        s.write_all(&request).expect("a request after NBD_OPT_INFO");
        let got = closed_by_server(&mut s, CLOSE).expect("a request after NBD_OPT_INFO was not refused");
        assert!(got.is_empty(), "--tls {mode}: a request after NBD_OPT_INFO was answered: {got:02x?}");
        server.assert_alive("requests during negotiation");
        server.stop();
    }
    let mut server = f.serve(&[]);
    still_serving(&mut server, "requests during negotiation");
}
