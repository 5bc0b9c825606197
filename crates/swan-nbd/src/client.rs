//! An NBD client over TCP or a unix socket: the fixed-newstyle handshake with `NBD_OPT_GO`
//! (falling back to `NBD_OPT_EXPORT_NAME` on a server without it), then READ, WRITE, FLUSH
//! and DISC with simple replies, several requests in flight, matched by cookie.
//!
//! Unlike the rest of this crate, this module does I/O: it owns a socket. It uses the
//! crate's codec for every message, so client and server agree on the wire by construction.
//! Timing is the caller's business; the only clock here is the socket's timeout.
//!
//! Pipelining: [`Client::split`] gives a [`Submitter`] (send requests) and a
//! [`Completions`] (receive replies) that may live on two threads, so a large write never
//! waits behind a reply nobody reads.

use crate::codec::{decode_option_reply, decode_simple_reply, Command, Errno, InfoRequest, OptionHeader, Request};
use crate::consts::{
    client_flags, cmd_flags, handshake_flags, info, magic, opt, rep, tflags, DEFAULT_MAX_PAYLOAD, EXPORT_NAME_ZEROES,
    GREETING_LEN, MAX_STRING_LEN, NBD_PORT, OPTION_REPLY_HEADER_LEN, SIMPLE_REPLY_LEN,
};
use crate::stream::Stream;
use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest option reply the client accepts (export names and messages are ≤ 4 KiB).
const MAX_OPTION_REPLY: u32 = 64 * 1024;

/// Where an export is: `nbd://host[:port][/name]` or `nbd+unix:///[name]?socket=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NbdUri {
    Tcp { host: String, port: u16, name: String },
    Unix { socket: PathBuf, name: String },
}

impl NbdUri {
    pub fn export_name(&self) -> &str {
        match self {
            NbdUri::Tcp { name, .. } | NbdUri::Unix { name, .. } => name,
        }
    }
}

impl fmt::Display for NbdUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NbdUri::Tcp { host, port, name } if host.contains(':') => write!(f, "nbd://[{host}]:{port}/{name}"),
            NbdUri::Tcp { host, port, name } => write!(f, "nbd://{host}:{port}/{name}"),
            NbdUri::Unix { socket, name } => write!(f, "nbd+unix:///{name}?socket={}", socket.display()),
        }
    }
}

/// `%XX` escapes decoded (URIs carry export names and paths that way).
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl FromStr for NbdUri {
    type Err = ClientError;

    fn from_str(uri: &str) -> Result<Self, ClientError> {
        let bad = |why: &str| ClientError::Uri { uri: uri.to_string(), why: why.to_string() };
        let (scheme, rest) = uri
            .split_once("://")
            .ok_or_else(|| bad("expected nbd://HOST[:PORT][/EXPORT] or nbd+unix:///[EXPORT]?socket=PATH"))?;
        let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let name = percent_decode(path).ok_or_else(|| bad("the export name has a bad %-escape"))?;
        if name.len() > MAX_STRING_LEN {
            return Err(bad("the export name is longer than 4096 bytes"));
        }
        match scheme {
            "nbd" => {
                if !query.is_empty() {
                    return Err(bad("nbd:// takes no query (a unix socket is nbd+unix:///EXPORT?socket=PATH)"));
                }
                let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
                    let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '[' in the host"))?;
                    (h, after.strip_prefix(':'))
                } else {
                    match authority.rsplit_once(':') {
                        Some((h, p)) => (h, Some(p)),
                        None => (authority, None),
                    }
                };
                if host.is_empty() {
                    return Err(bad("no host"));
                }
                let port = match port {
                    None => NBD_PORT,
                    Some(p) => p.parse().map_err(|_| bad("the port must be a number from 1 to 65535"))?,
                };
                if port == 0 {
                    return Err(bad("the port must be a number from 1 to 65535"));
                }
                Ok(NbdUri::Tcp { host: host.to_string(), port, name })
            }
            "nbd+unix" => {
                if !authority.is_empty() {
                    return Err(bad("nbd+unix:// takes no host: write nbd+unix:///EXPORT?socket=PATH"));
                }
                let socket = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("socket="))
                    .ok_or_else(|| bad("nbd+unix:// needs ?socket=PATH"))?;
                let socket = percent_decode(socket).ok_or_else(|| bad("the socket path has a bad %-escape"))?;
                if socket.is_empty() {
                    return Err(bad("the socket path is empty"));
                }
                Ok(NbdUri::Unix { socket: socket.into(), name })
            }
            "nbds" | "nbds+unix" => Err(bad("TLS (nbds://) is not supported by this client")),
            _ => Err(bad("unknown scheme: expected nbd:// or nbd+unix://")),
        }
    }
}

