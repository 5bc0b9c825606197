//! A hand-rolled NBD client for the hostile-client and TLS tests: it speaks the protocol
//! byte by byte (independently of swan's own codec, so the two cannot share a bug) over any
//! stream, plaintext TCP or a rustls session, and can misbehave on purpose.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use swan_testkit::rng::xorshift64;

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
pub const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_STARTTLS: u32 = 5;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;
pub const OPT_STRUCTURED_REPLY: u32 = 8;
pub const OPT_SET_META_CONTEXT: u32 = 10;
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
pub const REP_ERR_POLICY: u32 = (1 << 31) + 2;
pub const REP_ERR_INVALID: u32 = (1 << 31) + 3;
pub const REP_ERR_TLS_REQD: u32 = (1 << 31) + 5;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) + 6;
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_BLOCK_SIZE: u16 = 3;
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_CACHE: u16 = 5;
pub const CMD_WRITE_ZEROES: u16 = 6;
pub const CMD_BLOCK_STATUS: u16 = 7;
pub const FLAG_FUA: u16 = 1 << 0;
pub const FLAG_NO_HOLE: u16 = 1 << 1;
pub const FLAG_DF: u16 = 1 << 2;
pub const EPERM: u32 = 1;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;
pub const MAX_PAYLOAD: u32 = 32 << 20;

/// Any single read or write of the client.
pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

pub trait Wire: Read + Write {}
impl<T: Read + Write> Wire for T {}

/// A TCP connection with bounded reads and writes.
pub fn connect(addr: &str) -> TcpStream {
    let sa: SocketAddr = addr.parse().expect("server address");
    let s = TcpStream::connect_timeout(&sa, Duration::from_secs(10)).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(IO_TIMEOUT)).expect("read timeout");
    s.set_write_timeout(Some(IO_TIMEOUT)).expect("write timeout");
    s.set_nodelay(true).expect("nodelay");
    s
}

pub fn read_n<const N: usize>(s: &mut impl Read) -> [u8; N] {
    let mut b = [0u8; N];
    s.read_exact(&mut b).unwrap_or_else(|e| panic!("reading {N} bytes from the server: {e}"));
    b
}

pub fn read_u16(s: &mut impl Read) -> u16 {
    u16::from_be_bytes(read_n(s))
}

pub fn read_u32(s: &mut impl Read) -> u32 {
    u32::from_be_bytes(read_n(s))
}

pub fn read_u64(s: &mut impl Read) -> u64 {
    u64::from_be_bytes(read_n(s))
}

/// Reads the greeting (fixed newstyle required) and returns its handshake flags.
pub fn greeting(s: &mut impl Read) -> u16 {
    assert_eq!(read_u64(s), NBDMAGIC, "greeting magic");
    assert_eq!(read_u64(s), IHAVEOPT, "not newstyle");
    let flags = read_u16(s);
    assert!(flags & 1 != 0, "no NBD_FLAG_FIXED_NEWSTYLE: {flags:#x}");
    flags
}

/// Connects, reads the greeting and sends fixed-newstyle + no-zeroes client flags.
pub fn greeted(addr: &str) -> TcpStream {
    let mut s = connect(addr);
    let flags = greeting(&mut s);
    s.write_all(&u32::from(flags & 3).to_be_bytes()).expect("client flags");
    s
}

/// The bytes of one option request.
pub fn opt_bytes(option: u32, data: &[u8]) -> Vec<u8> {
    let mut v = IHAVEOPT.to_be_bytes().to_vec();
    v.extend(option.to_be_bytes());
    v.extend((data.len() as u32).to_be_bytes());
    v.extend(data);
    v
}

/// `NBD_OPT_INFO`/`GO` data; `name_len` is the length field as sent, whatever the name.
pub fn info_data(name_len: u32, name: &[u8], requests: &[u16]) -> Vec<u8> {
    let mut d = name_len.to_be_bytes().to_vec();
    d.extend(name);
    d.extend((requests.len() as u16).to_be_bytes());
    for r in requests {
        d.extend(r.to_be_bytes());
    }
    d
}

pub fn send_opt(s: &mut impl Write, option: u32, data: &[u8]) {
    s.write_all(&opt_bytes(option, data)).expect("send an option");
}

/// One option reply: (option, reply type, data).
pub fn opt_reply(s: &mut impl Read) -> (u32, u32, Vec<u8>) {
    assert_eq!(read_u64(s), OPTION_REPLY_MAGIC, "option reply magic");
    let option = read_u32(s);
    let kind = read_u32(s);
    let len = read_u32(s) as usize;
    assert!(len <= 1 << 20, "option reply of {len} bytes");
    let mut data = vec![0u8; len];
    s.read_exact(&mut data).expect("option reply data");
    (option, kind, data)
}

