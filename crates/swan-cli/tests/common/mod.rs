//! What the server's crash and filesystem tests share: finding tools (loudly), running
//! processes under deadlines, a guarded `swan serve` on an ephemeral port, `swan` commands
//! and a deterministic PRNG. Each test binary uses a different part of it.
#![allow(dead_code)]

pub mod fio_verify;
pub mod pausable;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SWAN: &str = env!("CARGO_BIN_EXE_swan");

// ---------------------------------------------------------------------------------------------
// tools, processes, deadlines

/// The full path of `tool`, or a loud failure naming the Debian package that provides it.
pub fn require(tool: &str, package: &str) -> PathBuf {
    find(tool).unwrap_or_else(|| panic!("`{tool}` not found: this test needs it; install the Debian package {package}"))
}

pub fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::env::split_paths(&path).chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from));
    dirs.map(|d| d.join(tool)).find(|p| p.is_file())
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}\nstatus: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    )
}

pub fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Runs `cmd` to completion; kills it and fails if it is still running after `deadline`.
pub fn run(cmd: &mut Command, what: &str, deadline: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let stdout = drain(child.stdout.take().expect("stdout"));
    let stderr = drain(child.stderr.take().expect("stderr"));
    let status = wait_deadline(&mut child, deadline).unwrap_or_else(|| {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{what}: still running after {deadline:?}: killed");
    });
    Output { status, stdout: stdout.join().expect("stdout reader"), stderr: stderr.join().expect("stderr reader") }
}

/// Runs `cmd`, which must succeed; returns its stdout.
pub fn ok(cmd: &mut Command, what: &str, deadline: Duration) -> String {
    let out = run(cmd, what, deadline);
    assert!(out.status.success(), "{}", describe(what, &out));
    text(&out.stdout)
}

/// Waits for `child` to exit, for at most `deadline`.
pub fn wait_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for a child") {
            return Some(status);
        }
        if start.elapsed() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A child process killed (SIGKILL) and reaped when dropped, whatever happened.
pub struct Guard {
    pub child: Option<Child>,
}

impl Guard {
    pub fn new(child: Child) -> Self {
        Self { child: Some(child) }
    }

    pub fn child(&mut self) -> &mut Child {
        self.child.as_mut().expect("a live child")
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the server

/// A running `swan serve` on 127.0.0.1 (an ephemeral port: its stderr says which).
pub struct Server {
    proc: Guard,
    addr: String,
    log: Arc<Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub fn start(run_dir: &Path, members: &[PathBuf]) -> Server {
        Server::start_with(run_dir, members, &[])
    }

    /// `swan serve` with more flags (`--tls ...`, `--read-only`, ...).
    pub fn start_with(run_dir: &Path, members: &[PathBuf], flags: &[&str]) -> Server {
        let mut cmd = Command::new(SWAN);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(flags)
            .args(members)
            .env("SWAN_RUN_DIR", run_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut proc = Guard::new(cmd.spawn().expect("start swan serve"));
        let stderr = proc.child().stderr.take().expect("server stderr");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel();
        let sink = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // Logged before the address is handed over: a test that reads the log as soon
                // as the server is up must find the "serving on" line in it.
                {
                    let mut l = sink.lock().expect("server log");
                    l.push_str(&line);
                    l.push('\n');
                }
                if let Some(rest) = line.split("serving on ").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_string());
                }
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a,
            Err(e) => {
                let status = proc.child().try_wait().ok().flatten();
                panic!("swan serve did not start serving ({e}; exit {status:?}):\n{}", log.lock().expect("log"));
            }
        };
        Server { proc, addr, log, reader: Some(reader) }
    }

    pub fn uri(&self) -> String {
        format!("nbd://{}", self.addr)
    }

    /// `IP:PORT`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// `IP:PORT` of `/metrics`, for a server started with `--metrics` (its stderr says it
    /// before the "serving on" line).
    pub fn metrics_addr(&self) -> String {
        let log = self.log();
        log.split("metrics on http://")
            .nth(1)
            .and_then(|rest| rest.split("/metrics").next())
            .unwrap_or_else(|| panic!("no 'metrics on http://' in the server's log:\n{log}"))
            .to_string()
    }

    pub fn pid(&mut self) -> u32 {
        self.proc.child().id()
    }