/// Why the client failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad NBD URI '{uri}': {why}")]
    Uri { uri: String, why: String },
    #[error("cannot connect to {target}: {source}")]
    Connect { target: String, source: io::Error },
    #[error("{what}: {source}")]
    Io { what: String, source: io::Error },
    #[error("the server closed the connection while {0}")]
    Closed(String),
    #[error("no reply from the server for {0:?} while {1}")]
    Timeout(Duration, String),
    #[error("NBD protocol error: {0}")]
    Protocol(String),
    #[error("the server refused export '{name}': {reason}{}", if .message.is_empty() { String::new() } else { format!(" ({})", .message) })]
    Refused { name: String, reason: String, message: String },
    #[error("{0}")]
    Request(String),
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ClientError {
    let what = what.into();
    move |source| match source.kind() {
        io::ErrorKind::UnexpectedEof => ClientError::Closed(what),
        _ => ClientError::Io { what, source },
    }
}

/// What the server said about the export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Export {
    pub name: String,
    pub size: u64,
    /// Transmission flags (`consts::tflags`).
    pub flags: u16,
    /// Block size constraints (1 / 4096 / 32 MiB when the server states none).
    pub min_block: u32,
    pub preferred_block: u32,
    pub max_block: u32,
}

impl Export {
    pub fn read_only(&self) -> bool {
        self.flags & tflags::READ_ONLY != 0
    }

    pub fn can_flush(&self) -> bool {
        self.flags & tflags::SEND_FLUSH != 0
    }

    pub fn can_fua(&self) -> bool {
        self.flags & tflags::SEND_FUA != 0
    }
}

/// A connected client in the transmission phase.
#[derive(Debug)]
pub struct Client {
    stream: Stream,
    export: Export,
    timeout: Duration,
}

/// The default timeout of [`Client::connect`]: connecting, and any wait for the server while
/// a request is outstanding.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

impl Client {
    /// Connects to `uri` and negotiates its export.
    pub fn connect(uri: &NbdUri) -> Result<Client, ClientError> {
        Self::connect_timeout(uri, DEFAULT_TIMEOUT)
    }

