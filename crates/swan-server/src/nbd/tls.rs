//! TLS for `NBD_OPT_STARTTLS`, with rustls (ring as its crypto provider).
//!
//! The connection code reads and writes a plain, blocking socket from two threads (reader
//! and writer), and a TLS session is one state machine that both directions go through. So
//! once the handshake acknowledges `NBD_OPT_STARTTLS`, the TCP socket is handed to a *pump*
//! thread that owns the TLS session and exchanges plaintext with the connection code over a
//! unix socket pair: the connection code keeps its two threads and its blocking reads with
//! timeouts, and never sees a byte that did not come through TLS.
//!
//! The pump ends, shutting the TCP socket down, when the connection code closes its end and
//! everything it wrote has been sent (or the client stopped reading for the send timeout),
//! when the TLS session fails, or when the client goes away; the connection code then sees
//! end-of-stream. Its memory is bounded: it reads TCP only while less than [`PLAIN_LIMIT`]
//! decrypted bytes wait for the connection code, and reads plaintext only once every TLS
//! record it made has been sent.

use std::io::{self, Cursor, Read, Write};
use std::net::Shutdown;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConnection;

use super::client_auth::{self, ClientAuth};
use super::error::{Causes, ConnError};
use super::stream::Stream;
use super::{Log, ServerError, ServerStats, ThreadGuard, STOP_POLL};

/// Decrypted bytes the pump holds for the connection code before it stops reading TCP.
const PLAIN_LIMIT: usize = 256 << 10;

/// One read from either side.
const CHUNK: usize = 64 << 10;

/// The server's TLS configuration from a PEM certificate chain (leaf first) and a PEM
/// private key (PKCS#8, PKCS#1 or SEC1). TLS 1.2 and 1.3 ("NBD implementations supporting
/// TLS MUST support TLS version 1.2"). Clients are asked for a certificate only with
/// `clients`, and must then present one it accepts.
pub fn load_config(
    cert: &Path,
    key: &Path,
    clients: Option<&ClientAuth>,
) -> Result<Arc<rustls::ServerConfig>, ServerError> {
    let path = || cert.to_path_buf();
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|source| ServerError::ReadCertificate { path: path(), source })?
        .collect::<Result<_, _>>()
        .map_err(|source| ServerError::ParseCertificate { path: path(), source })?;
    if chain.is_empty() {
        return Err(ServerError::NoCertificate { path: path() });
    }
    let key =
        PrivateKeyDer::from_pem_file(key).map_err(|source| ServerError::ReadKey { path: key.to_path_buf(), source })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(ServerError::TlsVersions)?;
    let builder = match clients {
        None => builder.with_no_client_auth(),
        Some(auth) => builder.with_client_cert_verifier(client_auth::verifier(auth, provider)?),
    };
    let config = builder.with_single_cert(chain, key).map_err(ServerError::CertificateAndKey)?;
    Ok(Arc::new(config))
}

/// Who the client proved to be in the TLS handshake: the common names of its certificate's
/// subject, in order (`None` without a certificate). Set once the TLS handshake is over and
/// before any byte it decrypts reaches the connection code, so that code finds it set as
/// soon as it reads anything.
pub(super) type Peer = Arc<OnceLock<Option<Vec<String>>>>;

/// Starts TLS on `tcp` (the `NBD_REP_ACK` to `NBD_OPT_STARTTLS` already sent): returns the
/// plaintext end the connection code goes on with, and where the client's identity will be.
/// `leftover` are bytes the client sent after its option, which are the beginning of the
/// TLS stream; `from` is the client's address, for the log.
#[allow(clippy::too_many_arguments)]
pub(super) fn start(
    config: &Arc<rustls::ServerConfig>,
    tcp: Stream,
    leftover: Vec<u8>,
    stats: &Arc<ServerStats>,
    send_timeout: Duration,
    log: Log,
    id: u64,
    from: String,
) -> Result<(Stream, Peer), ConnError> {
    let peer = Peer::default();
    let session = ServerConnection::new(Arc::clone(config)).map_err(ConnError::TlsStart)?;
    let (ours, theirs) = UnixStream::pair().map_err(ConnError::io("creating the TLS socket pair"))?;
    let counted = ThreadGuard::new(stats);
    let identity = Arc::clone(&peer);
    thread::Builder::new()
        .name(format!("nbd-tls-{id}"))
        .spawn(move || {
            let _counted = counted;
            let mut pump = Pump { session, tcp, plain: theirs, send_timeout, log, id, peer };
            match pump.run(&leftover) {
                Ok(()) => {}
                // Refused clients are logged even when not verbose: who was turned away
                // matters to whoever runs the server.
                Err(ConnError::Tls(e)) if client_auth::refusal(&e).is_some() => log.always(format_args!(
                    "connection {id} from {from}: refused in the TLS handshake: {}",
                    client_auth::refusal(&e).unwrap_or_default()
                )),
                Err(e) => log.say(format_args!("connection {id}: TLS: {}", Causes(&e))),
            }
            // The registry holds a clone of the TCP socket: shut it down rather than rely on
            // the drop of this one descriptor to end the connection.
            let _ = pump.tcp.shutdown(Shutdown::Both);
            let _ = pump.plain.shutdown(Shutdown::Both);
        })
        .map_err(ConnError::io("starting the TLS thread"))?;
    Ok((Stream::Unix(ours), identity))
}