/// Sends one option and returns the type of its single reply (an error or a lone ACK).
pub fn opt_single(s: &mut impl Wire, option: u32, data: &[u8]) -> u32 {
    send_opt(s, option, data);
    let (o, kind, _) = opt_reply(s);
    assert_eq!(o, option, "reply to another option");
    kind
}

/// `NBD_OPT_GO` for `name`: `Ok((size, transmission flags))` after its ACK, or the error type.
pub fn go(s: &mut impl Wire, name: &str) -> Result<(u64, u16), u32> {
    go_info(s, name).map(|i| i.export)
}

/// What the server said of an export in its replies to `NBD_OPT_GO`.
#[derive(Clone, Copy, Debug)]
pub struct GoInfo {
    /// `NBD_INFO_EXPORT`: (size, transmission flags).
    pub export: (u64, u16),
    /// `NBD_INFO_BLOCK_SIZE`: (minimum, preferred, maximum), if the server sent it.
    pub block_sizes: Option<(u32, u32, u32)>,
}

/// As [`go`], with every `NBD_REP_INFO` the server sent unasked.
pub fn go_info(s: &mut impl Wire, name: &str) -> Result<GoInfo, u32> {
    send_opt(s, OPT_GO, &info_data(name.len() as u32, name.as_bytes(), &[]));
    let (mut export, mut block_sizes) = (None, None);
    loop {
        let (o, kind, data) = opt_reply(s);
        assert_eq!(o, OPT_GO, "reply to another option");
        match kind {
            REP_ACK => return Ok(GoInfo { export: export.expect("NBD_INFO_EXPORT before the ACK"), block_sizes }),
            REP_INFO if data.len() == 12 && data[..2] == INFO_EXPORT.to_be_bytes() => {
                let size = u64::from_be_bytes(data[2..10].try_into().expect("8 bytes"));
                export = Some((size, u16::from_be_bytes([data[10], data[11]])));
            }
            REP_INFO if data.len() == 14 && data[..2] == INFO_BLOCK_SIZE.to_be_bytes() => {
                let u = |i: usize| u32::from_be_bytes(data[i..i + 4].try_into().expect("4 bytes"));
                block_sizes = Some((u(2), u(6), u(10)));
            }
            REP_INFO => {}
            e if e & (1 << 31) != 0 => return Err(e),
            other => panic!("unexpected reply {other:#x} to NBD_OPT_GO"),
        }
    }
}

/// True if the server ends the connection (EOF or reset) within `limit`; what it sends
/// first is read and returned.
pub fn closed_by_server(s: &mut TcpStream, limit: Duration) -> Option<Vec<u8>> {
    s.set_read_timeout(Some(limit)).expect("read timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(got),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return Some(got),
            Err(_) => return None,
        }
    }
}

/// A client in the transmission phase.
pub struct Conn<S: Wire> {
    pub s: S,
    pub size: u64,
    pub tflags: u16,
    cookie: u64,
}

impl<S: Wire> Conn<S> {
    /// After a successful `go` on `s`.
    pub fn new(s: S, (size, tflags): (u64, u16)) -> Self {
        Conn { s, size, tflags, cookie: 0x7e57_0000_0000_0000 }
    }

    pub fn send(&mut self, flags: u16, kind: u16, offset: u64, len: u32, payload: &[u8]) -> u64 {
        self.cookie += 1;
        let mut h = Vec::with_capacity(28 + payload.len());
        h.extend(REQUEST_MAGIC.to_be_bytes());
        h.extend(flags.to_be_bytes());
        h.extend(kind.to_be_bytes());
        h.extend(self.cookie.to_be_bytes());
        h.extend(offset.to_be_bytes());
        h.extend(len.to_be_bytes());
        h.extend(payload);
        self.s.write_all(&h).expect("send a request");
        self.cookie
    }

    /// One simple reply header: (error, cookie). Any other magic fails the test.
    pub fn reply(&mut self) -> (u32, u64) {
        let magic = read_u32(&mut self.s);
        assert_eq!(magic, SIMPLE_REPLY_MAGIC, "not a simple reply: magic {magic:#010x}");
        (read_u32(&mut self.s), read_u64(&mut self.s))
    }

    /// A request without flags and its reply; a successful read's data is returned.
    pub fn call(&mut self, kind: u16, offset: u64, len: u32, payload: &[u8]) -> Result<Vec<u8>, u32> {
        self.request(rq(0, kind, offset, len), payload)
    }