    /// Like [`connect`](Self::connect), giving up on a silent server after `timeout`.
    pub fn connect_timeout(uri: &NbdUri, timeout: Duration) -> Result<Client, ClientError> {
        let target = uri.to_string();
        let conn = |source| ClientError::Connect { target: target.clone(), source };
        let stream = match uri {
            NbdUri::Tcp { host, port, .. } => {
                let addrs: Vec<_> = (host.as_str(), *port).to_socket_addrs().map_err(conn)?.collect();
                let mut last = io::Error::new(io::ErrorKind::NotFound, "the host name has no address");
                let mut found = None;
                for a in addrs {
                    match TcpStream::connect_timeout(&a, timeout) {
                        Ok(s) => {
                            found = Some(s);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let s = found.ok_or_else(|| conn(last))?;
                // Requests are small and latency is what a replay measures.
                s.set_nodelay(true).map_err(conn)?;
                Stream::Tcp(s)
            }
            NbdUri::Unix { socket, .. } => Stream::Unix(UnixStream::connect(socket).map_err(conn)?),
        };
        stream.set_read_timeout(Some(timeout)).map_err(conn)?;
        stream.set_write_timeout(Some(timeout)).map_err(conn)?;
        let mut c = Client { stream, export: Export::default_for(uri.export_name()), timeout };
        c.handshake(uri.export_name()).map_err(|e| match e {
            ClientError::Io { source, what } if is_timeout(&source) => ClientError::Timeout(timeout, what),
            e => e,
        })?;
        Ok(c)
    }

    pub fn export(&self) -> &Export {
        &self.export
    }

    fn read_exact(&mut self, buf: &mut [u8], what: &str) -> Result<(), ClientError> {
        self.stream.read_exact(buf).map_err(io_err(what))
    }

    fn handshake(&mut self, name: &str) -> Result<(), ClientError> {
        let mut greeting = [0u8; GREETING_LEN];
        self.read_exact(&mut greeting, "reading the server's greeting")?;
        let nbdmagic = u64::from_be_bytes(greeting[0..8].try_into().expect("8 bytes"));
        let second = u64::from_be_bytes(greeting[8..16].try_into().expect("8 bytes"));
        if nbdmagic != magic::NBDMAGIC {
            return Err(ClientError::Protocol("not an NBD server (no NBDMAGIC in its greeting)".into()));
        }
        if second != magic::IHAVEOPT {
            return Err(ClientError::Protocol(
                "the server speaks the old-style handshake, which is not supported".into(),
            ));
        }
        let hflags = u16::from_be_bytes([greeting[16], greeting[17]]);
        if hflags & handshake_flags::FIXED_NEWSTYLE == 0 {
            return Err(ClientError::Protocol("the server does not offer the fixed-newstyle handshake".into()));
        }
        let no_zeroes = hflags & handshake_flags::NO_ZEROES != 0;
        let cflags = client_flags::FIXED_NEWSTYLE | if no_zeroes { client_flags::NO_ZEROES } else { 0 };
        let mut out = cflags.to_be_bytes().to_vec();
        let go = InfoRequest { name: name.to_string(), requests: vec![info::BLOCK_SIZE] }.encode();
        out.extend_from_slice(&OptionHeader { option: opt::GO, length: go.len() as u32 }.encode());
        out.extend_from_slice(&go);
        self.stream.write_all(&out).map_err(io_err("sending NBD_OPT_GO"))?;
        let mut have_export = false;
        loop {
            let reply = self.option_reply()?;
            if reply.option != opt::GO {
                return Err(ClientError::Protocol(format!("reply to option {} while waiting for GO", reply.option)));
            }
            match reply.reply_type {
                rep::ACK if have_export => return Ok(()),
                rep::ACK => return Err(ClientError::Protocol("GO acknowledged without the export's size".into())),
                rep::INFO => have_export |= self.take_info(&reply.data)?,
                rep::ERR_UNSUP => return self.export_name_fallback(name, no_zeroes),
                t if t & rep::ERR_BIT != 0 => {
                    return Err(ClientError::Refused {
                        name: name.to_string(),
                        reason: rep_error_name(t),
                        message: String::from_utf8_lossy(&reply.data).into_owned(),
                    })
                }
                t => return Err(ClientError::Protocol(format!("unexpected option reply type {t:#x} to GO"))),
            }
        }
    }

    fn option_reply(&mut self) -> Result<crate::codec::OptionReply, ClientError> {
        let mut head = [0u8; OPTION_REPLY_HEADER_LEN];
        self.read_exact(&mut head, "reading an option reply")?;
        let len = u32::from_be_bytes(head[16..20].try_into().expect("4 bytes"));
        if len > MAX_OPTION_REPLY {
            return Err(ClientError::Protocol(format!("option reply of {len} bytes")));
        }
        let mut whole = head.to_vec();
        whole.resize(OPTION_REPLY_HEADER_LEN + len as usize, 0);
        self.read_exact(&mut whole[OPTION_REPLY_HEADER_LEN..], "reading an option reply")?;
        match decode_option_reply(&whole, MAX_OPTION_REPLY) {
            Ok(Some((r, _))) => Ok(r),
            Ok(None) => Err(ClientError::Protocol("short option reply".into())),
            Err(e) => Err(ClientError::Protocol(e.to_string())),
        }
    }

    /// Takes one `NBD_REP_INFO`; returns whether it was the export's size and flags.
    fn take_info(&mut self, data: &[u8]) -> Result<bool, ClientError> {
        let bad = |what: &str| ClientError::Protocol(format!("malformed NBD_REP_INFO ({what})"));
        if data.len() < 2 {
            return Err(bad("no type"));
        }
        match u16::from_be_bytes([data[0], data[1]]) {
            info::EXPORT => {
                if data.len() != 12 {
                    return Err(bad("NBD_INFO_EXPORT is not 12 bytes"));
                }
                self.export.size = u64::from_be_bytes(data[2..10].try_into().expect("8 bytes"));
                self.export.flags = u16::from_be_bytes([data[10], data[11]]);
                Ok(true)
            }
            info::BLOCK_SIZE => {
                if data.len() != 14 {
                    return Err(bad("NBD_INFO_BLOCK_SIZE is not 14 bytes"));
                }
                let v = |at: usize| u32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes"));
                (self.export.min_block, self.export.preferred_block, self.export.max_block) = (v(2), v(6), v(10));
                Ok(false)
            }
            // Name, description and types added later are of no use here.
            _ => Ok(false),
        }
    }

    /// `NBD_OPT_EXPORT_NAME`, for servers that do not know GO.
    fn export_name_fallback(&mut self, name: &str, no_zeroes: bool) -> Result<(), ClientError> {
        let mut out = OptionHeader { option: opt::EXPORT_NAME, length: name.len() as u32 }.encode().to_vec();
        out.extend_from_slice(name.as_bytes());
        self.stream.write_all(&out).map_err(io_err("sending NBD_OPT_EXPORT_NAME"))?;
        let mut reply = vec![0u8; 10 + if no_zeroes { 0 } else { EXPORT_NAME_ZEROES }];
        // A server that refuses the name closes the connection.
        self.stream.read_exact(&mut reply).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => ClientError::Refused {
                name: name.to_string(),
                reason: "the server closed the connection after NBD_OPT_EXPORT_NAME".into(),
                message: String::new(),
            },
            _ => io_err("reading the reply to NBD_OPT_EXPORT_NAME")(e),
        })?;
        self.export.size = u64::from_be_bytes(reply[0..8].try_into().expect("8 bytes"));
        self.export.flags = u16::from_be_bytes([reply[8], reply[9]]);
        Ok(())
    }

    /// Splits the connection for pipelining: requests sent through the [`Submitter`] are
    /// answered through the [`Completions`], in whatever order the server replies.
    pub fn split(self) -> Result<(Submitter, Completions), ClientError> {
        let reader = self.stream.try_clone().map_err(io_err("cloning the socket"))?;
        // The reader polls so an idle connection (nothing in flight) is not a timeout.
        reader
            .set_read_timeout(Some(self.timeout.min(Duration::from_millis(200))))
            .map_err(io_err("setting a timeout"))?;
        let inflight = Arc::new(Mutex::new(HashMap::new()));
        let sub = Submitter {
            stream: self.stream,
            export: self.export.clone(),
            inflight: Arc::clone(&inflight),
            next_cookie: 1,
            buf: Vec::new(),
            timeout: self.timeout,
        };
        let comp = Completions { stream: reader, inflight, timeout: self.timeout, header: [0; SIMPLE_REPLY_LEN] };
        Ok((sub, comp))
    }
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

impl Export {
    fn default_for(name: &str) -> Export {
        Export {
            name: name.to_string(),
            size: 0,
            flags: 0,
            min_block: 1,
            preferred_block: 4096,
            max_block: DEFAULT_MAX_PAYLOAD,
        }
    }
}

fn rep_error_name(t: u32) -> String {
    match t {
        rep::ERR_UNSUP => "NBD_REP_ERR_UNSUP".into(),
        rep::ERR_POLICY => "NBD_REP_ERR_POLICY (forbidden by the server's policy)".into(),
        rep::ERR_INVALID => "NBD_REP_ERR_INVALID".into(),
        rep::ERR_PLATFORM => "NBD_REP_ERR_PLATFORM".into(),
        rep::ERR_TLS_REQD => "NBD_REP_ERR_TLS_REQD (the server requires TLS)".into(),
        rep::ERR_UNKNOWN => "NBD_REP_ERR_UNKNOWN (no such export)".into(),
        rep::ERR_SHUTDOWN => "NBD_REP_ERR_SHUTDOWN (the server is shutting down)".into(),
        rep::ERR_BLOCK_SIZE_REQD => "NBD_REP_ERR_BLOCK_SIZE_REQD".into(),
        t => format!("error {t:#x}"),
    }
}

/// The kind of a request in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Flush,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    op: Op,
    offset: u64,
    len: u32,
}

/// The sending half of a split connection.
#[derive(Debug)]
pub struct Submitter {
    stream: Stream,
    export: Export,
    inflight: Arc<Mutex<HashMap<u64, Pending>>>,
    next_cookie: u64,
    buf: Vec<u8>,
    timeout: Duration,
}

impl Submitter {
    pub fn export(&self) -> &Export {
        &self.export
    }

