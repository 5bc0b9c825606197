//! The NBD front of swan's block server: one export or several, each backed by its own
//! [`BlockService`], served over TCP or a unix-domain socket to any number of clients. Each
//! export may be closed to all clients but those whose TLS certificate names one of its
//! allowed subjects ([`Export::allow_subjects`]).
//!
//! The protocol itself (handshake state machine, request decoding, validation against the
//! export's limits, reply encoding) is `swan_nbd`, which does no I/O; this module owns the
//! sockets and threads:
//!
//! - the thread that calls [`NbdServer::run`] accepts connections until `stop` is set,
//!   polling so that it notices within [`STOP_POLL`];
//! - each connection has a reader thread (handshake, then decoding, validating and
//!   submitting requests); the thread that completes a request sends its reply itself when
//!   the socket takes it without waiting, and otherwise queues it for the connection's
//!   reply thread, so a service completing a request never blocks on a slow client;
//! - each connection's memory is bounded: a request counts against
//!   `max_inflight_per_conn` and `max_inflight_bytes_per_conn` until its reply has been
//!   written, and while either is reached the reader reads nothing more (TCP's own flow
//!   control then holds the client back).
//!
//! Anything wrong with one connection (protocol violation, timeout, peer gone, even a
//! panic) ends that connection only. On stop, the server stops accepting, stops reading
//! new requests, lets in-flight replies go out for up to `shutdown_grace`, then cuts what
//! is left and returns.

mod client_auth;
mod conn;
mod error;
mod stream;
#[cfg(test)]
mod tests;
pub mod tls;

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::net::{Shutdown, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use swan_nbd::consts::{tflags, DEFAULT_MAX_PAYLOAD, MAX_STRING_LEN, NBD_PORT};
use swan_nbd::{ExportConfig, ExportLimits, ServerConfig, TlsMode};

use crate::metrics::requests::Requests;
use crate::service::{BlockService, ExportInfo};
pub use client_auth::ClientAuth;
use conn::ConnContext;
pub use error::ServerError;
use stream::{Listener, Stream};

/// Where the server listens unless told otherwise: loopback, the IANA NBD port.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:10809";

/// How often the accept loop and handshakes look at `stop`.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// After `shutdown_grace`, how long to wait for connections whose sockets were cut.
const CUT_WAIT: Duration = Duration::from_secs(1);

/// Connections refused for `max_connections` are logged at most this often (a flood of
/// them must not become a flood of log lines).
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(10);

/// A listening address: `IP:PORT`, or `unix:PATH` for a unix-domain socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listen {
    Tcp(SocketAddr),
    Unix(PathBuf),
}

impl FromStr for Listen {
    type Err = ServerError;

    fn from_str(s: &str) -> Result<Listen, ServerError> {
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(ServerError::EmptyUnixPath(s.to_string()));
            }
            return Ok(Listen::Unix(path.into()));
        }
        let addr = s.parse().map_err(|source| ServerError::BadAddress { text: s.to_string(), source })?;
        Ok(Listen::Tcp(addr))
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Listen::Tcp(a) => write!(f, "{a}"),
            Listen::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// Whether clients may or must upgrade to TLS with `NBD_OPT_STARTTLS`.
#[derive(Clone, Debug, Default)]
pub enum Tls {
    /// No TLS: `NBD_OPT_STARTTLS` is answered `NBD_REP_ERR_UNSUP`.
    #[default]
    Off,
    /// TLS offered, plaintext allowed (the spec's SELECTIVETLS with no TLS-only export).
    On(Arc<rustls::ServerConfig>),
    /// TLS required before anything else (FORCEDTLS).
    Require(Arc<rustls::ServerConfig>),
}

impl Tls {
    /// The handshake's view of it.
    pub fn mode(&self) -> TlsMode {
        match self {
            Tls::Off => TlsMode::Off,
            Tls::On(_) => TlsMode::On,
            Tls::Require(_) => TlsMode::Require,
        }
    }

    pub(crate) fn config(&self) -> Option<&Arc<rustls::ServerConfig>> {
        match self {
            Tls::Off => None,
            Tls::On(c) | Tls::Require(c) => Some(c),
        }
    }
}

