//! Several exports from one `swan serve --config FILE`, each its own array with its own
//! read-only flag and allow-list of client-certificate subjects, driven by real clients
//! (nbdinfo, nbdcopy, qemu-img) holding certificates made by openssl at test time, and by a
//! hand-rolled client where the exact protocol answer matters. A client lists only the
//! exports it may open, is refused one it may not with NBD_REP_ERR_POLICY (which the server
//! logs), and a client whose certificate is not from the client CA is refused in the TLS
//! handshake. Loopback only; every tool is required.

mod common;
mod nbd_wire;

use common::{describe, require, text, Certs, Server};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

fn s(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_string()
}

fn run(cmd: &mut Command, what: &str) -> Output {
    common::run(cmd, what, DEADLINE)
}

/// Three arrays under `dir`: "db" (RAID0) and "scratch" (RAID0), writable, and "img"
/// (SWAN5), read-only; and a config file serving them with `allow` lines per export.
struct Arrays {
    db: Vec<PathBuf>,
    img: Vec<PathBuf>,
    scratch: Vec<PathBuf>,
    config: PathBuf,
}

fn arrays(dir: &Path, allow: [&str; 3]) -> Arrays {
    let sub = |name: &str| {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).expect("array directory");
        d
    };
    let db = common::create_array(&sub("db"), "raid0", 1, 2, "64M", &[]);
    let img = common::create_array(&sub("img"), "swan5", 2, 3, "64M", &[]);
    let scratch = common::create_array(&sub("scratch"), "raid0", 1, 2, "64M", &[]);
    let list = |m: &[PathBuf]| m.iter().map(|p| format!("{:?}", s(p))).collect::<Vec<_>>().join(", ");
    let text = format!(
        "# three exports, each its own array\n\
         [[export]]\nname = \"db\"\nmembers = [{}]\n{}\n\n\
         [[export]]\nname = \"img\"\nmembers = [{}]\nread_only = true\n{}\n\n\
         [[export]]\nname = \"scratch\"\nmembers = [{}]\n{}\n",
        list(&db),
        allow[0],
        list(&img),
        allow[1],
        list(&scratch),
        allow[2]
    );
    let config = dir.join("exports.toml");
    std::fs::write(&config, text).expect("write the config");
    Arrays { db, img, scratch, config }
}

/// The export names `nbdinfo --list --json` shows at `uri`, with their read-only flags.
fn listed(uri: &str) -> Result<Vec<(String, bool)>, Output> {
    require("nbdinfo", "libnbd-bin");
    let out = run(Command::new("nbdinfo").args(["--list", "--json", uri]), "nbdinfo --list");
    if !out.status.success() {
        return Err(out);
    }
    let v: Value = serde_json::from_slice(&out.stdout).expect("nbdinfo JSON");
    let exports = v["exports"].as_array().expect("exports").iter();
    Ok(exports
        .map(|e| {
            let name = e["export-name"].as_str().expect("export-name").to_string();
            (name, e["is_read_only"].as_bool().expect("is_read_only"))
        })
        .collect())
}

/// A plaintext client in transmission on `export`.
fn open(addr: &str, export: &str) -> nbd_wire::Conn<std::net::TcpStream> {
    let mut s = nbd_wire::greeted(addr);
    let go = nbd_wire::go(&mut s, export).unwrap_or_else(|e| panic!("NBD_OPT_GO {export:?}: error {e:#x}"));
    nbd_wire::Conn::new(s, go)
}

/// `swan check` of each array: clean.
fn check_all(a: &Arrays, dir: &Path) {
    for (name, members) in [("db", &a.db), ("img", &a.img), ("scratch", &a.scratch)] {
        common::check_clean(members, dir, &format!("export {name} after the server stopped"));
    }
}