    /// Requests sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.inflight.lock().expect("in-flight table").len()
    }

    fn check_range(&self, what: &str, offset: u64, len: u32) -> Result<(), ClientError> {
        let e = &self.export;
        let end = offset.checked_add(u64::from(len));
        if end.is_none_or(|end| end > e.size) {
            return Err(ClientError::Request(format!(
                "{what} of {len} bytes at {offset} runs past the end of the {}-byte export",
                e.size
            )));
        }
        if len == 0 || len > e.max_block {
            return Err(ClientError::Request(format!(
                "{what} of {len} bytes: the export takes 1 to {} bytes per request",
                e.max_block
            )));
        }
        if offset % u64::from(e.min_block) != 0 || len % e.min_block != 0 {
            return Err(ClientError::Request(format!(
                "{what} of {len} bytes at {offset} is not aligned to the export's {}-byte blocks",
                e.min_block
            )));
        }
        Ok(())
    }

    fn send(
        &mut self,
        op: Op,
        kind: Command,
        flags: u16,
        offset: u64,
        len: u32,
        data: &[u8],
    ) -> Result<u64, ClientError> {
        let cookie = self.next_cookie;
        self.next_cookie += 1;
        let header = Request { flags, kind, cookie, offset, length: len }.encode();
        self.buf.clear();
        self.buf.extend_from_slice(&header);
        self.buf.extend_from_slice(data);
        // Registered before sending: the reply may come back before write_all returns.
        self.inflight.lock().expect("in-flight table").insert(cookie, Pending { op, offset, len });
        let timeout = self.timeout;
        self.stream.write_all(&self.buf).map_err(|e| {
            if is_timeout(&e) {
                ClientError::Timeout(timeout, format!("sending request {cookie} (the server reads nothing)"))
            } else {
                io_err(format!("sending request {cookie}"))(e)
            }
        })?;
        Ok(cookie)
    }