/// How the server listens and what it allows each client; see [`ServerOptions::default`].
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Default [`DEFAULT_LISTEN`].
    pub listen: Listen,
    /// From accept to the start of transmission; a client slower than this is dropped.
    /// Once in transmission an idle client may stay connected indefinitely.
    pub handshake_timeout: Duration,
    /// Requests read but not yet replied to, per connection (one is always allowed).
    pub max_inflight_per_conn: usize,
    /// Bytes of read and write payload held for requests in flight, per connection. A
    /// single request larger than this is still admitted when nothing else is in flight.
    pub max_inflight_bytes_per_conn: usize,
    /// Connections beyond this are closed as soon as they are accepted.
    pub max_connections: usize,
    /// A reply send that makes no progress for this long ends the connection (a client
    /// that stopped reading must not pin its memory forever).
    pub send_timeout: Duration,
    /// On stop, how long connections get to send their in-flight replies.
    pub shutdown_grace: Duration,
    /// Log connections and refused requests to stderr.
    pub verbose: bool,
    /// STARTTLS offered, required, or not.
    pub tls: Tls,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: Listen::Tcp(SocketAddr::from(([127, 0, 0, 1], NBD_PORT))),
            handshake_timeout: Duration::from_secs(10),
            max_inflight_per_conn: 128,
            // What one client may park in the server's memory. 16 MiB is 16 writes of 1 MiB
            // in flight (more than the members need to stay busy) and keeps the server's RSS
            // near its map's size under bulk writes; a single larger request still passes.
            max_inflight_bytes_per_conn: 16 << 20,
            max_connections: 256,
            send_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(5),
            verbose: false,
            tls: Tls::Off,
        }
    }
}

/// One export: the service behind it and who may open it.
#[derive(Clone)]
pub struct Export {
    pub service: Arc<dyn BlockService>,
    /// Common names (CN) of the client-certificate subjects that may open this export,
    /// compared exactly; empty: every client the server serves. A client without a
    /// certificate (plain NBD, or TLS without client certificates) opens only exports whose
    /// list is empty; one whose subject has several CNs only those that list every one.
    pub allow_subjects: Vec<String>,
    /// What the front counts of this export's requests (besides the server's counts of
    /// every export's): a server of several exports labels its metrics by export with it.
    pub requests: Arc<Requests>,
}

impl Export {
    /// An export every client may open.
    pub fn open_to_all(service: Arc<dyn BlockService>) -> Export {
        Export { service, allow_subjects: Vec::new(), requests: Arc::default() }
    }

    /// Whether a client whose certificate's subject has the common names `cns` (`None`: no
    /// certificate) may open it.
    pub fn admits(&self, cns: Option<&[String]>) -> bool {
        self.allow_subjects.is_empty() || cns.is_some_and(|cns| client_auth::passes(cns, &self.allow_subjects))
    }
}

impl fmt::Debug for Export {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Export").field("name", &self.service.info().name).field("allow", &self.allow_subjects).finish()
    }
}

/// Counters a running server keeps, readable from any thread.
#[derive(Debug, Default)]
pub struct ServerStats {
    accepted: AtomicU64,
    refused: AtomicU64,
    active: AtomicUsize,
    threads: AtomicUsize,
    requests: Arc<Requests>,
}

impl ServerStats {
    /// Connections accepted and served (not those refused for `max_connections`).
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Acquire)
    }

    /// Connections closed at once because `max_connections` were open.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Acquire)
    }

    /// Connections whose threads have not all finished yet.
    pub fn active_connections(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }

    /// Requests handed to the service, per operation: counts, bytes, errors, latency.
    pub fn requests(&self) -> &Requests {
        &self.requests
    }

    /// The same counters, shared (for a collector that outlives this borrow).
    pub fn requests_shared(&self) -> Arc<Requests> {
        Arc::clone(&self.requests)
    }

    /// Connection threads (readers and writers) still running.
    pub fn live_threads(&self) -> usize {
        self.threads.load(Ordering::Acquire)
    }
}

/// Writes to stderr when verbose; a failing stderr is ignored rather than fatal (unlike
/// `eprintln!`, which panics).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Log {
    verbose: bool,
}

impl Log {
    pub(crate) fn say(self, args: fmt::Arguments<'_>) {
        if self.verbose {
            self.always(args);
        }
    }

    /// Written verbose or not.
    pub(crate) fn always(self, args: fmt::Arguments<'_>) {
        let _ = writeln!(std::io::stderr().lock(), "swan nbd: {args}");
    }
}

/// Sockets of open connections, so that shutdown can wake their threads.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    open: Mutex<HashMap<u64, Stream>>,
}

impl Registry {
    fn insert(&self, id: u64, s: Stream) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).insert(id, s);
    }

    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    fn shutdown_all(&self, how: Shutdown) {
        for s in self.open.lock().unwrap_or_else(PoisonError::into_inner).values() {
            let _ = s.shutdown(how);
        }
    }
}

/// A bound, not yet running server. Binding first lets a caller learn the real address
/// (port 0) before serving.
#[derive(Debug)]
pub struct NbdServer {
    listener: Listener,
    opts: ServerOptions,
    stats: Arc<ServerStats>,
}

impl NbdServer {
    /// Binds `opts.listen`. A unix socket file left by a dead server is removed first;
    /// one a live server still answers on is an error.
    pub fn bind(opts: ServerOptions) -> Result<NbdServer, ServerError> {
        let listener = Listener::bind(&opts.listen)?;
        Ok(NbdServer { listener, opts, stats: Arc::default() })
    }

