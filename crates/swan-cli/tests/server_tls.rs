//! TLS and access control of the real `swan serve`, with real clients: nbdinfo, nbdcopy and
//! qemu-img over `nbds://` (STARTTLS with certificates made by openssl at test time), nbdsh
//! (libnbd's Python shell) with strict mode off sending what libnbd would normally refuse,
//! and the read-only export. Loopback only; every command has a deadline, and every tool is
//! required (a missing one fails the test and names its Debian package).

mod common;
mod nbd_wire;

use common::{describe, require, text, Certs, Server};
use nbd_wire::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

struct Fixture {
    dir: tempfile::TempDir,
    members: Vec<PathBuf>,
    certs: Certs,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new().prefix("swan-tls-").tempdir().expect("temporary directory");
        let members = common::small_array(dir.path());
        let certs = Certs::make(dir.path(), "certs");
        Fixture { dir, members, certs }
    }

    fn serve(&self, flags: &[String]) -> Server {
        Server::start_with(self.dir.path(), &self.members, &flags.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn run(cmd: &mut Command, what: &str) -> Output {
    common::run(cmd, what, DEADLINE)
}

fn nbdinfo_json(uri: &str) -> Value {
    require("nbdinfo", "libnbd-bin");
    let out = run(Command::new("nbdinfo").args(["--json", uri]), "nbdinfo --json");
    assert!(out.status.success(), "{}", describe(&format!("nbdinfo --json {uri}"), &out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("nbdinfo --json: {e}: {}", text(&out.stdout)))
}

/// nbdsh runs `python3 -m nbd`: Debian's python3, which has the libnbd module, must come
/// before any other python3 on PATH.
fn nbdsh(script: &str, env: &[(&str, &str)]) -> Output {
    require("nbdsh", "python3-libnbd");
    let path = format!("/usr/bin:/bin:{}", std::env::var("PATH").unwrap_or_default());
    let mut cmd = Command::new("nbdsh");
    cmd.env("PATH", path).args(["-c", script]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd, "nbdsh")
}

/// Requests libnbd refuses client-side in its default strict mode, sent with strict mode off
/// (`h.set_strict_mode(0)`) on one connection, then a write and read-back on the same
/// connection. Prints `{"case": errno name or "ok"}` as JSON.
const STRICT_OFF: &str = r#"
import json, os, nbd
h.set_strict_mode(0)
if os.environ.get("TLS_DIR"):
    h.set_tls(nbd.TLS_REQUIRE)
    h.set_tls_certificates(os.environ["TLS_DIR"])
h.connect_uri(os.environ["URI"])
size = h.get_size()
out = {"size": size, "read_only": h.is_read_only(), "tls": h.get_tls_negotiated()}
def attempt(name, f):
    try:
        f()
        out[name] = "ok"
    except nbd.Error as e:
        out[name] = e.errno or e.string
block = b"\xee" * 4096
cases = [
    ("misaligned read", lambda: h.pread(4096, 512)),
    ("misaligned write", lambda: h.pwrite(block, 512)),
    ("short read", lambda: h.pread(512, 0)),
    ("misaligned trim", lambda: h.trim(4096, 512)),
    ("read past the end", lambda: h.pread(4096, size)),
    ("read across the end", lambda: h.pread(8192, size - 4096)),
    ("write past the end", lambda: h.pwrite(block, size)),
    ("trim past the end", lambda: h.trim(4096, size)),
    ("zero past the end", lambda: h.zero(4096, size)),
    ("zero-length read", lambda: h.pread(0, 0)),
    ("zero-length write", lambda: h.pwrite(b"", 0)),
    ("unknown flag 0x8000 on a read", lambda: h.pread(4096, 0, 0x8000)),
    ("NO_HOLE on a write", lambda: h.pwrite(block, 0, nbd.CMD_FLAG_NO_HOLE)),
    ("DF on a read (not advertised)", lambda: h.pread(4096, 0, nbd.CMD_FLAG_DF)),
    ("read of 48 MiB (over the maximum)", lambda: h.pread(48 << 20, 0)),
    ("cache (not advertised)", lambda: h.cache(4096, 0)),
    ("write", lambda: h.pwrite(block, 4096)),
    ("trim", lambda: h.trim(4096, 8192)),
    ("zero", lambda: h.zero(4096, 12288)),
]
for name, f in cases:
    attempt(name, f)
data = os.urandom(65536)
def round_trip():
    if h.is_read_only():
        h.pread(65536, 1 << 20)
        return
    h.pwrite(data, 1 << 20, nbd.CMD_FLAG_FUA)
    assert h.pread(65536, 1 << 20) == data, "read back other data"
attempt("round trip afterwards", round_trip)
h.shutdown()
print(json.dumps(out))
"#;

fn strict_off(uri: &str, tls_dir: Option<&Path>) -> Value {
    let dir = tls_dir.map(|d| d.to_str().expect("utf-8 path").to_string()).unwrap_or_default();
    let out = nbdsh(STRICT_OFF, &[("URI", uri), ("TLS_DIR", &dir)]);
    assert!(out.status.success(), "{}", describe("nbdsh with strict mode off", &out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("nbdsh printed no JSON ({e}): {}", text(&out.stdout)))
}

/// The errno name each strict-mode-off case must get from a writable export.
const EXPECTED: [(&str, &str); 19] = [
    ("misaligned read", "EINVAL"),
    ("misaligned write", "EINVAL"),
    ("short read", "EINVAL"),
    ("misaligned trim", "EINVAL"),
    ("read past the end", "EINVAL"),
    ("read across the end", "EINVAL"),
    ("write past the end", "ENOSPC"),
    ("trim past the end", "EINVAL"),
    ("zero past the end", "ENOSPC"),
    ("zero-length read", "EINVAL"),
    ("zero-length write", "EINVAL"),
    ("unknown flag 0x8000 on a read", "EINVAL"),
    ("NO_HOLE on a write", "EINVAL"),
    ("DF on a read (not advertised)", "EINVAL"),
    ("read of 48 MiB (over the maximum)", "EINVAL"),
    ("cache (not advertised)", "EINVAL"),
    ("write", "ok"),
    ("trim", "ok"),
    ("zero", "ok"),
];

fn assert_cases(v: &Value, expected: &[(&str, &str)], what: &str) {
    for (case, want) in expected {
        assert_eq!(v[case].as_str(), Some(*want), "{what}: {case}: {v:#}");
    }
    assert_eq!(v["round trip afterwards"].as_str(), Some("ok"), "{what}: the connection was not kept in step: {v:#}");
}

/// The verbose server's log shows `n` refused requests (it logs before it replies; its log
/// reaches the test through a pipe, hence the short wait).
fn assert_refusals_logged(server: &Server, n: usize) {
    let count = || server.log().matches(" refusing Request").count();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while count() < n && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(count(), n, "requests the server refused:\n{}", server.log());
}

/// libnbd with strict mode off (`nbd_set_strict_mode(0)`) sends misaligned, out-of-range,
/// zero-length, oversized and wrongly flagged requests: each gets the errno the spec names,
/// and the same connection goes on serving; over plain TCP and over TLS.
#[test]
fn libnbd_strict_mode_off_gets_errors_and_the_connection_goes_on() {
    let f = Fixture::new();
    // Verbose: the server logs each request it refuses, which shows they reached it rather
    // than being refused by libnbd.
    let mut flags = f.certs.flags("on");
    flags.push("-v".into());
    let mut server = f.serve(&flags);
    let refused = EXPECTED.iter().filter(|(_, e)| *e != "ok").count();
    let v = strict_off(&server.uri(), None);
    assert_eq!(v["tls"], false, "{v:#}");
    assert_cases(&v, &EXPECTED, "plaintext");
    assert_refusals_logged(&server, refused);
    // The certificate directory is set by the script: libnbd does not take it from a URI
    // unless local file access is allowed.
    let v = strict_off(&format!("nbds://{}/", server.addr()), Some(&f.certs.client_dir));
    assert_eq!(v["tls"], true, "{v:#}");
    assert_cases(&v, &EXPECTED, "TLS");
    assert_refusals_logged(&server, 2 * refused);
    server.assert_alive("strict mode off");
    server.stop();
}

/// `--read-only`: NBD_FLAG_READ_ONLY is advertised, writes, trims and write-zeroes get EPERM
/// (sent by libnbd with strict mode off, which would otherwise refuse them itself), reads
/// work, nbdcopy into the export fails, and the data is what it was.
#[test]
fn read_only_export_refuses_writes_with_eperm() {
    require("nbdcopy", "libnbd-bin");
    let f = Fixture::new();
    let data = pattern(0x0f0f, 4 << 20);
    let image = f.path("data.img");
    std::fs::write(&image, &data).expect("write the image");
    let server = f.serve(&[]);
    let out = run(Command::new("nbdcopy").arg("--flush").arg(&image).arg(server.uri()), "nbdcopy in");
    assert!(out.status.success(), "{}", describe("nbdcopy into the writable export", &out));
    server.stop();

    let mut server = f.serve(&["--read-only".to_string()]);
    assert!(server.log().contains("read-only"), "the server does not say it is read-only:\n{}", server.log());
    let e = &nbdinfo_json(&server.uri())["exports"][0];
    assert_eq!(e["is_read_only"], true, "{e:#}");
    let v = strict_off(&server.uri(), None);
    assert_eq!(v["read_only"], true, "{v:#}");
    let expected = [
        ("write", "EPERM"),
        ("trim", "EPERM"),
        ("zero", "EPERM"),
        ("write past the end", "EPERM"),
        ("misaligned read", "EINVAL"),
        ("read past the end", "EINVAL"),
    ];
    assert_cases(&v, &expected, "read-only");
    let mut c = open(server.addr());
    assert_eq!(c.call(CMD_WRITE, 0, 4096, &[0u8; 4096]), Err(EPERM), "raw write");
    assert_eq!(c.call(CMD_TRIM, 0, 4096, &[]), Err(EPERM), "raw trim");
    assert_eq!(c.call(CMD_WRITE_ZEROES, 0, 4096, &[]), Err(EPERM), "raw write-zeroes");
    assert!(c.read(0, 4 << 20) == data, "reads of the read-only export");
    c.disconnect();
    let out = run(Command::new("nbdcopy").arg(&image).arg(server.uri()), "nbdcopy into a read-only export");
    assert!(!out.status.success(), "nbdcopy wrote to a read-only export");
    let back = f.path("back.img");
    let out = run(Command::new("nbdcopy").arg(server.uri()).arg(&back), "nbdcopy out");
    assert!(out.status.success(), "{}", describe("nbdcopy out of the read-only export", &out));
    let got = std::fs::read(&back).expect("read the copy");
    assert!(got[..data.len()] == data[..], "the read-only export does not hold the data written before");
    server.assert_alive("writes to a read-only export");
    server.stop();
}

/// `--tls require`: nbdinfo, nbdcopy and qemu-img work over TLS; plaintext clients get
/// NBD_REP_ERR_TLS_REQD for every option but STARTTLS and ABORT, and NBD_OPT_EXPORT_NAME
/// closes the connection (FORCEDTLS); a client that does not trust the certificate fails
/// and the server serves on.
#[test]
fn tls_require_serves_real_clients_over_tls_only() {
    require("nbdcopy", "libnbd-bin");
    require("qemu-img", "qemu-utils");
    let f = Fixture::new();
    let mut server = f.serve(&f.certs.flags("require"));
    let addr = server.addr().to_string();
    let uri = f.certs.uri(&addr);

    let v = nbdinfo_json(&uri);
    assert_eq!(v["TLS"], true, "nbdinfo did not negotiate TLS: {v:#}");
    assert_eq!(v["exports"][0]["export-size"], 127 << 20, "{v:#}");

    let data = pattern(0x7157, 8 << 20);
    let image = f.path("in.img");
    std::fs::write(&image, &data).expect("write the image");
    let out = run(Command::new("nbdcopy").arg("--flush").arg(&image).arg(&uri), "nbdcopy over TLS");
    assert!(out.status.success(), "{}", describe("nbdcopy into nbds://", &out));
    let back = f.path("out.img");
    let out = run(Command::new("nbdcopy").arg(&uri).arg(&back), "nbdcopy over TLS");
    assert!(out.status.success(), "{}", describe("nbdcopy out of nbds://", &out));
    assert!(std::fs::read(&back).expect("the copy")[..data.len()] == data[..], "nbdcopy over TLS: other data");

    let port = addr.rsplit(':').next().expect("port");
    let creds = format!("tls-creds-x509,id=tls0,endpoint=client,dir={}", f.certs.client_dir.display());
    let opts = format!("driver=nbd,host=127.0.0.1,port={port},tls-creds=tls0");
    let out = run(
        Command::new("qemu-img").args(["info", "--output=json", "--object", &creds, "--image-opts", &opts]),
        "qemu-img info over TLS",
    );
    assert!(out.status.success(), "{}", describe("qemu-img info over TLS", &out));
    let info: Value = serde_json::from_slice(&out.stdout).expect("qemu-img JSON");
    assert_eq!(info["virtual-size"], 127 << 20, "{info:#}");

    // Plaintext tools fail.
    let out = run(Command::new("nbdinfo").arg(server.uri()), "plaintext nbdinfo");
    assert!(!out.status.success(), "plaintext nbdinfo was served by --tls require");
    // A client that does not trust the server's certificate fails the TLS handshake.
    let other = Certs::make(f.dir.path(), "other");
    let out = run(Command::new("nbdinfo").arg(other.uri(&addr)), "nbdinfo trusting another CA");
    assert!(!out.status.success(), "a client trusting another CA accepted the server");

    // The protocol, byte by byte.
    let mut s = greeted(&addr);
    for (option, data) in [
        (OPT_LIST, vec![]),
        (OPT_INFO, info_data(0, b"", &[])),
        (OPT_GO, info_data(4, b"swan", &[])),
        (OPT_STRUCTURED_REPLY, vec![]),
        (0xdead, vec![1, 2, 3]),
    ] {
        assert_eq!(opt_single(&mut s, option, &data), REP_ERR_TLS_REQD, "option {option:#x} before TLS");
    }
    assert_eq!(opt_single(&mut s, OPT_STARTTLS, &[0; 4]), REP_ERR_INVALID, "STARTTLS with data");
    send_opt(&mut s, OPT_EXPORT_NAME, b"swan");
    let got = closed_by_server(&mut s, Duration::from_secs(5)).expect("NBD_OPT_EXPORT_NAME before TLS kept it open");
    assert!(got.is_empty(), "NBD_OPT_EXPORT_NAME before TLS was answered: {got:02x?}");
    let mut s = greeted(&addr);
    assert_eq!(opt_single(&mut s, OPT_ABORT, &[]), 1, "NBD_OPT_ABORT before TLS");
    // Under TLS nothing is refused for TLS, and a second STARTTLS is invalid.
    let config = tls_client_config(&f.certs.ca);
    let mut tls = starttls(greeted(&addr), &config);
    assert_eq!(opt_single(&mut tls, OPT_STARTTLS, &[]), REP_ERR_INVALID, "STARTTLS under TLS");
    assert_eq!(opt_single(&mut tls, OPT_STRUCTURED_REPLY, &[]), REP_ERR_UNSUP);
    let export = go(&mut tls, "swan").expect("NBD_OPT_GO under TLS");
    let mut c = Conn::new(tls, export);
    assert!(c.read(0, 65536) == data[..65536], "a read over TLS");
    c.disconnect();

    server.assert_alive("the TLS clients");
    server.stop();
}

/// `--tls on`: TLS is offered, and plaintext clients are served too. A clean stop is not held
/// up by TLS clients left idle in transmission or in the middle of their TLS handshake.
#[test]
fn tls_on_serves_plaintext_and_tls_clients_and_stops_with_them_open() {
    let f = Fixture::new();
    let server = f.serve(&f.certs.flags("on"));
    let plain = nbdinfo_json(&server.uri());
    assert_eq!(plain["TLS"], false, "{plain:#}");
    let tls = nbdinfo_json(&f.certs.uri(server.addr()));
    assert_eq!(tls["TLS"], true, "{tls:#}");
    assert_eq!(plain["exports"][0]["export-size"], tls["exports"][0]["export-size"]);

    let config = tls_client_config(&f.certs.ca);
    let mut idle = starttls(greeted(server.addr()), &config);
    let export = go(&mut idle, "").expect("NBD_OPT_GO under TLS");
    let mut idle = Conn::new(idle, export);
    idle.read(0, 4096);
    let mut halfway = greeted(server.addr());
    assert_eq!(opt_single(&mut halfway, OPT_STARTTLS, &[]), REP_ACK);
    let start = std::time::Instant::now();
    server.stop();
    assert!(start.elapsed() < Duration::from_secs(15), "stopping with idle TLS clients took {:?}", start.elapsed());
    drop((idle, halfway));
}

/// Bad TLS flags are refused before anything is served, with a message naming the problem;
/// serving plain NBD off loopback warns that TLS is off, and `--tls require` does not warn.
#[test]
fn serve_refuses_bad_tls_flags_and_warns_when_tls_is_off_off_loopback() {
    let f = Fixture::new();
    let other = Certs::make(f.dir.path(), "other");
    let s = |p: &Path| p.to_str().expect("utf-8 path").to_string();
    let members: Vec<String> = f.members.iter().map(|m| s(m)).collect();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--tls".into(), "require".into()], "--tls-cert"),
        (vec!["--tls".into(), "on".into(), "--tls-cert".into(), s(&f.certs.cert)], "go together"),
        (vec!["--tls-cert".into(), s(&f.certs.cert), "--tls-key".into(), s(&f.certs.key)], "--tls is off"),
        (
            vec!["--tls".into(), "require".into(), "--tls-cert".into(), s(&f.path("nope.pem"))]
                .into_iter()
                .chain(["--tls-key".into(), s(&f.certs.key)])
                .collect(),
            "nope.pem",
        ),
        (
            vec!["--tls".into(), "require".into(), "--tls-cert".into(), s(&f.certs.key)]
                .into_iter()
                .chain(["--tls-key".into(), s(&f.certs.key)])
                .collect(),
            "no PEM certificate",
        ),
        (
            vec!["--tls".into(), "require".into(), "--tls-cert".into(), s(&f.certs.cert)]
                .into_iter()
                .chain(["--tls-key".into(), s(&other.key)])
                .collect(),
            "do not go together",
        ),
    ];
    for (flags, expect) in cases {
        let out = run(
            Command::new(common::SWAN)
                .args(["serve", "--listen", "127.0.0.1:0"])
                .args(&flags)
                .args(&members)
                .env("SWAN_RUN_DIR", f.dir.path()),
            "swan serve with bad TLS flags",
        );
        let err = text(&out.stderr);
        assert!(!out.status.success(), "swan serve {flags:?} started:\n{err}");
        assert!(err.contains(expect), "swan serve {flags:?}: no {expect:?} in:\n{err}");
        assert!(!err.contains("serving on"), "swan serve {flags:?} served:\n{err}");
    }

    // Off loopback, the warning comes first; a missing member then stops the server before
    // it binds anything, so no test ever listens beyond loopback.
    let missing = s(&f.path("missing-member"));
    for (tls, warned) in [(vec![], true), (f.certs.flags("on"), true), (f.certs.flags("require"), false)] {
        let out = run(
            Command::new(common::SWAN)
                .args(["serve", "--listen", "0.0.0.0:0"])
                .args(&tls)
                .arg(&missing)
                .env("SWAN_RUN_DIR", f.dir.path()),
            "swan serve off loopback",
        );
        let err = text(&out.stderr);
        assert!(!out.status.success() && !err.contains("serving on"), "served with a missing member:\n{err}");
        assert_eq!(err.contains("warning: TLS is"), warned, "TLS flags {tls:?}:\n{err}");
        if tls.is_empty() {
            assert!(err.contains("TLS is off") && err.contains("0.0.0.0"), "{err}");
        }
    }
}