    /// Sends a READ of `len` bytes at `offset`; returns its cookie.
    pub fn read(&mut self, offset: u64, len: u32) -> Result<u64, ClientError> {
        self.check_range("read", offset, len)?;
        self.send(Op::Read, Command::Read, 0, offset, len, &[])
    }

    /// Sends a WRITE of `data` at `offset` (FUA if asked and offered); returns its cookie.
    pub fn write(&mut self, offset: u64, data: &[u8], fua: bool) -> Result<u64, ClientError> {
        if self.export.read_only() {
            return Err(ClientError::Request("the export is read-only".into()));
        }
        let len = u32::try_from(data.len()).map_err(|_| ClientError::Request("write over 4 GiB".into()))?;
        self.check_range("write", offset, len)?;
        let flags = if fua && self.export.can_fua() { cmd_flags::FUA } else { 0 };
        self.send(Op::Write, Command::Write, flags, offset, len, data)
    }

    /// Sends a FLUSH; returns its cookie.
    pub fn flush(&mut self) -> Result<u64, ClientError> {
        if !self.export.can_flush() {
            return Err(ClientError::Request("the server does not offer FLUSH".into()));
        }
        self.send(Op::Flush, Command::Flush, 0, 0, 0, &[])
    }

    /// Sends DISC (after which the server answers nothing more) and closes the socket.
    pub fn disconnect(mut self) -> Result<(), ClientError> {
        let header = Request { flags: 0, kind: Command::Disc, cookie: 0, offset: 0, length: 0 }.encode();
        self.stream.write_all(&header).map_err(io_err("sending NBD_CMD_DISC"))?;
        let _ = self.stream.shutdown(Shutdown::Both);
        Ok(())
    }
}