/// Plain NBD: several exports, no default export among them, a read-only one refusing
/// writes with EPERM while the writable ones take them, each export its own array, and
/// `swan status` showing them all.
#[test]
fn several_exports_each_with_its_own_array_and_flags() {
    require("nbdcopy", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-exports-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["", "", ""]);
    let mut server = Server::start_with(dir.path(), &[], &["--config", &s(&a.config), "-v"]);
    let addr = server.addr().to_string();
    assert!(server.log().contains("3 exports: \"db\" raid0"), "{}", server.log());

    let all = listed(&format!("nbd://{addr}")).unwrap_or_else(|o| panic!("{}", describe("nbdinfo --list", &o)));
    assert_eq!(all, [("db".into(), false), ("img".into(), true), ("scratch".into(), false)]);

    // Each export is its own array: what goes into one is not in another.
    let data = nbd_wire::pattern(0xd8, 4 << 20);
    let image = dir.path().join("in.img");
    std::fs::write(&image, &data).expect("write the image");
    common::nbdcopy(&s(&image), &format!("nbd://{addr}/db"));
    let mut db = open(&addr, "db");
    assert!(db.read(0, 1 << 20) == data[..1 << 20], "db does not read back what nbdcopy wrote");
    db.disconnect();
    let mut scratch = open(&addr, "scratch");
    assert!(scratch.read(0, 1 << 20).iter().all(|&b| b == 0), "scratch holds db's data");
    scratch.write(0, &data[..1 << 16]);
    scratch.disconnect();

    // The read-only export says so and refuses writes, trims and write-zeroes with EPERM,
    // as the protocol asks; it still reads.
    let mut img = open(&addr, "img");
    assert_ne!(img.tflags & 2, 0, "NBD_FLAG_READ_ONLY not advertised: {:#x}", img.tflags);
    for kind in [nbd_wire::CMD_WRITE, nbd_wire::CMD_TRIM, nbd_wire::CMD_WRITE_ZEROES] {
        let payload = if kind == nbd_wire::CMD_WRITE { vec![7u8; 4096] } else { vec![] };
        assert_eq!(img.call(kind, 0, 4096, &payload), Err(nbd_wire::EPERM), "command {kind} on the read-only export");
    }
    assert_eq!(img.read(0, 4096).len(), 4096);
    img.disconnect();
    // nbdcopy sees the flag and does not try.
    let out = run(Command::new("nbdcopy").arg(&image).arg(format!("nbd://{addr}/img")), "nbdcopy into img");
    assert!(!out.status.success() && text(&out.stderr).contains("read-only"), "{}", describe("nbdcopy img", &out));

    // Among several exports none is the default: a client must name the one it means.
    let mut anon = nbd_wire::greeted(&addr);
    assert_eq!(nbd_wire::go(&mut anon, ""), Err(nbd_wire::REP_ERR_UNKNOWN));

    // `swan status` of any member shows every export of the server.
    let status = |m: &Path| {
        let out = common::swan(&["status", &s(m)], dir.path());
        assert!(out.status.success(), "{}", describe("swan status", &out));
        text(&out.stdout)
    };
    let shown = status(&a.img[0]);
    for line in [
        "export \"img\" (one of 3 exports of this server): read-only, open to every client served",
        "export \"db\" (one of 3 exports of this server): read-write",
        "export \"scratch\" (one of 3 exports of this server): read-write",
        "(swan5)",
        "(raid0)",
    ] {
        assert!(shown.contains(line), "`swan status` lacks {line:?}:\n{shown}");
    }
    let st = common::status(&a.db[0], dir.path());
    assert_eq!(st["export"]["name"], "db", "{st:#}");
    assert_eq!(st["exports"].as_array().map(Vec::len), Some(3), "{st:#}");
    assert_eq!(common::u64_of(&st, "user_bytes_written"), 4 << 20, "db counts only its own writes: {st:#}");
    let st = common::status(&a.scratch[0], dir.path());
    assert_eq!(common::u64_of(&st, "user_bytes_written"), 1 << 16, "{st:#}");

    server.assert_alive("the clients");
    server.stop();
    check_all(&a, dir.path());
}

/// The certificates of the TLS test: the server's, the client CA and clients it signed
/// (alice, bob), and an impostor CA with the client CA's name but its own key.
struct Clients {
    server: Certs,
    ca: Certs,
    alice: PathBuf,
    bob: PathBuf,
    impostor: PathBuf,
    /// Trusts the server, presents no certificate.
    anonymous: PathBuf,
}

fn clients(dir: &Path) -> Clients {
    let server = Certs::make(dir, "server");
    let ca = Certs::make_with_ca(dir, "client-ca", "swan client CA");
    let impostor_ca = Certs::make_with_ca(dir, "impostor-ca", "swan client CA");
    let alice = ca.client(&dir.join("alice"), "alice", &server);
    let bob = ca.client(&dir.join("bob"), "bob", &server);
    let impostor = impostor_ca.client(&dir.join("impostor"), "alice", &server);
    let anonymous = server.client_dir.clone();
    Clients { server, ca, alice, bob, impostor, anonymous }
}