    /// Fails the test if the server has exited.
    pub fn assert_alive(&mut self, after: &str) {
        if let Some(status) = self.proc.child().try_wait().expect("wait for swan serve") {
            std::thread::sleep(Duration::from_millis(100));
            panic!("swan serve exited ({status}) after {after}:\n{}", self.log());
        }
    }

    pub fn log(&self) -> String {
        self.log.lock().expect("server log").clone()
    }

    /// Journal records the server said it rolled forward at startup.
    pub fn replayed(&self) -> u64 {
        let log = self.log();
        log.split(" journal record(s) rolled forward")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no 'journal record(s) rolled forward' in the server's log:\n{log}"))
    }

    /// SIGKILL: the process dies wherever it is.
    pub fn kill9(mut self) {
        let child = self.proc.child();
        child.kill().expect("kill -9 the server");
        let status = wait_deadline(child, Duration::from_secs(30)).expect("the killed server is reaped");
        assert!(status.code().is_none(), "the server exited by itself ({status}) before the kill:\n{}", self.log());
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }

    /// SIGTERM, then the clean stop must finish (checkpoint written) and exit 0. Returns the
    /// server's whole log.
    pub fn stop(mut self) -> String {
        let pid = self.proc.child().id().to_string();
        let out = run(Command::new("kill").args(["-TERM", &pid]), "kill -TERM the server", Duration::from_secs(10));
        assert!(out.status.success(), "{}", describe("kill -TERM", &out));
        let status = wait_deadline(self.proc.child(), Duration::from_secs(120))
            .unwrap_or_else(|| panic!("swan serve still running 120 s after SIGTERM:\n{}", self.log()));
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        let log = self.log();
        assert!(status.success(), "swan serve exited {status} after SIGTERM:\n{log}");
        assert!(log.contains("stopped cleanly"), "no clean stop in the server's log:\n{log}");
        log
    }
}

pub fn swan(args: &[&str], run_dir: &Path) -> Output {
    run(
        Command::new(SWAN).args(args).env("SWAN_RUN_DIR", run_dir),
        &format!("swan {}", args.join(" ")),
        Duration::from_secs(120),
    )
}

pub fn status(member: &Path, run_dir: &Path) -> Value {
    let m = member.to_str().expect("utf-8 path");
    let out = swan(&["status", "--json", m], run_dir);
    assert!(out.status.success(), "{}", describe("swan status --json", &out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("swan status --json: {e}: {}", text(&out.stdout)))
}

pub fn u64_of(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("`{key}` missing from {v}"))
}

pub fn check_clean(members: &[PathBuf], run_dir: &Path, when: &str) {
    let mut args = vec!["check"];
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, run_dir);
    assert!(
        out.status.success() && text(&out.stdout).contains("clean"),
        "{when}: swan check does not find the array clean\n{}",
        describe("swan check", &out)
    );
}

// ---------------------------------------------------------------------------------------------
// TLS certificates

/// A throw-away CA and a server certificate it signed (for 127.0.0.1 and localhost), made
/// with the openssl CLI in `dir` at test time: no key is ever committed. `client_dir` is laid
/// out as libnbd's `tls-certificates` directory wants it (`ca-cert.pem`).
pub struct Certs {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    pub client_dir: PathBuf,
}

impl Certs {
    pub fn make(dir: &Path, name: &str) -> Certs {
        Certs::make_with_ca(dir, name, "swan test CA")
    }