    /// `IP:PORT` (the real port when bound to port 0) or the unix socket's path.
    pub fn local_addr(&self) -> String {
        self.listener.local_addr()
    }

    /// The server's counters; they stay readable after [`NbdServer::run`] returns.
    pub fn stats(&self) -> Arc<ServerStats> {
        Arc::clone(&self.stats)
    }

    /// Serves `service`'s export until `stop` is set, then shuts down (see the module
    /// doc) and returns. A unix socket's file is removed on return.
    pub fn run(self, service: Arc<dyn BlockService>, stop: Arc<AtomicBool>) -> Result<(), ServerError> {
        self.run_exports(vec![Export::open_to_all(service)], stop)
    }

    /// Serves `exports` until `stop` is set, as [`NbdServer::run`]. A lone export also
    /// answers to the empty name (the protocol's default export, what clients given a bare
    /// `nbd://host` ask for); among several, a client must name the one it wants, so that
    /// none writes to an array it did not mean.
    pub fn run_exports(self, exports: Vec<Export>, stop: Arc<AtomicBool>) -> Result<(), ServerError> {
        let log = Log { verbose: self.opts.verbose };
        let mut served = Vec::with_capacity(exports.len());
        let mut configs = Vec::with_capacity(exports.len());
        for e in exports {
            let info = e.service.info();
            if configs.iter().any(|c: &ExportConfig| c.name == info.name) {
                return Err(ServerError::DuplicateExport(info.name));
            }
            let limits = export_limits(&info)?;
            log.say(format_args!("serving {:?} ({} bytes) on {}", info.name, info.size_bytes, self.local_addr()));
            configs.push(ExportConfig { name: info.name.clone(), description: info.description.clone(), limits });
            served.push(conn::Served { export: e, limits });
        }
        if served.is_empty() {
            return Err(ServerError::NoExport);
        }
        let mut config = ServerConfig::new(configs).with_tls(self.opts.tls.mode());
        if served.len() == 1 {
            config = config.with_default_export(0);
        }
        let ctx = Arc::new(ConnContext {
            exports: served,
            config,
            opts: self.opts.clone(),
            stop: Arc::clone(&stop),
            stats: Arc::clone(&self.stats),
            registry: Registry::default(),
            log,
        });
        let result = self.accept_loop(&ctx);
        self.drain(&ctx);
        result
    }

    fn accept_loop(&self, ctx: &Arc<ConnContext>) -> Result<(), ServerError> {
        let mut next_id = 0u64;
        let mut refusals = RefusalLog::default();
        while !ctx.stop.load(Ordering::Acquire) {
            if !self.listener.wait_readable(STOP_POLL).map_err(ServerError::Poll)? {
                continue;
            }
            match self.listener.accept() {
                Ok(stream) => {
                    next_id += 1;
                    self.start_connection(ctx, stream, next_id, &mut refusals);
                }
                Err(e) if is_transient_accept_error(&e) => {}
                Err(e) => {
                    // Typically EMFILE/ENFILE/ENOMEM: back off instead of spinning, keep
                    // serving the connections already open.
                    ctx.log.say(format_args!("accept failed: {e}"));
                    thread::sleep(STOP_POLL);
                }
            }
        }
        Ok(())
    }

    fn start_connection(&self, ctx: &Arc<ConnContext>, stream: Stream, id: u64, refusals: &mut RefusalLog) {
        if self.stats.active_connections() >= self.opts.max_connections {
            self.stats.refused.fetch_add(1, Ordering::AcqRel);
            refusals.refused(ctx.log, stream.peer(), self.opts.max_connections);
            return;
        }
        let handle = match stream.configure().and_then(|()| stream.try_clone()) {
            Ok(h) => h,
            Err(e) => {
                // Usually a peer that reset before we got to it: drop it, accept on.
                ctx.log.say(format_args!("dropping {}: {e}", stream.peer()));
                return;
            }
        };
        // Counted and registered before the thread starts, so that shutdown never misses it.
        let guard = ConnGuard::new(Arc::clone(ctx), id, handle);
        let counted = ThreadGuard::new(&self.stats);
        let ctx2 = Arc::clone(ctx);
        let spawned = thread::Builder::new().name(format!("nbd-conn-{id}")).spawn(move || {
            let _guards = (guard, counted);
            conn::serve_connection(&ctx2, stream, id);
        });
        match spawned {
            Ok(_) => {
                self.stats.accepted.fetch_add(1, Ordering::AcqRel);
            }
            // The closure (and with it the guards) has been dropped: nothing to undo.
            Err(e) => ctx.log.say(format_args!("connection {id}: cannot start a thread: {e}")),
        }
    }