fn nbds(addr: &str, export: &str, client_dir: &Path) -> String {
    format!("nbds://{addr}/{export}?tls-certificates={}", client_dir.display())
}

/// How many times the server has logged `needle`, waiting up to 10 s for it to reach `n`
/// (its log comes through a pipe).
fn logged(server: &Server, needle: &str, n: usize) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = server.log();
        if log.matches(needle).count() >= n {
            assert_eq!(log.matches(needle).count(), n, "{needle:?} logged too often:\n{log}");
            return log;
        }
        assert!(Instant::now() < deadline, "the server did not log {needle:?} {n} time(s):\n{log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A TLS client presenting the certificate of `client_dir`, after the TLS handshake.
fn tls(addr: &str, client_dir: &Path) -> nbd_wire::TlsStream {
    nbd_wire::starttls(nbd_wire::greeted(addr), &nbd_wire::tls_client_auth_config(client_dir))
}

/// Allow-lists per export under `--tls require --tls-verify-peer`: alice may open db and
/// img, bob only img, both scratch (no list); each lists only what it may open and is
/// refused the rest with NBD_REP_ERR_POLICY; a certificate not from the client CA, or none,
/// is refused in the TLS handshake. nbdinfo, nbdcopy and qemu-img are the clients.
#[test]
fn each_client_lists_and_opens_only_the_exports_allowed_to_it() {
    require("nbdcopy", "libnbd-bin");
    require("qemu-img", "qemu-utils");
    let dir = tempfile::Builder::new().prefix("swan-exports-tls-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["allow = [\"alice\"]", "allow = [\"alice\", \"bob\"]", ""]);
    let c = clients(dir.path());
    let mut flags = c.server.flags("require");
    flags.extend(["--tls-verify-peer".into(), "--tls-client-ca".into(), s(&c.ca.ca), "-v".into()]);
    flags.extend(["--config".into(), s(&a.config)]);
    let mut server = Server::start_with(dir.path(), &[], &flags.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = server.addr().to_string();

    let alice = listed(&nbds(&addr, "", &c.alice)).unwrap_or_else(|o| panic!("{}", describe("alice's list", &o)));
    assert_eq!(alice, [("db".into(), false), ("img".into(), true), ("scratch".into(), false)]);
    let bob = listed(&nbds(&addr, "", &c.bob)).unwrap_or_else(|o| panic!("{}", describe("bob's list", &o)));
    assert_eq!(bob, [("img".into(), true), ("scratch".into(), false)]);

    // alice writes db and reads it back.
    let data = nbd_wire::pattern(0xa11ce, 8 << 20);
    let image = dir.path().join("in.img");
    std::fs::write(&image, &data).expect("write the image");
    common::nbdcopy(&s(&image), &nbds(&addr, "db", &c.alice));
    let back = dir.path().join("back.img");
    common::nbdcopy(&nbds(&addr, "db", &c.alice), &s(&back));
    assert!(std::fs::read(&back).expect("the copy")[..data.len()] == data[..], "db did not round-trip");

    // bob may not open db: NBD_REP_ERR_POLICY, which the server logs, verbose or not.
    let out = run(Command::new("nbdcopy").arg(&image).arg(nbds(&addr, "db", &c.bob)), "bob's nbdcopy into db");
    assert!(!out.status.success(), "{}", describe("bob's nbdcopy into db was served", &out));
    logged(&server, "refused export \"db\" to CN \"bob\": not on its allow-list", 1);
    let mut raw = tls(&addr, &c.bob);
    assert_eq!(nbd_wire::go(&mut raw, "db"), Err(nbd_wire::REP_ERR_POLICY), "bob's NBD_OPT_GO of db");
    logged(&server, "refused export \"db\" to CN \"bob\"", 2);
    // The same connection may go on to an export it may open.
    let go = nbd_wire::go(&mut raw, "scratch").expect("bob's NBD_OPT_GO of scratch");
    let mut scratch = nbd_wire::Conn::new(raw, go);
    assert!(scratch.read(0, 4096).iter().all(|&b| b == 0), "scratch holds db's data");
    scratch.disconnect();

    // img is read-only for alice too: advertised, and a write is refused with EPERM.
    let out = run(Command::new("nbdcopy").arg(&image).arg(nbds(&addr, "img", &c.alice)), "nbdcopy into img");
    assert!(!out.status.success() && text(&out.stderr).contains("read-only"), "{}", describe("nbdcopy img", &out));
    let mut raw = tls(&addr, &c.alice);
    let go = nbd_wire::go(&mut raw, "img").expect("alice's NBD_OPT_GO of img");
    let mut img = nbd_wire::Conn::new(raw, go);
    assert_ne!(img.tflags & 2, 0, "NBD_FLAG_READ_ONLY not advertised");
    assert_eq!(img.call(nbd_wire::CMD_WRITE, 0, 4096, &[1u8; 4096]), Err(nbd_wire::EPERM));
    img.disconnect();

    // qemu-img over nbds://: info of db as alice; convert into scratch as bob; refused db as bob.
    let qemu = |verb: &[&str], client: &Path, export: &str, what: &str| {
        let (creds, opts) = common::qemu_nbd_tls(&addr, client, export);
        let mut cmd = Command::new("qemu-img");
        cmd.args(&verb[..1]).args(["--object", &creds]).args(&verb[1..]);
        match verb[0] {
            "info" => cmd.args(["--output=json", "--image-opts", &opts]),
            _ => cmd.args(["--target-image-opts", &opts]),
        };
        run(&mut cmd, what)
    };
    let out = qemu(&["info"], &c.alice, "db", "qemu-img info db as alice");
    assert!(out.status.success(), "{}", describe("qemu-img info db as alice", &out));
    let info: Value = serde_json::from_slice(&out.stdout).expect("qemu-img JSON");
    assert_eq!(info["virtual-size"], 127 << 20, "{info:#}");
    let small = dir.path().join("small.img");
    std::fs::write(&small, &data[..2 << 20]).expect("write the small image");
    let out = qemu(&["convert", "-n", "-f", "raw", &s(&small)], &c.bob, "scratch", "qemu-img convert as bob");
    assert!(out.status.success(), "{}", describe("qemu-img convert into scratch as bob", &out));
    let mut raw = tls(&addr, &c.bob);
    let go = nbd_wire::go(&mut raw, "scratch").expect("bob's NBD_OPT_GO of scratch");
    let mut scratch = nbd_wire::Conn::new(raw, go);
    assert!(scratch.read(0, 2 << 20) == data[..2 << 20], "scratch does not hold what qemu-img wrote");
    scratch.disconnect();
    let out = qemu(&["info"], &c.bob, "db", "qemu-img info db as bob");
    assert!(!out.status.success(), "{}", describe("qemu-img info db as bob was served", &out));
    logged(&server, "refused export \"db\" to CN \"bob\"", 3);

    // No certificate, or one from a CA of the same name but another key: refused in the TLS
    // handshake, before any export is named or listed.
    for (client, why) in [
        (&c.anonymous, "the client presented no certificate"),
        (&c.impostor, "the client's certificate is not signed by the --tls-client-ca CA"),
    ] {
        let out = listed(&nbds(&addr, "", client)).expect_err("a client without a good certificate was listed to");
        assert!(text(&out.stderr).contains("TLS fatal alert"), "{}", describe("nbdinfo --list", &out));
        logged(&server, &format!("refused in the TLS handshake: {why}"), 1);
    }
    let log = server.log();
    assert!(!log.contains("to CN \"alice\""), "alice was refused an export:\n{log}");

    // The refusals cost nothing: alice is still served.
    assert_eq!(listed(&nbds(&addr, "", &c.alice)).map(|l| l.len()).ok(), Some(3));
    server.assert_alive("the refused clients");
    server.stop();
    check_all(&a, dir.path());
}

/// What `swan serve --config` refuses at start, naming the file and line or the option.
#[test]
fn serve_refuses_bad_configs_at_start() {
    let dir = tempfile::Builder::new().prefix("swan-exports-bad-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["allow = [\"alice\"]", "", ""]);
    let config = s(&a.config);
    let refused = |args: &[&str], what: &str| {
        let out = common::swan(&[&["serve", "--listen", "127.0.0.1:0"], args].concat(), dir.path());
        assert!(!out.status.success(), "{}", describe(what, &out));
        text(&out.stderr)
    };
    // db's allow-list (line 4) without client certificates.
    let e = refused(&["--config", &config], "an allow-list without --tls-verify-peer");
    assert!(
        e.contains(&format!("{config}:3: export \"db\" has an allow-list")) && e.contains("--tls-verify-peer"),
        "{e}"
    );
    let e = refused(&["--config", &config, "--record-trace", "t.blk"], "--config with --record-trace");
    assert!(e.contains("not with --record-trace"), "{e}");
    let e = refused(&["--config", &config, "--read-only"], "--config with --read-only");
    assert!(e.contains("not with --read-only"), "{e}");
    let e = refused(&["--config", &config, &s(&a.db[0])], "--config with member paths");
    assert!(e.contains("cannot be used with"), "{e}");

    let bad = dir.path().join("bad.toml");
    let bad_s = s(&bad);
    let write = |t: &str| std::fs::write(&bad, t).expect("write the bad config");
    write("[[export]]\nname = \"x\"\nmembers = [\"m0\"]\nreadonly = true\n");
    let e = refused(&["--config", &bad_s], "a misspelt key");
    assert!(e.contains(&format!("{bad_s}:4: unknown field `readonly`")), "{e}");
    let members = a.scratch.iter().map(|m| format!("{:?}", s(m))).collect::<Vec<_>>().join(", ");
    write(&format!(
        "[[export]]\nname = \"x\"\nmembers = [{members}]\n\n[[export]]\nname = \"y\"\nmembers = [\"nope\"]\n"
    ));
    let e = refused(&["--config", &bad_s], "a member that is not there");
    assert!(e.contains(&format!("{bad_s}:6: export \"y\"")) && e.contains("nope"), "{e}");
    // x was opened and recovered before y failed: it was stopped cleanly, so it is clean.
    common::check_clean(&a.scratch, dir.path(), "the export started before the bad one failed");
}

/// The transmission flags `nbdinfo --json` reports for export `export` at `uri`: read-only,
/// flush, FUA, trim, write-zeroes.
fn flags(uri: &str) -> [bool; 5] {
    require("nbdinfo", "libnbd-bin");
    let out = run(Command::new("nbdinfo").args(["--json", uri]), "nbdinfo --json");
    assert!(out.status.success(), "{}", describe("nbdinfo --json", &out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("nbdinfo JSON");
    let e = &v["exports"][0];
    ["is_read_only", "can_flush", "can_fua", "can_trim", "can_zero"]
        .map(|k| e[k].as_bool().unwrap_or_else(|| panic!("nbdinfo --json has no {k}: {v:#}")))
}

/// A read-only export, by `read_only = true` in a config or by `--read-only`, advertises
/// NBD_FLAG_READ_ONLY and neither TRIM, WRITE_ZEROES nor FUA (each would change or force out
/// data it never takes); FLUSH stays, a harmless no-op. A writable export advertises them all.
#[test]
fn read_only_exports_advertise_neither_trim_write_zeroes_nor_fua() {
    const READ_ONLY: [bool; 5] = [true, true, false, false, false];
    const WRITABLE: [bool; 5] = [false, true, true, true, true];
    let dir = tempfile::Builder::new().prefix("swan-exports-ro-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["", "", ""]);
    let mut server = Server::start_with(dir.path(), &[], &["--config", &s(&a.config)]);
    let addr = server.addr().to_string();
    assert_eq!(
        flags(&format!("nbd://{addr}/img")),
        READ_ONLY,
        "img (read_only = true): read-only, flush, fua, trim, zero"
    );
    assert_eq!(flags(&format!("nbd://{addr}/db")), WRITABLE, "db (writable): read-only, flush, fua, trim, zero");
    server.assert_alive("nbdinfo");
    server.stop();

    let single = dir.path().join("single");
    std::fs::create_dir_all(&single).expect("array directory");
    let members = common::small_array(&single);
    let mut server = Server::start_with(dir.path(), &members, &["--read-only"]);
    assert_eq!(flags(&server.uri()), READ_ONLY, "--read-only: read-only, flush, fua, trim, zero");
    server.assert_alive("nbdinfo");
    server.stop();
}

/// `allow = []` would name no one; read as "no list" it opened the export to every client the
/// TLS settings admit. It is refused at start, naming the file, the line, the export and the
/// two ways to say what was meant.
#[test]
fn an_empty_allow_list_is_refused_at_start() {
    let dir = tempfile::Builder::new().prefix("swan-exports-empty-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["", "", "allow = []"]);
    let c = clients(dir.path());
    let mut flags = c.server.flags("require");
    flags.extend(["--tls-verify-peer".into(), "--tls-client-ca".into(), s(&c.ca.ca)]);
    flags.extend(["--config".into(), s(&a.config)]);
    // Bounded: a server that starts anyway is killed, and the test fails.
    let out = common::run(
        common::swan_in(dir.path()).args(["serve", "--listen", "127.0.0.1:0"]).args(&flags),
        "swan serve with allow = []",
        Duration::from_secs(20),
    );
    let e = text(&out.stderr);
    assert!(!out.status.success() && !e.contains("serving on"), "served with allow = []:\n{e}");
    // scratch's `allow = []` is line 16 of the file `arrays` writes.
    let at = format!("{}:16: export \"scratch\" has `allow = []`", s(&a.config));
    assert!(e.contains(&at), "no {at:?} in:\n{e}");
    assert!(e.contains("omit `allow`") && e.contains("name the client-certificate common names"), "{e}");
}

/// A certificate whose subject has several CNs is an ambiguous identity: it opens an export
/// with an allow-list only if every one of its CNs is on that list, and a refusal says why,
/// with the client's address. nbdinfo holds the certificates (made by openssl).
#[test]
fn a_certificate_with_several_cns_opens_only_exports_listing_them_all() {
    require("nbdinfo", "libnbd-bin");
    let dir = tempfile::Builder::new().prefix("swan-exports-cns-").tempdir().expect("temporary directory");
    let a = arrays(dir.path(), ["allow = [\"alice\"]", "allow = [\"alice\", \"carol\"]", ""]);
    let c = clients(dir.path());
    let twins = c.ca.client(&dir.path().join("twins"), "alice/CN=carol", &c.server);
    let mixed = c.ca.client(&dir.path().join("mixed"), "alice/CN=mallory", &c.server);
    let mut flags = c.server.flags("require");
    flags.extend(["--tls-verify-peer".into(), "--tls-client-ca".into(), s(&c.ca.ca)]);
    flags.extend(["--config".into(), s(&a.config)]);
    let mut server = Server::start_with(dir.path(), &[], &flags.iter().map(String::as_str).collect::<Vec<_>>());
    let addr = server.addr().to_string();

    let list = |who: &Path| listed(&nbds(&addr, "", who)).unwrap_or_else(|o| panic!("{}", describe("a list", &o)));
    assert_eq!(list(&c.alice), [("db".into(), false), ("img".into(), true), ("scratch".into(), false)]);
    assert_eq!(list(&twins), [("img".into(), true), ("scratch".into(), false)], "alice and carol");
    assert_eq!(list(&mixed), [("scratch".into(), false)], "alice and mallory");

    let info = |export: &str, who: &Path| run(Command::new("nbdinfo").arg(nbds(&addr, export, who)), "nbdinfo");
    let out = info("img", &twins);
    assert!(out.status.success(), "{}", describe("nbdinfo img as alice and carol", &out));
    for (export, who, cns) in [("db", &twins, "\"alice\", \"carol\""), ("img", &mixed, "\"alice\", \"mallory\"")] {
        let out = info(export, who);
        assert!(!out.status.success(), "{}", describe(&format!("nbdinfo {export} as CNs {cns} was served"), &out));
        let line = format!(
            "refused export \"{export}\" to CNs {cns}: an ambiguous identity (several CNs), not all of them on its \
             allow-list"
        );
        // nbdinfo asks with NBD_OPT_INFO and then NBD_OPT_GO: each refusal is logged.
        let log = logged(&server, &line, 2);
        let from = log.lines().find(|l| l.contains(&line)).and_then(|l| l.split(" from 127.0.0.1:").nth(1));
        assert!(from.is_some_and(|f| f.contains(": refused export")), "no client address in the refusal:\n{log}");
    }
    server.assert_alive("the refused clients");
    server.stop();
}
