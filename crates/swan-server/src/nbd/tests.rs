//! The server against real clients (libnbd's `nbdinfo` and `nbdcopy`) and against a raw
//! client that sends what real clients never would. Everything runs on loopback with a
//! timeout on every socket operation and every external command.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixListener;
use std::process::{Command as Process, Output};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use swan_nbd::consts::{cmd, cmd_flags, info, opt, rep, tflags, OPTION_REPLY_HEADER_LEN, SIMPLE_REPLY_LEN};
use swan_nbd::{decode_simple_reply, Command, Errno, InfoRequest, OptionHeader, Request};

use super::*;
use crate::service::{BlockOp, BlockRequest, Completion, ExportInfo, Reply};

const IO_TIMEOUT: Duration = Duration::from_secs(10);
const KIB: u32 = 1024;
const MIB: u32 = 1024 * 1024;

// ------------------------------------------------------------------ services

/// An export in memory; FLUSH does nothing. Counts requests it should never have seen.
struct MemService {
    info: ExportInfo,
    data: Mutex<Vec<u8>>,
    violations: AtomicUsize,
}

impl MemService {
    fn new(info: ExportInfo) -> Arc<Self> {
        let data = Mutex::new(vec![0; info.size_bytes as usize]);
        Arc::new(MemService { info, data, violations: AtomicUsize::new(0) })
    }

    fn execute(&self, req: BlockRequest) -> Reply {
        let mut data = self.data.lock().unwrap();
        let (start, end) = (req.offset as usize, req.offset as usize + req.len as usize);
        let aligned = req.offset % u64::from(self.info.min_block) == 0 && req.len % self.info.min_block == 0;
        let ranged = !matches!(req.op, BlockOp::Flush);
        if ranged && (end > data.len() || !aligned || req.len == 0) {
            self.violations.fetch_add(1, Ordering::Relaxed);
            return Err(Errno::Io);
        }
        match req.op {
            BlockOp::Read => Ok(data[start..end].to_vec()),
            BlockOp::Write(buf) => {
                data[start..end].copy_from_slice(&buf);
                Ok(Vec::new())
            }
            BlockOp::Flush => Ok(Vec::new()),
            BlockOp::Trim | BlockOp::WriteZeroes { .. } => {
                data[start..end].fill(0);
                Ok(Vec::new())
            }
        }
    }
}

impl BlockService for MemService {
    fn info(&self) -> ExportInfo {
        self.info.clone()
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        let reply = self.execute(req);
        done(reply);
    }
}

/// Holds every request until opened, so tests can see how many a connection lets in.
struct GateService {
    inner: Arc<MemService>,
    held: Mutex<Option<Vec<(BlockRequest, Completion)>>>,
    submitted: AtomicUsize,
}

impl GateService {
    fn new(info: ExportInfo) -> Arc<Self> {
        Arc::new(GateService { inner: MemService::new(info), held: Mutex::new(Some(Vec::new())), submitted: 0.into() })
    }

    fn held(&self) -> usize {
        self.held.lock().unwrap().as_ref().map_or(0, Vec::len)
    }

    /// Completes what is held, from another thread (as a real service would), and lets
    /// every later request straight through.
    fn open(&self) {
        let held = self.held.lock().unwrap().take().unwrap_or_default();
        let inner = Arc::clone(&self.inner);
        thread::spawn(move || {
            for (req, done) in held {
                done(inner.execute(req));
            }
        });
    }
}

impl BlockService for GateService {
    fn info(&self) -> ExportInfo {
        self.inner.info()
    }

    fn submit(&self, req: BlockRequest, done: Completion) {
        self.submitted.fetch_add(1, Ordering::Relaxed);
        let mut held = self.held.lock().unwrap();
        match held.as_mut() {
            Some(queue) => queue.push((req, done)),
            None => {
                drop(held);
                self.inner.submit(req, done);
            }
        }
    }
}

fn export(size: u64, min_block: u32, max_payload: u32) -> ExportInfo {
    ExportInfo {
        name: "swan0".into(),
        description: "test array".into(),
        size_bytes: size,
        min_block,
        preferred_block: 4096,
        max_payload,
        read_only: false,
        multi_conn: true,
    }
}