    /// As [`Certs::make`], with a CA whose subject is `CN=ca_name`.
    pub fn make_with_ca(dir: &Path, name: &str, ca_name: &str) -> Certs {
        require("openssl", "openssl");
        let d = dir.join(name);
        let client_dir = d.join("client");
        std::fs::create_dir_all(&client_dir).expect("certificate directory");
        let p = |f: &str| d.join(f).to_str().expect("utf-8 path").to_string();
        let openssl = |args: &[&str], what: &str| {
            ok(Command::new("openssl").args(args), what, Duration::from_secs(60));
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        openssl(
            &[&["req", "-x509"], &ec[..], &["-keyout", &p("ca-key.pem"), "-out", &p("ca-cert.pem")]]
                .concat()
                .iter()
                .chain(&[
                    "-days",
                    "2",
                    "-subj",
                    &format!("/CN={ca_name}"),
                    "-addext",
                    "basicConstraints=critical,CA:TRUE",
                ])
                .chain(&["-addext", "keyUsage=critical,keyCertSign,cRLSign"])
                .copied()
                .collect::<Vec<_>>(),
            "openssl: the test CA",
        );
        openssl(
            &[
                &["req"],
                &ec[..],
                &["-keyout", &p("server-key.pem"), "-out", &p("server.csr"), "-subj", "/CN=localhost"],
            ]
            .concat(),
            "openssl: the server key",
        );
        std::fs::write(
            d.join("ext.cnf"),
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
        )
        .expect("extensions file");
        openssl(
            &["x509", "-req", "-in", &p("server.csr"), "-CA", &p("ca-cert.pem"), "-CAkey", &p("ca-key.pem")]
                .iter()
                .chain(&["-CAcreateserial", "-out", &p("server-cert.pem"), "-days", "2", "-extfile", &p("ext.cnf")])
                .copied()
                .collect::<Vec<_>>(),
            "openssl: the server certificate",
        );
        std::fs::copy(d.join("ca-cert.pem"), client_dir.join("ca-cert.pem")).expect("client CA");
        Certs { ca: d.join("ca-cert.pem"), cert: d.join("server-cert.pem"), key: d.join("server-key.pem"), client_dir }
    }

    /// `swan serve` flags for `--tls MODE` with this certificate.
    pub fn flags(&self, mode: &str) -> Vec<String> {
        let s = |p: &Path| p.to_str().expect("utf-8 path").to_string();
        vec!["--tls".into(), mode.into(), "--tls-cert".into(), s(&self.cert), "--tls-key".into(), s(&self.key)]
    }

    /// An `nbds://` URI for libnbd tools trusting this CA.
    pub fn uri(&self, addr: &str) -> String {
        format!("nbds://{addr}/?tls-certificates={}", self.client_dir.display())
    }

    /// A client's certificate directory `dir`, laid out as libnbd's `tls-certificates` and
    /// qemu's `tls-creds-x509` read it: `ca-cert.pem` (the CA of `server`, to trust the
    /// server, and this one), and `client-cert.pem` with subject `CN=cn`, signed by this CA, and its
    /// `client-key.pem`.
    pub fn client(&self, dir: &Path, cn: &str, server: &Certs) -> PathBuf {
        std::fs::create_dir_all(dir).expect("client certificate directory");
        let p = |f: &str| dir.join(f).to_str().expect("utf-8 path").to_string();
        let ca_key = self.ca.with_file_name("ca-key.pem");
        let ca_key = ca_key.to_str().expect("utf-8 path");
        let ca = self.ca.to_str().expect("utf-8 path");
        let subject = format!("/CN={cn}");
        let req = ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", &subject];
        let (key, csr) = (p("client-key.pem"), p("client.csr"));
        ok(
            Command::new("openssl").args(req).args(["-keyout", &key, "-out", &csr]),
            "openssl: a client key",
            Duration::from_secs(60),
        );
        std::fs::write(
            dir.join("ext.cnf"),
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
        )
        .expect("extensions file");
        let (cert, ext) = (p("client-cert.pem"), p("ext.cnf"));
        ok(
            Command::new("openssl")
                .args(["x509", "-req", "-in", &csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial"])
                .args(["-out", &cert, "-days", "2", "-extfile", &ext]),
            "openssl: a client certificate",
            Duration::from_secs(60),
        );
        // qemu checks its own certificate against ca-cert.pem before connecting: the bundle
        // holds the signer's CA besides the server's.
        let bundle = [std::fs::read(&server.ca).expect("the server's CA"), std::fs::read(&self.ca).expect("the CA")];
        std::fs::write(dir.join("ca-cert.pem"), bundle.concat()).expect("the client's CA bundle");
        dir.to_path_buf()
    }
}

/// qemu's options for the NBD export `export` at `addr` over TLS with the x509 credentials in
/// `client_dir` (the file names libnbd reads too): the `--object` of the credentials and the
/// image options naming them.
pub fn qemu_nbd_tls(addr: &str, client_dir: &Path, export: &str) -> (String, String) {
    let port = addr.rsplit(':').next().expect("port");
    let creds = format!("tls-creds-x509,id=tls0,endpoint=client,dir={}", client_dir.display());
    let mut opts = format!("driver=nbd,host=127.0.0.1,port={port},tls-creds=tls0");
    if !export.is_empty() {
        opts += &format!(",export={export}");
    }
    (creds, opts)
}

/// `swan create` of a small RAID0 array (2 members of 64 MiB) in `dir`; returns its members.
pub fn small_array(dir: &Path) -> Vec<PathBuf> {
    create_array(dir, "raid0", 1, 2, "64M", &[])
}

/// `swan create` of `rgroups` × `ssds` members `m0`, `m1`, ... of `size` in `dir`, with
/// `extra` flags; returns the members in array order.
pub fn create_array(dir: &Path, scheme: &str, rgroups: u32, ssds: u32, size: &str, extra: &[&str]) -> Vec<PathBuf> {
    let members: Vec<PathBuf> = (0..rgroups * ssds).map(|i| dir.join(format!("m{i}"))).collect();
    let (rgroups, ssds) = (rgroups.to_string(), ssds.to_string());
    let mut args = vec!["create", "--scheme", scheme, "--rgroups", &rgroups, "--ssds-per-rgroup", &ssds];
    args.extend(["--member-size", size]);
    args.extend(extra);
    args.extend(members.iter().map(|m| m.to_str().expect("utf-8 path")));
    let out = swan(&args, dir);
    assert!(out.status.success(), "{}", describe("swan create", &out));
    members
}

/// `nbdcopy --flush FROM TO` (files or NBD URIs), which must succeed.
pub fn nbdcopy(from: &str, to: &str) {
    let out = run(Command::new("nbdcopy").arg("--flush").arg(from).arg(to), "nbdcopy", Duration::from_secs(180));
    assert!(out.status.success(), "{}", describe(&format!("nbdcopy {from} {to}"), &out));
}

// ---------------------------------------------------------------------------------------------
// HTTP

/// A plain HTTP/1.0 GET: (status code, headers, body).
pub fn http_get(addr: &str, target: &str) -> (u16, String, String) {
    use std::io::Write;
    use std::net::TcpStream;
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(20))).expect("read timeout");
    write!(s, "GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n").expect("send the request");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap_or_else(|e| panic!("GET http://{addr}{target}: {e}"));
    let raw = String::from_utf8(raw).expect("a UTF-8 answer");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no end of headers in {raw:?}"));
    let code =
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("status line {head:?}"));
    (code, head.to_string(), body.to_string())
}