/// One answered request.
#[derive(Debug)]
pub struct Completion {
    pub cookie: u64,
    pub op: Op,
    pub offset: u64,
    pub len: u32,
    /// The server's verdict: an error names the request and the errno.
    pub result: Result<(), ClientError>,
    /// A successful read's data (empty otherwise).
    pub data: Vec<u8>,
}

/// The receiving half of a split connection.
#[derive(Debug)]
pub struct Completions {
    stream: Stream,
    inflight: Arc<Mutex<HashMap<u64, Pending>>>,
    timeout: Duration,
    header: [u8; SIMPLE_REPLY_LEN],
}

impl Completions {
    fn outstanding(&self) -> bool {
        !self.inflight.lock().expect("in-flight table").is_empty()
    }

    /// Fills `buf`, waiting as long as needed while nothing is in flight, and at most the
    /// timeout without progress while something is.
    fn fill(&mut self, mut at: usize, buf_len: usize, data: Option<&mut Vec<u8>>) -> Result<(), ClientError> {
        let mut last = Instant::now();
        let mut data = data;
        while at < buf_len {
            let r = match data.as_deref_mut() {
                Some(d) => self.stream.read(&mut d[at..]),
                None => self.stream.read(&mut self.header[at..]),
            };
            match r {
                Ok(0) => {
                    return Err(ClientError::Closed(if self.outstanding() {
                        "requests were in flight".into()
                    } else {
                        "waiting for replies".into()
                    }))
                }
                Ok(n) => {
                    at += n;
                    last = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(&e) => {
                    if at == 0 && data.is_none() && !self.outstanding() {
                        last = Instant::now();
                    } else if last.elapsed() >= self.timeout {
                        return Err(ClientError::Timeout(self.timeout, "waiting for a reply".into()));
                    }
                }
                Err(e) => return Err(io_err("reading a reply")(e)),
            }
        }
        Ok(())
    }

    /// The next reply (blocks). A protocol violation or a lost connection is an error; a
    /// request the server failed is a [`Completion`] with an `Err` result.
    pub fn wait(&mut self) -> Result<Completion, ClientError> {
        self.fill(0, SIMPLE_REPLY_LEN, None)?;
        let m = u32::from_be_bytes(self.header[0..4].try_into().expect("4 bytes"));
        if m == magic::STRUCTURED_REPLY {
            return Err(ClientError::Protocol("structured reply, which this client did not ask for".into()));
        }
        let reply = match decode_simple_reply(&self.header) {
            Ok(Some((r, _))) => r,
            Ok(None) => unreachable!("a whole header was read"),
            Err(e) => return Err(ClientError::Protocol(e.to_string())),
        };
        let pending = self.inflight.lock().expect("in-flight table").remove(&reply.cookie).ok_or_else(|| {
            ClientError::Protocol(format!("reply for cookie {}, which is not in flight", reply.cookie))
        })?;
        let Pending { op, offset, len } = pending;
        let mut data = Vec::new();
        let result = if reply.error == 0 {
            if op == Op::Read {
                data = vec![0u8; len as usize];
                self.fill(0, len as usize, Some(&mut data))?;
            }
            Ok(())
        } else {
            let errno = Errno::from_code(reply.error)
                .map_or_else(|| format!("error {} (unknown to NBD)", reply.error), |e| e.to_string());
            Err(ClientError::Request(format!("{op:?} of {len} bytes at {offset} failed on the server: {errno}")))
        };
        Ok(Completion { cookie: reply.cookie, op, offset, len, result, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn uris() {
        let tcp = |h: &str, p, n: &str| NbdUri::Tcp { host: h.into(), port: p, name: n.into() };
        assert_eq!("nbd://127.0.0.1:10810/swan".parse::<NbdUri>().unwrap(), tcp("127.0.0.1", 10810, "swan"));
        assert_eq!("nbd://localhost".parse::<NbdUri>().unwrap(), tcp("localhost", 10809, ""));
        assert_eq!("nbd://[::1]:99/a%20b".parse::<NbdUri>().unwrap(), tcp("::1", 99, "a b"));
        assert_eq!(
            "nbd+unix:///swan?socket=/tmp/s.sock".parse::<NbdUri>().unwrap(),
            NbdUri::Unix { socket: "/tmp/s.sock".into(), name: "swan".into() }
        );
        assert_eq!(
            "nbd+unix:///?socket=/tmp/s.sock".parse::<NbdUri>().unwrap(),
            NbdUri::Unix { socket: "/tmp/s.sock".into(), name: String::new() }
        );
        for u in ["nbd://h:1/x", "nbd://[::1]:2/", "nbd+unix:///e?socket=/p"] {
            assert_eq!(u.parse::<NbdUri>().unwrap().to_string(), u);
        }
        let err = |u: &str| u.parse::<NbdUri>().unwrap_err().to_string();
        assert!(err("localhost:10809").contains("expected nbd://HOST"));
        assert!(err("nbd://h:0").contains("port must be"));
        assert!(err("nbd://h:x").contains("port must be"));
        assert!(err("nbd://:1").contains("no host"));
        assert!(err("nbd+unix:///x").contains("needs ?socket=PATH"));
        assert!(err("nbd+unix://host/x?socket=/s").contains("takes no host"));
        assert!(err("nbds://h").contains("TLS"));
        assert!(err("http://h").contains("unknown scheme"));
        assert!(err("nbd://h/%zz").contains("%-escape"));
    }

    /// A listener that answers every connection with `bytes` then closes.
    fn fake_server(bytes: Vec<u8>) -> NbdUri {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((mut s, _)) = l.accept() {
                let _ = s.write_all(&bytes);
                // Nothing more from this server: the client sees the end of the stream.
                let _ = s.shutdown(Shutdown::Write);
                let mut sink = [0u8; 256];
                while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
            }
        });
        NbdUri::Tcp { host: "127.0.0.1".into(), port, name: "x".into() }
    }

    #[test]
    fn clear_errors_from_bad_servers() {
        let e = Client::connect(&fake_server(b"HTTP/1.1 400 Bad Request\r\n\r\n".to_vec())).unwrap_err();
        assert_eq!(e.to_string(), "NBD protocol error: not an NBD server (no NBDMAGIC in its greeting)");
        let e = Client::connect(&fake_server(b"NBD".to_vec())).unwrap_err();
        assert_eq!(e.to_string(), "the server closed the connection while reading the server's greeting");
        let mut old = magic::NBDMAGIC.to_be_bytes().to_vec();
        old.extend_from_slice(&0x0000_4202_8186_1253u64.to_be_bytes());
        old.extend_from_slice(&[0, 0]);
        let e = Client::connect(&fake_server(old)).unwrap_err();
        assert!(e.to_string().contains("old-style handshake"), "{e}");
        // A fixed-newstyle server refusing the export.
        let mut refuse = crate::codec::encode_greeting(handshake_flags::ALL).to_vec();
        crate::codec::encode_rep_error(&mut refuse, opt::GO, rep::ERR_UNKNOWN, "no export 'x' here").unwrap();
        let e = Client::connect(&fake_server(refuse)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server refused export 'x': NBD_REP_ERR_UNKNOWN (no such export) (no export 'x' here)"
        );
        // Nobody listening.
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let e = Client::connect(&NbdUri::Tcp { host: "127.0.0.1".into(), port, name: String::new() }).unwrap_err();
        assert!(e.to_string().starts_with(&format!("cannot connect to nbd://127.0.0.1:{port}/: ")), "{e}");
    }
}