    /// A request and its reply; a successful read's data is returned.
    pub fn request(&mut self, req: Req, payload: &[u8]) -> Result<Vec<u8>, u32> {
        let Req { flags, kind, offset, len } = req;
        let cookie = self.send(flags, kind, offset, len, payload);
        let (error, got) = self.reply();
        assert_eq!(got, cookie, "reply to another request");
        if error != 0 {
            return Err(error);
        }
        let mut data = vec![0u8; if kind == CMD_READ { len as usize } else { 0 }];
        self.s.read_exact(&mut data).expect("read reply data");
        Ok(data)
    }

    pub fn read(&mut self, offset: u64, len: u32) -> Vec<u8> {
        self.call(CMD_READ, offset, len, &[]).unwrap_or_else(|e| panic!("read {len} at {offset}: errno {e}"))
    }

    pub fn write(&mut self, offset: u64, data: &[u8]) {
        if let Err(e) = self.call(CMD_WRITE, offset, data.len() as u32, data) {
            panic!("write {} at {offset}: errno {e}", data.len());
        }
    }

    pub fn flush(&mut self) {
        if let Err(e) = self.call(CMD_FLUSH, 0, 0, &[]) {
            panic!("flush: errno {e}");
        }
    }

    /// A request the server must refuse with one of `allowed`, keeping the stream in step.
    pub fn refused(&mut self, what: &str, req: Req, payload: &[u8], allowed: &[u32]) {
        match self.request(req, payload) {
            Ok(_) => panic!("{what}: the server accepted it"),
            Err(e) => assert!(allowed.contains(&e), "{what}: errno {e}, expected one of {allowed:?}"),
        }
    }

    pub fn disconnect(mut self) {
        self.send(0, CMD_DISC, 0, 0, &[]);
        let _ = self.s.flush();
    }
}

impl Conn<TcpStream> {
    /// `NBD_CMD_DISC`, after which the server must close the connection.
    pub fn disconnect_and_wait(mut self) {
        self.send(0, CMD_DISC, 0, 0, &[]);
        assert!(
            closed_by_server(&mut self.s, Duration::from_secs(10)).is_some(),
            "server kept the connection after NBD_CMD_DISC"
        );
    }
}

/// One request header's fields but the magic and the cookie.
#[derive(Clone, Copy, Debug)]
pub struct Req {
    pub flags: u16,
    pub kind: u16,
    pub offset: u64,
    pub len: u32,
}

pub const fn rq(flags: u16, kind: u16, offset: u64, len: u32) -> Req {
    Req { flags, kind, offset, len }
}

/// A plaintext client in transmission on the default export.
pub fn open(addr: &str) -> Conn<TcpStream> {
    let mut s = greeted(addr);
    let export = go(&mut s, "").expect("NBD_OPT_GO on the default export");
    Conn::new(s, export)
}

/// Deterministic bytes.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len).map(|_| xorshift64(&mut x) as u8).collect()
}

// ------------------------------------------------------------------ TLS

/// A rustls client trusting only `ca` (PEM).
pub fn tls_client_config(ca: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(ca).expect("read the CA") {
        roots.add(c.expect("parse the CA")).expect("add the CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

/// A rustls client that trusts the CAs of a libnbd-style certificate directory
/// (`ca-cert.pem`) and presents its certificate (`client-cert.pem`, `client-key.pem`) to any
/// server that asks, whichever CAs the server names (GnuTLS would keep back one it knows the
/// server will not accept).
pub fn tls_client_auth_config(client_dir: &Path) -> Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(client_dir.join("ca-cert.pem")).expect("read the CAs") {
        roots.add(c.expect("parse a CA")).expect("add a CA");
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(client_dir.join("client-cert.pem"))
        .expect("read the client certificate")
        .collect::<Result<_, _>>()
        .expect("parse the client certificate");
    let key = PrivateKeyDer::from_pem_file(client_dir.join("client-key.pem")).expect("the client key");
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .expect("the client certificate and key");
    Arc::new(config)
}

pub type TlsStream = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Sends `NBD_OPT_STARTTLS` on `s` (after the client flags), expects its ACK, and completes
/// the TLS handshake as a client for "localhost".
pub fn starttls(mut s: TcpStream, config: &Arc<rustls::ClientConfig>) -> TlsStream {
    let kind = opt_single(&mut s, OPT_STARTTLS, &[]);
    assert_eq!(kind, REP_ACK, "NBD_OPT_STARTTLS refused: {kind:#x}");
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("server name");
    let conn = rustls::ClientConnection::new(Arc::clone(config), name).expect("TLS client");
    let mut tls = rustls::StreamOwned::new(conn, s);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock).expect("TLS handshake with the server");
    }
    tls
}