/// One fio job over NBD at `uri` with `args` (the engine and output format are added);
/// fails the test on any error fio reports. Returns the job's JSON report.
pub fn fio_job(dir: &Path, uri: &str, args: &[String]) -> Value {
    require("fio", "fio");
    let mut all = vec!["--ioengine=nbd".to_string(), format!("--uri={uri}"), "--output-format=json".into()];
    all.extend_from_slice(args);
    let out = run(Command::new("fio").args(&all).current_dir(dir), "fio", Duration::from_secs(300));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", describe(&format!("fio {}", all.join(" ")), &out));
    let json = stdout.find("\n{").map_or(stdout.as_str(), |i| &stdout[i + 1..]);
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("fio printed no JSON ({e}):\n{stdout}"));
    let job = v["jobs"][0].clone();
    assert_eq!(job["error"].as_u64(), Some(0), "fio reports an error:\n{}", describe("fio", &out));
    job
}

/// One fio job over NBD: `bs` random writes over the first `size` bytes until `io_size`
/// are written (past `size`, blocks keep being chosen at random). Returns bytes written.
pub fn fio_randwrite(dir: &Path, uri: &str, bs: u64, size: u64, io_size: u64, seed: u64) -> u64 {
    let args = [
        "--name=randwrite".to_string(),
        "--rw=randwrite".into(),
        format!("--bs={bs}"),
        "--iodepth=32".into(),
        format!("--size={size}"),
        format!("--io_size={io_size}"),
        // Keep choosing blocks at random past --size, so the log fills with garbage.
        "--norandommap".into(),
        "--randrepeat=0".into(),
        format!("--randseed={seed}"),
    ];
    u64_of(&fio_job(dir, uri, &args)["write"], "io_bytes")
}