struct Pump {
    session: ServerConnection,
    tcp: Stream,
    /// The pump's end of the pair; the connection code has the other.
    plain: UnixStream,
    send_timeout: Duration,
    log: Log,
    id: u64,
    /// The client's identity, set (and logged) once the TLS handshake is over.
    peer: Peer,
}

impl Pump {
    fn run(&mut self, leftover: &[u8]) -> Result<(), ConnError> {
        let nonblocking = ConnError::io("making the TLS sockets non-blocking");
        self.tcp.set_nonblocking(true).and_then(|()| self.plain.set_nonblocking(true)).map_err(nonblocking)?;
        // The budget is enforced by what the pump reads, not by rustls refusing writes.
        self.session.set_buffer_limit(None);
        let mut to_plain: Vec<u8> = Vec::new();
        let mut buf = vec![0u8; CHUNK];
        let (mut tcp_eof, mut plain_eof, mut plain_shut) = (false, false, false);

        // The client's first TLS bytes may have come with its NBD_OPT_STARTTLS.
        let mut early = Cursor::new(leftover);
        while (early.position() as usize) < leftover.len() {
            if self.session.read_tls(&mut early).map_err(ConnError::io("reading the client's first TLS records"))? == 0
            {
                break;
            }
            self.process(&mut to_plain, &mut tcp_eof)?;
        }

        let mut last_sent = Instant::now();
        loop {
            self.send_records(&mut last_sent)?;
            if !self.deliver(&mut to_plain) {
                // The connection code has gone: nothing left to deliver to.
                return Ok(());
            }
            if tcp_eof && to_plain.is_empty() && !plain_shut {
                // The client is done sending: the connection code sees end-of-stream.
                let _ = self.plain.shutdown(Shutdown::Write);
                plain_shut = true;
            }
            if plain_eof && !self.session.wants_write() {
                return Ok(());
            }
            if tcp_eof && self.session.is_handshaking() {
                return Err(ConnError::ClosedInTlsHandshake);
            }
            if self.session.wants_write() && last_sent.elapsed() > self.send_timeout {
                return Err(ConnError::ClientStalled(self.send_timeout));
            }

            let tcp_in = !tcp_eof && to_plain.len() < PLAIN_LIMIT;
            let tcp_out = self.session.wants_write();
            // Plaintext is taken only once every record made so far is on the socket, so what
            // the pump holds stays bounded. (During the TLS handshake the connection code
            // writes nothing: it waits for the options the handshake will decrypt.)
            let plain_in = !plain_eof && !self.session.wants_write();
            let plain_out = !to_plain.is_empty();
            let (tcp_ready, plain_ready) = wait(&self.tcp, tcp_in, tcp_out, &self.plain, plain_in, plain_out)
                .map_err(ConnError::io("polling the TLS sockets"))?;

            if tcp_in && tcp_ready {
                match self.session.read_tls(&mut self.tcp) {
                    Ok(0) => tcp_eof = true,
                    Ok(_) => self.process(&mut to_plain, &mut tcp_eof)?,
                    Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                    Err(e) if e.kind() == io::ErrorKind::ConnectionReset => tcp_eof = true,
                    Err(e) => return Err(ConnError::io("receiving TLS records")(e)),
                }
            }
            if plain_in && plain_ready {
                plain_eof = self.take_plain(&mut buf)?;
            }
        }
    }