// ------------------------------------------------------------------- server

/// A server on its own thread, stopped (and checked to stop promptly) on drop.
struct Running {
    addr: String,
    stats: Arc<ServerStats>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), ServerError>>>,
}

impl Running {
    fn start(service: Arc<dyn BlockService>, opts: ServerOptions) -> Running {
        let server = NbdServer::bind(opts).unwrap();
        let addr = server.local_addr();
        let stats = server.stats();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = Some(thread::spawn(move || server.run(service, flag)));
        Running { addr, stats, stop, thread }
    }

    fn tcp(service: Arc<dyn BlockService>) -> Running {
        Running::start(service, loopback())
    }

    /// Stops the server; returns how long `run` took to return.
    fn shut(&mut self) -> Duration {
        let t = Instant::now();
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.thread.take() {
            h.join().unwrap().unwrap();
        }
        t.elapsed()
    }

    fn uri(&self) -> String {
        format!("nbd://{}", self.addr)
    }

    /// Waits for every connection and its threads to be gone.
    fn assert_idle(&self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.stats.active_connections() + self.stats.live_threads() > 0 {
            assert!(
                Instant::now() < deadline,
                "{} connection(s), {} thread(s) left",
                self.stats.active_connections(),
                self.stats.live_threads()
            );
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.thread.is_some() && !thread::panicking() {
            let took = self.shut();
            assert!(took < Duration::from_secs(3), "server took {took:?} to stop");
        }
    }
}

/// Port 0 on loopback; `SWAN_NBD_VERBOSE=1` shows the server's log.
fn loopback() -> ServerOptions {
    let verbose = std::env::var_os("SWAN_NBD_VERBOSE").is_some();
    ServerOptions { listen: "127.0.0.1:0".parse().unwrap(), verbose, ..ServerOptions::default() }
}

// ------------------------------------------------------------ real clients

/// Runs a libnbd tool, killed if it outlives a minute.
fn tool(name: &str, args: &[&str]) -> Output {
    let found = Process::new("sh").args(["-c", &format!("command -v {name}")]).output().unwrap();
    assert!(found.status.success(), "{name} not found: install libnbd-bin (apt-get install -y libnbd-bin)");
    let out = Process::new("timeout").args(["-k", "5", "60", name]).args(args).output().unwrap();
    assert!(out.status.success(), "{name} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn nbdinfo_json(uri: &str) -> serde_json::Value {
    let out = tool("nbdinfo", &["--json", uri]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["exports"][0].clone()
}

#[test]
fn nbdinfo_shows_size_block_sizes_and_flags() {
    let server = Running::tcp(MemService::new(export(8 << 20, 512, 32 * MIB)));
    for uri in [server.uri(), format!("{}/swan0", server.uri())] {
        let e = nbdinfo_json(&uri);
        assert_eq!(e["export-size"], 8 << 20, "{e}");
        assert_eq!(e["block_size_minimum"], 512, "{e}");
        assert_eq!(e["block_size_preferred"], 4096, "{e}");
        assert_eq!(e["block_size_maximum"], 32 * MIB, "{e}");
        assert_eq!(e["can_multi_conn"], true, "{e}");
        assert_eq!(e["is_read_only"], false, "{e}");
        assert_eq!(
            (&e["can_flush"], &e["can_fua"], &e["can_trim"], &e["can_zero"]),
            (&true.into(), &true.into(), &true.into(), &true.into())
        );
    }
    drop(server);

    let ro = ExportInfo { read_only: true, multi_conn: false, ..export(1 << 20, 4096, MIB) };
    let server = Running::tcp(MemService::new(ro));
    let e = nbdinfo_json(&server.uri());
    assert_eq!(e["can_multi_conn"], false, "{e}");
    assert_eq!(e["is_read_only"], true, "{e}");
    assert_eq!(
        (&e["can_flush"], &e["can_fua"], &e["can_trim"], &e["can_zero"]),
        (&true.into(), &false.into(), &false.into(), &false.into()),
        "a read-only export advertises no TRIM, WRITE_ZEROES or FUA"
    );
    assert_eq!(e["block_size_minimum"], 4096, "{e}");
    assert_eq!(e["block_size_maximum"], MIB, "{e}");
}

#[test]
fn nbdcopy_round_trip_is_byte_identical() {
    let size = 4 << 20;
    let service = MemService::new(export(size, 512, 32 * MIB));
    let server = Running::tcp(Arc::clone(&service) as Arc<dyn BlockService>);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.img");
    let output = dir.path().join("out.img");
    let data = random_bytes(size as usize, 7);
    std::fs::write(&input, &data).unwrap();

    tool("nbdcopy", &["--flush", input.to_str().unwrap(), &server.uri()]);
    assert!(service.data.lock().unwrap().as_slice() == data.as_slice(), "export differs from the input");
    tool("nbdcopy", &[&server.uri(), output.to_str().unwrap()]);
    assert!(std::fs::read(&output).unwrap() == data, "copy out differs from the input");
    assert_eq!(service.violations.load(Ordering::Relaxed), 0);
    server.assert_idle();
    assert!(server.stats.accepted() >= 2);
}

#[test]
fn unix_socket_listener_serves_nbdinfo_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swan.sock");
    // A socket file whose server is gone is replaced.
    drop(UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let opts = ServerOptions { listen: Listen::Unix(path.clone()), ..ServerOptions::default() };
    let mut server = Running::start(MemService::new(export(2 << 20, 512, MIB)), opts.clone());
    assert_eq!(server.addr, path.display().to_string());

    // One a live server answers on is not.
    let err = NbdServer::bind(opts.clone()).unwrap_err();
    assert!(err.to_string().contains("in use"), "{err}");

    let e = nbdinfo_json(&format!("nbd+unix:///?socket={}", path.display()));
    assert_eq!(e["export-size"], 2 << 20, "{e}");
    assert_eq!(e["block_size_minimum"], 512, "{e}");
    server.shut();
    assert!(!path.exists(), "socket file left behind");

    // Anything that is not a socket is left alone.
    std::fs::write(&path, b"precious").unwrap();
    assert!(NbdServer::bind(opts).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
}

// ------------------------------------------------------------- raw client

/// A minimal NBD client that can also misbehave.
struct Client {
    s: TcpStream,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        s.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
        Client { s }
    }

    /// Reads the greeting and sends fixed-newstyle + no-zeroes client flags.
    fn greet(addr: &str) -> Client {
        let mut c = Client::connect(addr);
        let mut greeting = [0u8; 18];
        c.s.read_exact(&mut greeting).unwrap();
        assert_eq!(&greeting[..8], b"NBDMAGIC");
        c.send(&3u32.to_be_bytes());
        c
    }

    /// A connection in the transmission phase of the default export; returns its flags.
    fn open(addr: &str) -> (Client, u16) {
        let mut c = Client::greet(addr);
        c.option(opt::GO, &InfoRequest { name: String::new(), requests: vec![info::BLOCK_SIZE] }.encode());
        let mut flags = None;
        loop {
            let (kind, data) = c.option_reply(opt::GO);
            match kind {
                rep::INFO if data[..2] == [0, 0] => flags = Some(u16::from_be_bytes([data[10], data[11]])),
                rep::INFO => {}
                rep::ACK => return (c, flags.expect("NBD_INFO_EXPORT before ACK")),
                other => panic!("GO answered {other:#x}"),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    fn option(&mut self, option: u32, data: &[u8]) {
        let mut v = OptionHeader { option, length: data.len() as u32 }.encode().to_vec();
        v.extend_from_slice(data);
        self.send(&v);
    }

    fn option_reply(&mut self, option: u32) -> (u32, Vec<u8>) {
        let mut h = [0u8; OPTION_REPLY_HEADER_LEN];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(u32::from_be_bytes(h[8..12].try_into().unwrap()), option);
        let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let mut data = vec![0; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
        self.s.read_exact(&mut data).unwrap();
        (kind, data)
    }

    fn request(&mut self, kind: u16, flags: u16, cookie: u64, offset: u64, length: u32, payload: &[u8]) {
        let mut v = Request { flags, kind: Command::from_u16(kind), cookie, offset, length }.encode().to_vec();
        v.extend_from_slice(payload);
        self.send(&v);
    }

    /// One reply: error code, cookie, and `read_len` bytes of data on success.
    fn reply(&mut self, read_len: usize) -> (u32, u64, Vec<u8>) {
        let mut h = [0u8; SIMPLE_REPLY_LEN];
        self.s.read_exact(&mut h).unwrap();
        let (r, _) = decode_simple_reply(&h).unwrap().unwrap();
        let mut data = Vec::new();
        if r.error == 0 && read_len > 0 {
            data = vec![0; read_len];
            self.s.read_exact(&mut data).unwrap();
        }
        (r.error, r.cookie, data)
    }

    /// Sends one request and returns its reply's error code (checking the cookie).
    fn call(&mut self, kind: u16, flags: u16, offset: u64, length: u32, payload: &[u8]) -> u32 {
        let cookie = 0x5eed_0000 + u64::from(kind);
        self.request(kind, flags, cookie, offset, length, payload);
        let read_len = if kind == cmd::READ { length as usize } else { 0 };
        let (error, got, _) = self.reply(read_len);
        assert_eq!(got, cookie);
        error
    }

    fn write(&mut self, offset: u64, data: &[u8]) {
        assert_eq!(self.call(cmd::WRITE, 0, offset, data.len() as u32, data), 0);
    }

    fn read(&mut self, offset: u64, len: u32) -> Vec<u8> {
        self.request(cmd::READ, 0, 99, offset, len, &[]);
        let (error, cookie, data) = self.reply(len as usize);
        assert_eq!((error, cookie), (0, 99));
        data
    }

    /// True once the server has closed the connection (EOF or reset).
    fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 256];
        loop {
            match self.s.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::TimedOut => return false,
                Err(_) => return true,
            }
        }
    }
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    swan_testkit::rng::SplitMix64(seed).bytes(n)
}

/// A client doing good writes and read-backs in its own region until told to stop;
/// returns how many round trips succeeded.
fn steady_client(addr: String, region: u64, stop: Arc<AtomicBool>) -> JoinHandle<u64> {
    thread::spawn(move || {
        let (mut c, _) = Client::open(&addr);
        let mut rounds = 0u64;
        while !stop.load(Ordering::Acquire) || rounds == 0 {
            let data = random_bytes(8192, rounds);
            c.write(region, &data);
            assert!(c.read(region, 8192) == data, "read-back differs");
            rounds += 1;
        }
        c.request(cmd::DISC, 0, 0, 0, 0, &[]);
        assert!(c.is_closed());
        rounds
    })
}

#[test]
fn bad_requests_get_errors_and_the_connection_goes_on() {
    let size = 16u64 << 20;
    let service = MemService::new(export(size, 512, MIB));
    let server = Running::tcp(Arc::clone(&service) as Arc<dyn BlockService>);
    let stop_steady = Arc::new(AtomicBool::new(false));
    let steady = steady_client(server.addr.clone(), size - 8192, Arc::clone(&stop_steady));

    let (mut c, flags) = Client::open(&server.addr);
    assert_eq!(flags & tflags::CAN_MULTI_CONN, tflags::CAN_MULTI_CONN);
    let block = vec![0xab; 512];
    let inval = Errno::Inval.code();
    // (what, command, flags, offset, length, payload, expected error)
    type Case<'a> = (&'a str, u16, u16, u64, u32, &'a [u8], u32);
    let cases: &[Case] = &[
        ("read beyond the end", cmd::READ, 0, size, 512, &[], inval),
        ("read straddling the end", cmd::READ, 0, size - 512, 1024, &[], inval),
        ("misaligned write offset", cmd::WRITE, 0, 100, 512, &block, inval),
        ("misaligned write length", cmd::WRITE, 0, 0, 100, &block[..100], inval),
        ("write beyond the end", cmd::WRITE, 0, size - 512, 1024, &[0; 1024], Errno::NoSpc.code()),
        ("read over max payload", cmd::READ, 0, 0, MIB + 512, &[], inval),
        ("write over max payload", cmd::WRITE, 0, 0, MIB + 512, &vec![1; (MIB + 512) as usize], inval),
        ("zero-length read", cmd::READ, 0, 0, 0, &[], inval),
        ("unknown command", 42, 0, 0, 512, &[], inval),
        ("unknown flag", cmd::READ, 1 << 9, 0, 512, &[], inval),
        ("flag not for READ", cmd::READ, cmd_flags::NO_HOLE, 0, 512, &[], inval),
        ("CACHE (not advertised)", cmd::CACHE, 0, 0, 512, &[], inval),
        ("BLOCK_STATUS (no context)", cmd::BLOCK_STATUS, 0, 0, 512, &[], inval),
        ("FLUSH with a range", cmd::FLUSH, 0, 512, 512, &[], inval),
    ];
    for &(what, kind, flags, offset, length, payload, want) in cases {
        assert_eq!(c.call(kind, flags, offset, length, payload), want, "{what}");
        // Still in step: a good write and read-back after each refusal.
        let data = random_bytes(4096, offset ^ u64::from(length));
        c.write(4096, &data);
        assert!(c.read(4096, 4096) == data, "after {what}");
    }
    assert_eq!(service.violations.load(Ordering::Relaxed), 0);

    // Good commands with their flags.
    assert_eq!(c.call(cmd::WRITE, cmd_flags::FUA, 0, 1024, &[7; 1024]), 0);
    assert_eq!(c.call(cmd::FLUSH, 0, 0, 0, &[]), 0);
    assert_eq!(c.call(cmd::TRIM, 0, 0, 512, &[]), 0);
    assert_eq!(c.call(cmd::WRITE_ZEROES, cmd_flags::NO_HOLE, 512, 512, &[]), 0);
    assert_eq!(c.read(0, 1024), vec![0; 1024]);

    // A WRITE whose payload is too big to skip: refused, then the connection is closed.
    c.request(cmd::WRITE, 0, 77, 0, 0xffff_fe00, &[0; 4096]);
    let mut h = [0u8; SIMPLE_REPLY_LEN];
    if c.s.read_exact(&mut h).is_ok() {
        let (r, _) = decode_simple_reply(&h).unwrap().unwrap();
        assert_eq!((r.error, r.cookie), (inval, 77));
    }
    assert!(c.is_closed());

    // A bad magic: closed without a reply.
    let (mut bad, _) = Client::open(&server.addr);
    bad.send(&[0x55; 28]);
    assert!(bad.is_closed());

    // Other connections never noticed.
    let (mut fresh, _) = Client::open(&server.addr);
    assert_eq!(fresh.read(4096, 512).len(), 512);
    drop(fresh);
    stop_steady.store(true, Ordering::Release);
    assert!(steady.join().unwrap() > 0);
    assert_eq!(service.violations.load(Ordering::Relaxed), 0);
    server.assert_idle();
}

#[test]
fn read_only_export_refuses_writes_with_eperm() {
    let ro = ExportInfo { read_only: true, ..export(1 << 20, 512, MIB) };
    let server = Running::tcp(MemService::new(ro));
    let (mut c, flags) = Client::open(&server.addr);
    assert_eq!(flags & tflags::READ_ONLY, tflags::READ_ONLY);
    let perm = Errno::Perm.code();
    assert_eq!(c.call(cmd::WRITE, 0, 0, 512, &[1; 512]), perm);
    assert_eq!(c.call(cmd::TRIM, 0, 0, 512, &[]), perm);
    assert_eq!(c.call(cmd::WRITE_ZEROES, 0, 0, 512, &[]), perm);
    assert_eq!(c.read(0, 512), vec![0; 512]);
    assert_eq!(c.call(cmd::FLUSH, 0, 0, 0, &[]), 0);
}

#[test]
fn silent_and_slow_handshakes_are_dropped_after_the_timeout() {
    let opts = ServerOptions { handshake_timeout: Duration::from_millis(300), ..loopback() };
    let server = Running::start(MemService::new(export(1 << 20, 512, MIB)), opts);
    let start = Instant::now();
    let mut silent = Client::connect(&server.addr);
    let mut half_flags = Client::connect(&server.addr);
    half_flags.send(&[0, 0]);
    let mut half_option = Client::greet(&server.addr);
    half_option.send(&OptionHeader { option: opt::GO, length: 100 }.encode());
    half_option.send(&[0; 10]);
    // Trickling one byte at a time does not extend the deadline.
    let mut trickle = Client::greet(&server.addr);
    let trickled = thread::spawn(move || {
        for _ in 0..20 {
            if trickle.s.write_all(b"I").is_err() {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        trickle.is_closed()
    });
    assert_eq!(server.stats.active_connections(), 4);
    // Meanwhile a prompt client is served.
    let (mut good, _) = Client::open(&server.addr);
    assert_eq!(good.read(0, 512).len(), 512);

    for c in [&mut silent, &mut half_flags, &mut half_option] {
        let mut greeting = [0u8; 18];
        let _ = c.s.read_exact(&mut greeting);
        assert!(c.is_closed());
    }
    assert!(trickled.join().unwrap());
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(3), "dropped after {took:?}");
    // The good client is past its handshake: the timeout does not apply to it.
    thread::sleep(Duration::from_millis(400));
    assert_eq!(good.read(512, 512).len(), 512);
    drop(good);
    server.assert_idle();
    assert_eq!(server.stats.accepted(), 5);
}

#[test]
fn hostile_options_close_or_error_and_others_keep_going() {
    let server = Running::tcp(MemService::new(export(1 << 20, 512, MIB)));
    let (mut bystander, _) = Client::open(&server.addr);

    // An option length of 0xffffffff: hard disconnect before any allocation.
    let mut c = Client::greet(&server.addr);
    c.send(&OptionHeader { option: opt::GO, length: u32::MAX }.encode());
    assert!(c.is_closed());

    // A 4096-byte name is legal but unknown: GO fails, haggling goes on, and the
    // default export is still reachable.
    let long = "x".repeat(4096);
    let mut c = Client::greet(&server.addr);
    c.option(opt::GO, &InfoRequest { name: long.clone(), requests: vec![] }.encode());
    assert_eq!(c.option_reply(opt::GO).0, rep::ERR_UNKNOWN);
    c.option(opt::STRUCTURED_REPLY, &[]);
    assert_eq!(c.option_reply(opt::STRUCTURED_REPLY).0, rep::ERR_UNSUP);
    c.option(opt::LIST, &[]);
    let (kind, data) = c.option_reply(opt::LIST);
    assert_eq!((kind, &data[4..9]), (rep::SERVER, &b"swan0"[..]));
    assert_eq!(c.option_reply(opt::LIST).0, rep::ACK);
    c.option(opt::GO, &InfoRequest { name: String::new(), requests: vec![] }.encode());
    while c.option_reply(opt::GO).0 != rep::ACK {}
    assert_eq!(c.read(0, 512).len(), 512);

    // EXPORT_NAME for an unknown export (4096 or 4097 bytes) must end the session.
    for n in [4096, 4097] {
        let mut c = Client::greet(&server.addr);
        c.option(opt::EXPORT_NAME, "y".repeat(n).as_bytes());
        assert!(c.is_closed(), "EXPORT_NAME of {n} bytes");
    }
    // EXPORT_NAME for the real one works (no-zeroes: 10 bytes of size and flags).
    let mut c = Client::greet(&server.addr);
    c.option(opt::EXPORT_NAME, b"swan0");
    let mut reply = [0u8; 10];
    c.s.read_exact(&mut reply).unwrap();
    assert_eq!(u64::from_be_bytes(reply[..8].try_into().unwrap()), 1 << 20);
    assert_eq!(c.read(0, 512).len(), 512);

    // ABORT is acknowledged, then closed.
    let mut c = Client::greet(&server.addr);
    c.option(opt::ABORT, &[]);
    assert_eq!(c.option_reply(opt::ABORT).0, rep::ACK);
    assert!(c.is_closed());

    assert_eq!(bystander.read(0, 512).len(), 512);
}

#[test]
fn requests_sent_with_go_are_served() {
    let service = MemService::new(export(1 << 20, 512, MIB));
    service.data.lock().unwrap()[..512].fill(0x5a);
    let server = Running::tcp(service);
    let mut c = Client::greet(&server.addr);
    // GO and the first request in one segment: the request arrives with the handshake.
    let mut bytes = OptionHeader { option: opt::GO, length: 6 }.encode().to_vec();
    bytes.extend_from_slice(&InfoRequest { name: String::new(), requests: vec![] }.encode());
    bytes.extend_from_slice(&Request { flags: 0, kind: Command::Read, cookie: 3, offset: 0, length: 512 }.encode());
    c.send(&bytes);
    while c.option_reply(opt::GO).0 != rep::ACK {}
    assert_eq!(c.reply(512), (0, 3, vec![0x5a; 512]));
}

#[test]
fn flooding_client_is_held_to_the_inflight_limits() {
    let gate = GateService::new(export(1 << 20, 512, MIB));
    let opts = ServerOptions { max_inflight_per_conn: 4, max_inflight_bytes_per_conn: 8192, ..loopback() };
    let server = Running::start(Arc::clone(&gate) as Arc<dyn BlockService>, opts);
    let (mut c, _) = Client::open(&server.addr);

    // 10 flushes (no payload): only 4 reach the service until replies go out.
    for i in 0..10 {
        c.request(cmd::FLUSH, 0, i, 0, 0, &[]);
    }
    wait_for(|| gate.held() == 4);
    thread::sleep(Duration::from_millis(100));
    assert_eq!(gate.submitted.load(Ordering::Relaxed), 4);
    gate.open();
    let mut cookies: Vec<u64> = (0..10).map(|_| c.reply(0).1).collect();
    cookies.sort_unstable();
    assert_eq!(cookies, (0..10).collect::<Vec<_>>());

    // The byte budget: 4 KiB reads against 8 KiB.
    let gate = GateService::new(export(1 << 20, 512, MIB));
    let opts = ServerOptions { max_inflight_per_conn: 100, max_inflight_bytes_per_conn: 8192, ..loopback() };
    let server2 = Running::start(Arc::clone(&gate) as Arc<dyn BlockService>, opts);
    let (mut c, _) = Client::open(&server2.addr);
    for i in 0..6 {
        c.request(cmd::READ, 0, i, 0, 4 * KIB, &[]);
    }
    wait_for(|| gate.held() == 2);
    thread::sleep(Duration::from_millis(100));
    assert_eq!(gate.submitted.load(Ordering::Relaxed), 2);
    gate.open();
    for _ in 0..6 {
        assert_eq!(c.reply(4096).2.len(), 4096);
    }
    drop(server);
}

#[test]
fn disc_waits_for_in_flight_replies() {
    let gate = GateService::new(export(1 << 20, 512, MIB));
    let server = Running::tcp(Arc::clone(&gate) as Arc<dyn BlockService>);
    let (mut c, _) = Client::open(&server.addr);
    for i in 0..3 {
        c.request(cmd::READ, 0, i, 512 * i, 512, &[]);
    }
    c.request(cmd::DISC, 0, 9, 0, 0, &[]);
    wait_for(|| gate.held() == 3);
    thread::sleep(Duration::from_millis(100));
    gate.open();
    for _ in 0..3 {
        let (error, _, data) = c.reply(512);
        assert_eq!((error, data.len()), (0, 512));
    }
    assert!(c.is_closed());
    server.assert_idle();
}

#[test]
fn client_vanishing_mid_reply_harms_no_one() {
    let service = MemService::new(export(8 << 20, 512, 4 * MIB));
    let server = Running::tcp(service);
    let (mut bystander, _) = Client::open(&server.addr);
    for _ in 0..3 {
        let (mut c, _) = Client::open(&server.addr);
        for i in 0..16 {
            c.request(cmd::READ, 0, i, 0, 4 * MIB, &[]);
        }
        // Read part of the first reply, then go away with the rest unread.
        let mut part = [0u8; 1000];
        c.s.read_exact(&mut part).unwrap();
        drop(c);
    }
    // A writer that resets mid-payload.
    let (mut c, _) = Client::open(&server.addr);
    c.request(cmd::WRITE, 0, 1, 0, 4 * MIB, &[3; 4096]);
    drop(c);
    assert_eq!(bystander.read(0, 4096).len(), 4096);
    drop(bystander);
    server.assert_idle();
}

#[test]
fn client_that_stops_reading_is_dropped_after_the_send_timeout() {
    let opts = ServerOptions { send_timeout: Duration::from_millis(300), ..loopback() };
    let server = Running::start(MemService::new(export(8 << 20, 512, 4 * MIB)), opts);
    let (mut stuck, _) = Client::open(&server.addr);
    let (mut bystander, _) = Client::open(&server.addr);
    // Far more reply data than loopback buffers hold, never read.
    for i in 0..32 {
        stuck.request(cmd::READ, 0, i, 0, 4 * MIB, &[]);
    }
    let start = Instant::now();
    wait_for(|| server.stats.active_connections() == 1);
    assert!(start.elapsed() < Duration::from_secs(5), "dropped after {:?}", start.elapsed());
    assert_eq!(bystander.read(0, 4096).len(), 4096);
    drop(bystander);
    server.assert_idle();
}

#[test]
fn stop_is_prompt_with_idle_and_busy_connections() {
    let gate = GateService::new(export(1 << 20, 512, MIB));
    let mut server = Running::tcp(Arc::clone(&gate) as Arc<dyn BlockService>);
    let (mut idle, _) = Client::open(&server.addr);
    let mut handshaking = Client::greet(&server.addr);
    let (mut busy, _) = Client::open(&server.addr);
    busy.request(cmd::READ, 0, 5, 0, 512, &[]);
    wait_for(|| gate.held() == 1);
    // The held read completes during the grace period and its reply still goes out.
    let opener = {
        let gate = Arc::clone(&gate);
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            gate.open();
        })
    };
    let took = server.shut();
    opener.join().unwrap();
    assert!(took < Duration::from_secs(2), "stop took {took:?}");
    assert_eq!(busy.reply(512).1, 5);
    assert!(busy.is_closed() && idle.is_closed() && handshaking.is_closed());
    server.assert_idle();
    assert!(TcpStream::connect_timeout(&server.addr.parse().unwrap(), Duration::from_secs(1)).is_err());
}

#[test]
fn too_many_connections_are_refused() {
    let opts = ServerOptions { max_connections: 2, ..loopback() };
    let server = Running::start(MemService::new(export(1 << 20, 512, MIB)), opts);
    let (mut a, _) = Client::open(&server.addr);
    let (_b, _) = Client::open(&server.addr);
    let mut c = Client::connect(&server.addr);
    assert!(c.is_closed());
    assert_eq!(server.stats.refused(), 1);
    assert_eq!(a.read(0, 512).len(), 512);
}

#[test]
fn listen_parses_and_prints() {
    assert_eq!(DEFAULT_LISTEN.parse::<Listen>().unwrap(), ServerOptions::default().listen);
    assert_eq!("[::1]:99".parse::<Listen>().unwrap().to_string(), "[::1]:99");
    assert_eq!("unix:/run/swan.sock".parse::<Listen>().unwrap(), Listen::Unix("/run/swan.sock".into()));
    assert_eq!(Listen::Unix("/x".into()).to_string(), "unix:/x");
    assert!("unix:".parse::<Listen>().is_err());
    assert!("localhost".parse::<Listen>().is_err());
}

#[test]
fn export_limits_follow_the_service() {
    let l = export_limits(&export(1 << 30, 4096, 64 * MIB)).unwrap();
    assert_eq!((l.min_block, l.preferred_block, l.max_payload), (4096, 4096, 32 * MIB));
    assert_eq!(l.transmission_flags & tflags::CAN_MULTI_CONN, tflags::CAN_MULTI_CONN);
    assert_eq!(l.transmission_flags & tflags::READ_ONLY, 0);
    let l = export_limits(&ExportInfo { read_only: true, multi_conn: false, ..export(1 << 20, 512, MIB) }).unwrap();
    assert_eq!(l.transmission_flags, tflags::HAS_FLAGS | tflags::READ_ONLY | tflags::SEND_FLUSH);
    assert!(export_limits(&export(1 << 20, 3, MIB)).is_err());
    assert!(export_limits(&ExportInfo { name: "a\0b".into(), ..export(1 << 20, 512, MIB) }).is_err());
}

fn wait_for(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + IO_TIMEOUT;
    while !cond() {
        assert!(Instant::now() < deadline, "condition not reached in {IO_TIMEOUT:?}");
        thread::sleep(Duration::from_millis(5));
    }
}