    /// Stops reading on every connection, waits up to `shutdown_grace` for them to send
    /// what is in flight and finish, then cuts the rest.
    fn drain(&self, ctx: &ConnContext) {
        // A read shutdown wakes readers blocked on their sockets; writers keep sending.
        ctx.registry.shutdown_all(Shutdown::Read);
        if !wait_until_idle(&self.stats, self.opts.shutdown_grace) {
            ctx.log.say(format_args!(
                "{} connection(s) still busy after {:?}; closing them",
                self.stats.active_connections(),
                self.opts.shutdown_grace
            ));
            ctx.registry.shutdown_all(Shutdown::Both);
            if !wait_until_idle(&self.stats, CUT_WAIT) {
                // Only a service that never completes a request can hold a connection
                // past its socket being shut down.
                ctx.log
                    .say(format_args!("{} connection(s) left waiting on the service", self.stats.active_connections()));
            }
        }
        ctx.log.say(format_args!("stopped after {} connection(s)", self.stats.accepted()));
    }
}

/// Serves `service` on `opts.listen` until `stop` is set (see [`NbdServer::run`]).
pub fn serve(service: Arc<dyn BlockService>, opts: ServerOptions, stop: Arc<AtomicBool>) -> Result<(), ServerError> {
    NbdServer::bind(opts)?.run(service, stop)
}

/// The limits and transmission flags advertised for `info`, checked against the spec.
fn export_limits(info: &ExportInfo) -> Result<ExportLimits, ServerError> {
    if info.name.len() > MAX_STRING_LEN || info.name.contains('\0') {
        return Err(ServerError::ExportName);
    }
    let mut flags = tflags::HAS_FLAGS | tflags::SEND_FLUSH;
    if info.read_only {
        // No TRIM, WRITE_ZEROES or FUA: each changes (or forces out) data a read-only export
        // never takes, so advertising them would only invite requests refused with EPERM.
        // FLUSH stays, a harmless no-op that clients flushing before they close may send.
        flags |= tflags::READ_ONLY;
    } else {
        flags |= tflags::SEND_FUA | tflags::SEND_TRIM | tflags::SEND_WRITE_ZEROES;
    }
    if info.multi_conn {
        flags |= tflags::CAN_MULTI_CONN;
    }
    let limits = ExportLimits {
        size_bytes: info.size_bytes,
        min_block: info.min_block,
        preferred_block: info.preferred_block,
        // Larger payloads are a denial-of-service risk the spec lets clients refuse, and
        // each one is a buffer this server allocates.
        max_payload: info.max_payload.min(DEFAULT_MAX_PAYLOAD),
        transmission_flags: flags,
    };
    limits.check().map_err(|why| ServerError::ExportLimits { name: info.name.clone(), why })?;
    Ok(limits)
}

fn is_transient_accept_error(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), WouldBlock | Interrupted | ConnectionAborted | ConnectionReset)
}

/// Logs connections refused for `max_connections`, verbose or not: the first at once, then
/// a count at most every [`REFUSAL_LOG_EVERY`].
#[derive(Default)]
struct RefusalLog {
    last: Option<Instant>,
    unlogged: u64,
}

impl RefusalLog {
    fn refused(&mut self, log: Log, peer: impl fmt::Display, max: usize) {
        self.unlogged += 1;
        if self.last.is_some_and(|t| t.elapsed() < REFUSAL_LOG_EVERY) {
            return;
        }
        log.always(format_args!(
            "refusing connections: {max} are open, the most --max-connections allows \
             ({} refused since the last such line, the latest from {peer})",
            self.unlogged
        ));
        self.last = Some(Instant::now());
        self.unlogged = 0;
    }
}

/// Polls `stats` until no connection is active; false if `limit` passed first.
fn wait_until_idle(stats: &ServerStats, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while stats.active_connections() > 0 {
        if Instant::now() >= deadline {
            return false;
        }
        thread::sleep(Duration::from_millis(10));
    }
    true
}

/// One open connection: counted and registered while alive, however its thread ends.
struct ConnGuard {
    ctx: Arc<ConnContext>,
    id: u64,
}

impl ConnGuard {
    fn new(ctx: Arc<ConnContext>, id: u64, socket: Stream) -> Self {
        ctx.stats.active.fetch_add(1, Ordering::AcqRel);
        ctx.registry.insert(id, socket);
        ConnGuard { ctx, id }
    }
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.ctx.registry.remove(self.id);
        self.ctx.stats.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts a running connection thread.
pub(crate) struct ThreadGuard(Arc<ServerStats>);

impl ThreadGuard {
    pub(crate) fn new(stats: &Arc<ServerStats>) -> Self {
        stats.threads.fetch_add(1, Ordering::AcqRel);
        ThreadGuard(Arc::clone(stats))
    }
}

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        self.0.threads.fetch_sub(1, Ordering::AcqRel);
    }
}