    /// TLS records out, as far as the socket takes them now.
    fn send_records(&mut self, last_sent: &mut Instant) -> Result<(), ConnError> {
        while self.session.wants_write() {
            match self.session.write_tls(&mut self.tcp) {
                Ok(0) => return Err(ConnError::SocketAcceptsNothing),
                Ok(_) => *last_sent = Instant::now(),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ConnError::io("sending TLS records")(e)),
            }
        }
        Ok(())
    }

    /// Decrypted bytes to the connection code, as far as it takes them now. False once it
    /// has gone.
    fn deliver(&mut self, to_plain: &mut Vec<u8>) -> bool {
        while !to_plain.is_empty() {
            match self.plain.write(to_plain) {
                Ok(n) => {
                    to_plain.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Plaintext the connection code sent, into TLS records. True once it has closed its
    /// side (the client is then sent close_notify).
    fn take_plain(&mut self, buf: &mut [u8]) -> Result<bool, ConnError> {
        match self.plain.read(buf) {
            Ok(0) => {
                self.session.send_close_notify();
                Ok(true)
            }
            Ok(n) => {
                self.session
                    .writer()
                    .write_all(&buf[..n])
                    .map_err(ConnError::io("encrypting what the connection sends"))?;
                Ok(false)
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(false),
            Err(_) => {
                self.session.send_close_notify();
                Ok(true)
            }
        }
    }

    /// Processes received records and moves what they decrypt to `to_plain`. A TLS error
    /// ends the session after its alert has been given a chance to go out.
    fn process(&mut self, to_plain: &mut Vec<u8>, tcp_eof: &mut bool) -> Result<(), ConnError> {
        if let Err(e) = self.session.process_new_packets() {
            let _ = self.session.write_tls(&mut self.tcp);
            return Err(ConnError::Tls(e));
        }
        if self.peer.get().is_none() && !self.session.is_handshaking() {
            let cert = self.session.peer_certificates().and_then(|c| c.first());
            if let Some(cert) = cert {
                let id = self.id;
                self.log.say(format_args!("connection {id}: client certificate {}", client_auth::subject(cert)));
            }
            // Before the first decrypted byte is moved below: see [`Peer`].
            let _ = self.peer.set(cert.map(client_auth::common_names));
        }
        let mut chunk = [0u8; 16 << 10];
        loop {
            match self.session.reader().read(&mut chunk) {
                // close_notify: the client will send nothing more.
                Ok(0) => {
                    *tcp_eof = true;
                    return Ok(());
                }
                Ok(n) => to_plain.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // The peer closed without close_notify: treated as an end of stream.
                Err(_) => {
                    *tcp_eof = true;
                    return Ok(());
                }
            }
        }
    }
}

/// Polls the sockets for what is wanted of each, for at most [`STOP_POLL`] (so the send
/// timeout is checked); returns which are ready (errors and hang-ups count as ready, so the
/// next read or write reports them). A socket nothing is wanted of is left out of the poll:
/// its hang-up, reported whatever was asked, would otherwise wake the loop again and again.
fn wait(
    tcp: &Stream,
    tcp_in: bool,
    tcp_out: bool,
    plain: &UnixStream,
    plain_in: bool,
    plain_out: bool,
) -> io::Result<(bool, bool)> {
    let flags = |i: bool, o: bool| {
        let mut f = PollFlags::empty();
        if i {
            f |= PollFlags::IN;
        }
        if o {
            f |= PollFlags::OUT;
        }
        f
    };
    let (tcp_fd, plain_fd) = (tcp.as_fd(), plain.as_fd());
    let mut fds = Vec::with_capacity(2);
    if tcp_in || tcp_out {
        fds.push((true, PollFd::new(&tcp_fd, flags(tcp_in, tcp_out))));
    }
    if plain_in || plain_out {
        fds.push((false, PollFd::new(&plain_fd, flags(plain_in, plain_out))));
    }
    if fds.is_empty() {
        thread::sleep(STOP_POLL);
        return Ok((false, false));
    }
    let mut polled: Vec<PollFd<'_>> = fds.iter().map(|(_, f)| f.clone()).collect();
    let ts = Timespec { tv_sec: STOP_POLL.as_secs() as _, tv_nsec: STOP_POLL.subsec_nanos() as _ };
    match poll(&mut polled, Some(&ts)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok((false, false)),
        Err(e) => return Err(e.into()),
    }
    let mut ready = (false, false);
    for ((is_tcp, _), f) in fds.iter().zip(&polled) {
        if !f.revents().is_empty() {
            if *is_tcp {
                ready.0 = true;
            } else {
                ready.1 = true;
            }
        }
    }
    Ok(ready)
}
