//! Who may connect: `swan serve --tls require --tls-verify-peer --tls-client-ca CA.pem`
//! [`--tls-allow-subject CN`], driven by real clients (nbdinfo, nbdcopy, qemu-img) holding
//! certificates made by openssl at test time. A client with a certificate from the right CA
//! (and on the allow-list) is served; one without a certificate, with one from another CA,
//! or with a subject not on the list is refused in the TLS handshake, which the server's log
//! shows: the connection ends in its handshake, never in transmission. Bad options are
//! refused at start, naming the file or option. Loopback only; every tool is required.

mod common;
mod nbd_wire;

use common::{describe, require, text, Certs, Server};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

/// An array, the server's certificate, the CA that signs client certificates, another CA the
/// server does not trust for clients, and an impostor CA with the client CA's name but its own
/// key.
struct Fixture {
    dir: tempfile::TempDir,
    members: Vec<PathBuf>,
    server: Certs,
    clients: Certs,
    other: Certs,
    impostor: Certs,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new().prefix("swan-tls-auth-").tempdir().expect("temporary directory");
        let members = common::small_array(dir.path());
        let server = Certs::make(dir.path(), "server");
        let clients = Certs::make_with_ca(dir.path(), "client-ca", "swan client CA");
        let other = Certs::make_with_ca(dir.path(), "other-ca", "another CA");
        let impostor = Certs::make_with_ca(dir.path(), "impostor-ca", "swan client CA");
        Fixture { dir, members, server, clients, other, impostor }
    }

    /// `swan serve --tls require --tls-verify-peer --tls-client-ca` (the client CA), verbose,
    /// with `extra` flags.
    fn serve(&self, extra: &[&str]) -> Server {
        let mut flags = self.server.flags("require");
        flags.extend(["--tls-verify-peer".into(), "--tls-client-ca".into(), s(&self.clients.ca), "-v".into()]);
        flags.extend(extra.iter().map(|f| f.to_string()));
        Server::start_with(self.dir.path(), &self.members, &flags.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// A client directory holding a certificate for `cn` signed by `signer`.
    fn client(&self, name: &str, cn: &str, signer: &Certs) -> PathBuf {
        signer.client(&self.dir.path().join(name), cn, &self.server)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

fn run(cmd: &mut Command, what: &str) -> Output {
    common::run(cmd, what, DEADLINE)
}

fn uri(addr: &str, client_dir: &Path) -> String {
    format!("nbds://{addr}/?tls-certificates={}", client_dir.display())
}

fn nbdinfo(addr: &str, client_dir: &Path) -> Output {
    require("nbdinfo", "libnbd-bin");
    run(Command::new("nbdinfo").args(["--json", &uri(addr, client_dir)]), "nbdinfo --json")
}

/// qemu-img info over TLS with the certificates in `client_dir` (qemu's x509 credentials
/// read the same file names as libnbd).
fn qemu_img_info(addr: &str, client_dir: &Path) -> Output {
    require("qemu-img", "qemu-utils");
    let (creds, opts) = common::qemu_nbd_tls(addr, client_dir, "");
    run(
        Command::new("qemu-img").args(["info", "--output=json", "--object", &creds, "--image-opts", &opts]),
        "qemu-img info over TLS",
    )
}

/// The connections the server logged as refused in the TLS handshake: their ids, what the
/// line says between the id and the refusal (`from ADDRESS`), and why.
fn refusals(log: &str) -> Vec<(String, String, String)> {
    log.lines()
        .filter_map(|l| l.split("swan nbd: connection ").nth(1))
        .filter_map(|l| l.split_once(": refused in the TLS handshake: "))
        .map(|(head, why)| {
            let (id, from) = head.split_once(' ').unwrap_or((head, ""));
            (id.to_string(), from.to_string(), why.to_string())
        })
        .collect()
}

/// Waits for the server to log its `n`th refusal (its log comes through a pipe) and returns
/// that refusal's reason. The refused connection must have ended in its handshake, with
/// nothing served: the connection code saw the client go before any NBD option arrived.
fn assert_refused(server: &Server, n: usize, client: &Output, what: &str) -> String {
    assert!(!client.status.success(), "{what}: the client was served:\n{}", describe(what, client));
    if what.starts_with("nbdinfo") {
        // libnbd's words for the alert the server sent.
        assert!(text(&client.stderr).contains("TLS fatal alert"), "{what}:\n{}", describe(what, client));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let ended = |log: &str, id: &str| log.lines().any(|l| l.contains(&format!("connection {id} (")));
    loop {
        let log = server.log();
        let r = refusals(&log);
        if r.len() >= n && ended(&log, &r[n - 1].0) {
            assert_eq!(r.len(), n, "{what}: refusals in the server's log:\n{log}");
            let (id, _, why) = &r[n - 1];
            let end = log.lines().find(|l| l.contains(&format!("connection {id} ("))).expect("the end line");
            assert!(
                end.contains("dropped: handshake: client closed the connection"),
                "{what}: connection {id} did not end in its handshake: {end}\n{log}"
            );
            return why.clone();
        }
        assert!(Instant::now() < deadline, "{what}: the server logged no (or no finished) refusal {n}:\n{log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What the server told a rustls client that presents the certificate in `client_dir`
/// whichever CAs the server asks for (GnuTLS would keep back one it knows the server will
/// not accept): the error it met in the TLS handshake or on its first NBD option, which must
/// be a TLS alert.
fn pushy_client(addr: &str, client_dir: &Path) -> String {
    let config = nbd_wire::tls_client_auth_config(client_dir);
    let mut s = nbd_wire::greeted(addr);
    assert_eq!(nbd_wire::opt_single(&mut s, nbd_wire::OPT_STARTTLS, &[]), nbd_wire::REP_ACK, "NBD_OPT_STARTTLS");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("server name");
    let conn = rustls::ClientConnection::new(config, name).expect("TLS client");
    let mut tls = rustls::StreamOwned::new(conn, s);
    let outcome = (|| -> std::io::Result<()> {
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        // TLS 1.3: the client's side of the handshake is over before the server has judged
        // its certificate; the verdict comes with the answer to the first option.
        std::io::Write::write_all(&mut tls, &nbd_wire::opt_bytes(nbd_wire::OPT_LIST, &[]))?;
        let mut reply = [0u8; 20];
        std::io::Read::read_exact(&mut tls, &mut reply)
    })();
    let e = outcome.expect_err("the server answered a client it should have refused");
    let alert = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()).map(|r| format!("{r:?}"));
    alert.unwrap_or_else(|| panic!("the refusal was no TLS alert: {e}"))
}

/// A client's failure, for [`assert_refused`] when the client is the test itself.
fn failed() -> Output {
    Output { status: std::os::unix::process::ExitStatusExt::from_raw(1 << 8), stdout: vec![], stderr: vec![] }
}

/// Client certificates from the client CA are served (nbdinfo, nbdcopy both ways with the
/// data round-tripping, qemu-img); no certificate, or one signed by another CA, is refused in
/// the TLS handshake; the server serves on.
#[test]
fn only_clients_with_a_certificate_from_the_client_ca_are_served() {
    require("nbdcopy", "libnbd-bin");
    let f = Fixture::new();
    let alice = f.client("alice", "alice", &f.clients);
    let stranger = f.client("stranger", "alice", &f.other);
    let impostor = f.client("impostor", "alice", &f.impostor);
    // Trusts the server, presents nothing.
    let anonymous = f.server.client_dir.clone();
    let mut server = f.serve(&[]);
    assert!(server.log().contains("client certificates verified"), "{}", server.log());
    let addr = server.addr().to_string();

    let out = nbdinfo(&addr, &alice);
    assert!(out.status.success(), "{}", describe("nbdinfo with a client certificate", &out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("nbdinfo JSON");
    assert_eq!(v["TLS"], true, "{v:#}");
    assert_eq!(v["exports"][0]["export-size"], 127 << 20, "{v:#}");

    let data = nbd_wire::pattern(0xa11ce, 8 << 20);
    let image = f.path("in.img");
    std::fs::write(&image, &data).expect("write the image");
    let out = run(Command::new("nbdcopy").arg("--flush").arg(&image).arg(uri(&addr, &alice)), "nbdcopy in");
    assert!(out.status.success(), "{}", describe("nbdcopy into the export with a certificate", &out));
    let back = f.path("out.img");
    let out = run(Command::new("nbdcopy").arg(uri(&addr, &alice)).arg(&back), "nbdcopy out");
    assert!(out.status.success(), "{}", describe("nbdcopy out of the export with a certificate", &out));
    assert!(std::fs::read(&back).expect("the copy")[..data.len()] == data[..], "the data did not round-trip");

    let out = qemu_img_info(&addr, &alice);
    assert!(out.status.success(), "{}", describe("qemu-img info with a client certificate", &out));
    let info: Value = serde_json::from_slice(&out.stdout).expect("qemu-img JSON");
    assert_eq!(info["virtual-size"], 127 << 20, "{info:#}");
    assert!(refusals(&server.log()).is_empty(), "a certified client was refused:\n{}", server.log());
    // Verbose, the server names whom it served.
    assert!(server.log().contains(": client certificate \"CN=alice\""), "{}", server.log());

    let out = nbdinfo(&addr, &anonymous);
    let why = assert_refused(&server, 1, &out, "nbdinfo without a client certificate");
    assert!(why.contains("presented no certificate"), "{why}");
    // GnuTLS keeps back a certificate whose issuer is not among the CAs the server names in
    // its request, so this client presents none.
    let out = nbdinfo(&addr, &stranger);
    let why = assert_refused(&server, 2, &out, "nbdinfo with a certificate from another CA");
    assert!(why.contains("presented no certificate"), "{why}");
    let out = nbdinfo(&addr, &impostor);
    let why = assert_refused(&server, 3, &out, "nbdinfo with a certificate from a CA of the same name");
    assert!(why.contains("not signed by the --tls-client-ca CA"), "{why}");
    let out = qemu_img_info(&addr, &anonymous);
    let why = assert_refused(&server, 4, &out, "qemu-img without a client certificate");
    assert!(why.contains("presented no certificate"), "{why}");
    let out = qemu_img_info(&addr, &stranger);
    let why = assert_refused(&server, 5, &out, "qemu-img with a certificate from another CA");
    assert!(why.contains("presented no certificate"), "{why}");
    // A client that presents it all the same is refused for it, with the TLS alert unknown_ca.
    let alert = pushy_client(&addr, &stranger);
    let why = assert_refused(&server, 6, &failed(), "a rustls client pushing a certificate from another CA");
    assert!(why.contains("not signed by the --tls-client-ca CA"), "{why}");
    assert!(alert.contains("UnknownCA"), "the client was told: {alert}");

    // Refusing them cost nothing: the certified client is still served.
    let out = nbdinfo(&addr, &alice);
    assert!(out.status.success(), "{}", describe("nbdinfo with a client certificate, afterwards", &out));
    server.assert_alive("the refused clients");
    server.stop();
}

/// `--tls-allow-subject`: of the certificates the client CA signed, only those whose subject
/// CN is on the list are served; the others are refused in the handshake, naming the subject.
#[test]
fn the_allow_list_refuses_certified_clients_not_on_it() {
    let f = Fixture::new();
    let alice = f.client("alice", "alice", &f.clients);
    let carol = f.client("carol", "carol", &f.clients);
    let mallory = f.client("mallory", "mallory", &f.clients);
    // Two common names, an ambiguous identity: served only because both are listed, which
    // one of them it "is" does not matter; with one not listed, refused.
    let twins = f.client("twins", "alice/CN=carol", &f.clients);
    let mixed = f.client("mixed", "alice/CN=mallory", &f.clients);
    // Another CA's certificate for a listed name is still refused: the chain comes first.
    let fake_alice = f.client("fake-alice", "alice", &f.other);
    let mut server = f.serve(&["--tls-allow-subject", "alice", "--tls-allow-subject", "carol"]);
    let addr = server.addr().to_string();

    for (dir, who) in [(&alice, "alice"), (&carol, "carol"), (&twins, "alice and carol")] {
        let out = nbdinfo(&addr, dir);
        assert!(out.status.success(), "{}", describe(&format!("nbdinfo as {who}, on the list"), &out));
    }
    let out = qemu_img_info(&addr, &carol);
    assert!(out.status.success(), "{}", describe("qemu-img info as carol, on the list", &out));

    let out = nbdinfo(&addr, &mallory);
    let why = assert_refused(&server, 1, &out, "nbdinfo as mallory, not on the list");
    assert!(why.contains("CN=mallory") && why.contains("not on --tls-allow-subject"), "{why}");
    let out = qemu_img_info(&addr, &mallory);
    let why = assert_refused(&server, 2, &out, "qemu-img as mallory, not on the list");
    assert!(why.contains("CN=mallory"), "{why}");
    let alert = pushy_client(&addr, &fake_alice);
    let why = assert_refused(&server, 3, &failed(), "alice certified by another CA");
    assert!(why.contains("not signed by the --tls-client-ca CA"), "{why}");
    assert!(alert.contains("UnknownCA"), "the client was told: {alert}");
    let alert = pushy_client(&addr, &mallory);
    let why = assert_refused(&server, 4, &failed(), "a rustls client as mallory");
    assert!(why.contains("CN=mallory"), "{why}");
    assert!(alert.contains("CertificateUnknown"), "the client was told: {alert}");
    let out = nbdinfo(&addr, &mixed);
    let why = assert_refused(&server, 5, &out, "nbdinfo with two common names, one not listed");
    assert!(why.contains("CN=alice") && why.contains("CN=mallory"), "{why}");
    assert!(why.contains("several common names, an ambiguous identity, not all of them on"), "{why}");
    server.assert_alive("the refused clients");
    server.stop();
}

/// Each refusal in the TLS handshake is logged in words with the client's address: an expired
/// certificate, one not valid yet (both with their dates), one from a CA the server does not
/// trust, and none at all; never rustls' debug structures.
#[test]
fn tls_refusals_are_logged_in_words_with_the_client_address() {
    let f = Fixture::new();
    let (ca, server_certs) = (&f.clients, &f.server);
    let expired = ca.client_dated(&f.path("expired"), "alice", server_certs, "20200101000000Z", "20200102000000Z");
    let early = ca.client_dated(&f.path("early"), "alice", server_certs, "20990101000000Z", "21000101000000Z");
    let stranger = f.client("stranger", "alice", &f.other);
    let mut server = f.serve(&[]);
    let addr = server.addr().to_string();

    let out = nbdinfo(&addr, &expired);
    let why = assert_refused(&server, 1, &out, "nbdinfo with an expired certificate");
    assert!(
        why.starts_with("the client's certificate expired at 2020-01-02T00:00:00Z (the server's clock says 20"),
        "{why}"
    );
    let out = nbdinfo(&addr, &early);
    let why = assert_refused(&server, 2, &out, "nbdinfo with a certificate not valid yet");
    assert!(why.starts_with("the client's certificate is not valid until 2099-01-01T00:00:00Z (the server's"), "{why}");
    let alert = pushy_client(&addr, &stranger);
    let why = assert_refused(&server, 3, &failed(), "a rustls client pushing a certificate from another CA");
    assert_eq!(why, "the client's certificate is not signed by the --tls-client-ca CA (an unknown or untrusted CA)");
    assert!(alert.contains("UnknownCA"), "the client was told: {alert}");
    // GnuTLS keeps that certificate back (its issuer is not among the CAs the server names).
    let out = nbdinfo(&addr, &stranger);
    let why = assert_refused(&server, 4, &out, "nbdinfo with a certificate from another CA");
    assert_eq!(why, "the client presented no certificate");

    let log = server.log();
    for (id, from, why) in refusals(&log) {
        // The port is the client's own, not the server's.
        let port = from.strip_prefix("from 127.0.0.1:").and_then(|p| p.parse::<u16>().ok());
        assert!(port.is_some_and(|p| p != server.port()), "connection {id}: no client address in {from:?}:\n{log}");
        for debug in ["Context", "UnixTime", "{", "InvalidCertificate"] {
            assert!(!why.contains(debug), "connection {id}: a debug structure in {why:?}");
        }
    }
    server.assert_alive("the refused clients");
    server.stop();
}

/// Bad client-authentication options are refused before anything is served, naming the file
/// or the option; `--tls-psk` is refused saying why and what to use instead.
#[test]
fn serve_refuses_bad_client_authentication_options() {
    let f = Fixture::new();
    let junk = f.path("junk.pem");
    std::fs::write(&junk, "this is not PEM\n").expect("junk file");
    let broken = f.path("broken.pem");
    std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\n!!!!not base64!!!!\n-----END CERTIFICATE-----\n")
        .expect("broken PEM");
    let not_a_cert = f.path("not-a-cert.pem");
    std::fs::write(&not_a_cert, "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n")
        .expect("PEM that is no certificate");
    let psk = f.path("keys.psk");
    std::fs::write(&psk, "alice:0123456789abcdef0123456789abcdef\n").expect("PSK file");
    let require = f.server.flags("require");
    let with = |extra: &[&str]| -> Vec<String> {
        require.iter().cloned().chain(extra.iter().map(|e| e.to_string())).collect()
    };
    let (ca, key) = (s(&f.clients.ca), s(&f.server.key));
    let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
        (with(&["--tls-verify-peer"]), vec!["--tls-verify-peer needs --tls-client-ca"]),
        (with(&["--tls-client-ca", &ca]), vec!["with --tls-verify-peer"]),
        (with(&["--tls-allow-subject", "alice"]), vec!["with --tls-verify-peer"]),
        (
            f.server
                .flags("on")
                .into_iter()
                .chain(["--tls-verify-peer".into(), "--tls-client-ca".into(), ca.clone()])
                .collect(),
            vec!["--tls-verify-peer needs --tls require", "without a certificate"],
        ),
        (with(&["--tls-verify-peer", "--tls-client-ca", &s(&f.path("nope.pem"))]), vec!["nope.pem"]),
        (with(&["--tls-verify-peer", "--tls-client-ca", &s(&junk)]), vec!["junk.pem", "no PEM certificate"]),
        (with(&["--tls-verify-peer", "--tls-client-ca", &key]), vec!["server-key.pem", "no PEM certificate"]),
        (with(&["--tls-verify-peer", "--tls-client-ca", &s(&broken)]), vec!["broken.pem"]),
        (with(&["--tls-verify-peer", "--tls-client-ca", &s(&not_a_cert)]), vec!["not-a-cert.pem", "cannot be a CA"]),
        (with(&["--tls-verify-peer", "--tls-client-ca", &ca, "--tls-allow-subject", " "]), vec!["--tls-allow-subject"]),
        (
            with(&["--tls-psk", &s(&psk)]),
            vec!["--tls-psk", "not supported", "rustls", "--tls-verify-peer", "docs/security.md"],
        ),
    ];
    let members: Vec<String> = f.members.iter().map(|m| s(m)).collect();
    for (flags, expect) in cases {
        let out = run(
            Command::new(common::SWAN)
                .args(["serve", "--listen", "127.0.0.1:0"])
                .args(&flags)
                .args(&members)
                .env("SWAN_RUN_DIR", f.dir.path()),
            "swan serve with bad client authentication options",
        );
        let err = text(&out.stderr);
        assert!(!out.status.success(), "swan serve {flags:?} started:\n{err}");
        for e in expect {
            assert!(err.contains(e), "swan serve {flags:?}: no {e:?} in:\n{err}");
        }
        assert!(!err.contains("serving on"), "swan serve {flags:?} served:\n{err}");
    }

    // Off loopback, --tls require without client certificates warns that anyone speaking TLS
    // gets in; with them it does not. A missing member stops the server before it binds.
    let missing = s(&f.path("missing-member"));
    let verified = with(&["--tls-verify-peer", "--tls-client-ca", &ca]);
    for (flags, warned) in [(require.clone(), true), (verified, false)] {
        let out = run(
            Command::new(common::SWAN)
                .args(["serve", "--listen", "0.0.0.0:0"])
                .args(&flags)
                .arg(&missing)
                .env("SWAN_RUN_DIR", f.dir.path()),
            "swan serve off loopback",
        );
        let err = text(&out.stderr);
        assert!(!out.status.success() && !err.contains("serving on"), "served with a missing member:\n{err}");
        assert_eq!(err.contains("clients are not authenticated"), warned, "{flags:?}:\n{err}");
    }
}
