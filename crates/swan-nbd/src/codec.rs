//! Byte-level encoders and decoders for the NBD handshake and transmission
//! phases. Decoders return `Ok(Some((value, consumed)))` when `buf` holds a
//! whole message, `Ok(None)` when more bytes are needed, and `Err` when the
//! bytes already present violate the protocol. No decoder allocates more than
//! the bytes it has been given.

use crate::consts::{
    client_flags, handshake_flags, info, magic, rep, EXPORT_NAME_ZEROES, GREETING_LEN, MAX_STRING_LEN,
    OPTION_HEADER_LEN, OPTION_REPLY_HEADER_LEN, REQUEST_HEADER_LEN, SIMPLE_REPLY_LEN,
};

/// A decode result: the value and how many bytes of the input it used, or
/// `None` when the input is a valid prefix that is still too short.
pub type Decoded<T> = Result<Option<(T, usize)>, DecodeError>;

/// A protocol violation found while decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A 64-bit magic did not match.
    #[error("bad magic {found:#018x}, expected {expected:#018x}")]
    BadMagic {
        /// The value the spec requires.
        expected: u64,
        /// The value received.
        found: u64,
    },
    /// The client set flags the server does not know or did not advertise.
    #[error("client flags {flags:#010x} include bits {unknown:#010x} the server does not accept")]
    UnknownClientFlags {
        /// The client's flags.
        flags: u32,
        /// The offending bits.
        unknown: u32,
    },
    /// An option's data length exceeds the configured maximum.
    #[error("option {option} data length {length} exceeds the maximum {max}")]
    OptionTooLong {
        /// Option code.
        option: u32,
        /// Length announced by the client.
        length: u32,
        /// Configured limit.
        max: u32,
    },
    /// An option payload's internal lengths are inconsistent with its size.
    #[error("malformed option payload: {0}")]
    MalformedOption(&'static str),
    /// A string is longer than the spec's 4096-byte limit.
    #[error("string of {0} bytes exceeds the 4096-byte limit")]
    StringTooLong(usize),
    /// A string is not UTF-8 or contains NUL.
    #[error("string is not NUL-free UTF-8")]
    BadString,
    /// The request magic did not match `NBD_REQUEST_MAGIC`.
    #[error("bad request magic {0:#010x}")]
    BadRequestMagic(u32),
}

/// An error while encoding (arguments the protocol cannot carry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// A string is longer than the spec's 4096-byte limit.
    #[error("string of {0} bytes exceeds the 4096-byte limit")]
    StringTooLong(usize),
    /// A string contains NUL.
    #[error("string contains NUL")]
    BadString,
    /// An error reply type without bit 31 set.
    #[error("reply type {0:#010x} is not an error type")]
    NotAnError(u32),
}

fn be_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn be_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// "a sequence of UTF-8 code points, which is not `NUL` terminated, MUST NOT
/// contain `NUL` characters, ... MUST be no longer than 4096 bytes."
fn decode_string(bytes: &[u8]) -> Result<String, DecodeError> {
    if bytes.len() > MAX_STRING_LEN {
        return Err(DecodeError::StringTooLong(bytes.len()));
    }
    if bytes.contains(&0) {
        return Err(DecodeError::BadString);
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::BadString)
}

fn check_string(s: &str) -> Result<(), EncodeError> {
    if s.len() > MAX_STRING_LEN {
        return Err(EncodeError::StringTooLong(s.len()));
    }
    if s.as_bytes().contains(&0) {
        return Err(EncodeError::BadString);
    }
    Ok(())
}

// ---------------------------------------------------------------- handshake

/// The server's newstyle greeting:
/// "S: 64 bits, `NBDMAGIC`; S: 64 bits, `IHAVEOPT`; S: 16 bits, handshake flags".
pub fn encode_greeting(handshake_flags: u16) -> [u8; GREETING_LEN] {
    let mut out = [0u8; GREETING_LEN];
    out[0..8].copy_from_slice(&magic::NBDMAGIC.to_be_bytes());
    out[8..16].copy_from_slice(&magic::IHAVEOPT.to_be_bytes());
    out[16..18].copy_from_slice(&handshake_flags.to_be_bytes());
    out
}

/// The client's 32-bit flags, after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClientFlags {
    /// `NBD_FLAG_C_FIXED_NEWSTYLE`.
    pub fixed_newstyle: bool,
    /// `NBD_FLAG_C_NO_ZEROES`.
    pub no_zeroes: bool,
}

impl ClientFlags {
    /// The wire value.
    pub fn bits(self) -> u32 {
        let mut b = 0;
        if self.fixed_newstyle {
            b |= client_flags::FIXED_NEWSTYLE;
        }
        if self.no_zeroes {
            b |= client_flags::NO_ZEROES;
        }
        b
    }
}

/// Decodes the client flags (4 bytes). "Clients MUST NOT set any other flags;
/// the server MUST drop the TCP connection if the client sets an unknown flag,
/// or a flag that does not match something advertised by the server."
/// `server_flags` is what the greeting advertised: `NBD_FLAG_C_NO_ZEROES`
/// "MUST NOT be set if the server did not set `NBD_FLAG_NO_ZEROES`".
pub fn decode_client_flags(buf: &[u8], server_flags: u16) -> Decoded<ClientFlags> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let flags = be_u32(buf, 0);
    let mut allowed = client_flags::FIXED_NEWSTYLE;
    if server_flags & handshake_flags::NO_ZEROES != 0 {
        allowed |= client_flags::NO_ZEROES;
    }
    let unknown = flags & !allowed;
    if unknown != 0 {
        return Err(DecodeError::UnknownClientFlags { flags, unknown });
    }
    let value = ClientFlags {
        fixed_newstyle: flags & client_flags::FIXED_NEWSTYLE != 0,
        no_zeroes: flags & client_flags::NO_ZEROES != 0,
    };
    Ok(Some((value, 4)))
}

/// The header of an option request:
/// "C: 64 bits, `IHAVEOPT`; C: 32 bits, option; C: 32 bits, length of option data".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionHeader {
    /// Option code (`consts::opt`).
    pub option: u32,
    /// Length of the option data that follows.
    pub length: u32,
}

impl OptionHeader {
    /// Encodes the header (a client's view; used in tests and tools).
    pub fn encode(&self) -> [u8; OPTION_HEADER_LEN] {
        let mut out = [0u8; OPTION_HEADER_LEN];
        out[0..8].copy_from_slice(&magic::IHAVEOPT.to_be_bytes());
        out[8..12].copy_from_slice(&self.option.to_be_bytes());
        out[12..16].copy_from_slice(&self.length.to_be_bytes());
        out
    }
}

/// Decodes an option header (16 bytes), checking the magic and bounding the
/// announced data length by `max_len` before anything is allocated.
pub fn decode_option_header(buf: &[u8], max_len: u32) -> Decoded<OptionHeader> {
    // Check the magic as soon as its bytes are present, so garbage is refused
    // without waiting for the rest of the header.
    let have = buf.len().min(8);
    let want = magic::IHAVEOPT.to_be_bytes();
    if buf[..have] != want[..have] {
        let mut found = [0u8; 8];
        found[..have].copy_from_slice(&buf[..have]);
        // A short prefix is reported zero-padded on the right.
        return Err(DecodeError::BadMagic { expected: magic::IHAVEOPT, found: u64::from_be_bytes(found) });
    }
    if buf.len() < OPTION_HEADER_LEN {
        return Ok(None);
    }
    let option = be_u32(buf, 8);
    let length = be_u32(buf, 12);
    if length > max_len {
        return Err(DecodeError::OptionTooLong { option, length, max: max_len });
    }
    Ok(Some((OptionHeader { option, length }, OPTION_HEADER_LEN)))
}

/// The data of `NBD_OPT_INFO` / `NBD_OPT_GO`:
/// "32 bits, length of name (unsigned); MUST be no larger than the option data
/// length - 6; String: name of the export; 16 bits, number of information
/// requests; 16 bits x n - list of `NBD_INFO` information requests".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InfoRequest {
    /// Export name; empty means the default export.
    pub name: String,
    /// Information types requested (`consts::info`), in the client's order.
    pub requests: Vec<u16>,
}

impl InfoRequest {
    /// Whether the client asked for `NBD_INFO_BLOCK_SIZE`.
    pub fn wants_block_size(&self) -> bool {
        self.requests.contains(&info::BLOCK_SIZE)
    }

    /// Encodes the option data (a client's view; used in tests and tools).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + self.name.len() + 2 * self.requests.len());
        out.extend_from_slice(&(self.name.len() as u32).to_be_bytes());
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(&(self.requests.len() as u16).to_be_bytes());
        for r in &self.requests {
            out.extend_from_slice(&r.to_be_bytes());
        }
        out
    }
}

/// Decodes the data of an `NBD_OPT_INFO`/`NBD_OPT_GO` whose header announced
/// `option_len` bytes. Returns `Ok(None)` until `option_len` bytes are
/// present; then the whole payload must be consistent: name length ≤
/// `option_len - 6` and ≤ 4096, and the number of information requests exactly
/// filling the rest. The server answers an `Err` with `NBD_REP_ERR_INVALID`.
pub fn decode_info_request(buf: &[u8], option_len: u32) -> Decoded<InfoRequest> {
    let len = option_len as usize;
    if len < 6 {
        // Even an empty name with no requests needs 4 + 2 bytes.
        return Err(DecodeError::MalformedOption("INFO/GO data shorter than 6 bytes"));
    }
    if buf.len() < len {
        return Ok(None);
    }
    let data = &buf[..len];
    let name_len = be_u32(data, 0) as usize;
    if name_len > len - 6 {
        return Err(DecodeError::MalformedOption("name length larger than the option data length - 6"));
    }
    if name_len > MAX_STRING_LEN {
        return Err(DecodeError::StringTooLong(name_len));
    }
    let name = decode_string(&data[4..4 + name_len])?;
    let at = 4 + name_len;
    let count = be_u16(data, at) as usize;
    let rest = len - at - 2;
    if rest != 2 * count {
        return Err(DecodeError::MalformedOption("number of information requests inconsistent with the option length"));
    }
    let requests = (0..count).map(|i| be_u16(data, at + 2 + 2 * i)).collect();
    Ok(Some((InfoRequest { name, requests }, len)))
}

/// Decodes the data of `NBD_OPT_EXPORT_NAME`: "String, name of the export ...
/// The length of the name is determined from the option header."
pub fn decode_export_name(buf: &[u8], option_len: u32) -> Decoded<String> {
    let len = option_len as usize;
    if len > MAX_STRING_LEN {
        return Err(DecodeError::StringTooLong(len));
    }
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some((decode_string(&buf[..len])?, len)))
}

/// Appends an option reply:
/// "S: 64 bits, `0x3e889045565a9`; S: 32 bits, the option as sent by the
/// client to which this is a reply; S: 32 bits, reply type; S: 32 bits, length
/// of the reply; S: any data as required by the reply".
pub fn encode_option_reply(out: &mut Vec<u8>, option: u32, reply_type: u32, data: &[u8]) {
    out.reserve(OPTION_REPLY_HEADER_LEN + data.len());
    out.extend_from_slice(&magic::OPTION_REPLY.to_be_bytes());
    out.extend_from_slice(&option.to_be_bytes());
    out.extend_from_slice(&reply_type.to_be_bytes());
    // Data passed here is bounded by the callers below (strings ≤ 4096).
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
}

/// `NBD_REP_ACK`: "No data."
pub fn encode_rep_ack(out: &mut Vec<u8>, option: u32) {
    encode_option_reply(out, option, rep::ACK, &[]);
}

/// `NBD_REP_SERVER` for `NBD_OPT_LIST`: "32 bits, length of name; String, name
/// of the export; [rest: details] suitable for direct display to a human being".
pub fn encode_rep_server(out: &mut Vec<u8>, option: u32, name: &str, description: &str) -> Result<(), EncodeError> {
    check_string(name)?;
    check_string(description)?;
    let mut data = Vec::with_capacity(4 + name.len() + description.len());
    data.extend_from_slice(&(name.len() as u32).to_be_bytes());
    data.extend_from_slice(name.as_bytes());
    data.extend_from_slice(description.as_bytes());
    encode_option_reply(out, option, rep::SERVER, &data);
    Ok(())
}

/// `NBD_REP_INFO` / `NBD_INFO_EXPORT`: "16 bits, `NBD_INFO_EXPORT`; 64 bits,
/// size of the export in bytes; 16 bits, transmission flags" (*length* 12).
pub fn encode_info_export(out: &mut Vec<u8>, option: u32, size: u64, transmission_flags: u16) {
    let mut data = [0u8; 12];
    data[0..2].copy_from_slice(&info::EXPORT.to_be_bytes());
    data[2..10].copy_from_slice(&size.to_be_bytes());
    data[10..12].copy_from_slice(&transmission_flags.to_be_bytes());
    encode_option_reply(out, option, rep::INFO, &data);
}

/// `NBD_REP_INFO` / `NBD_INFO_BLOCK_SIZE`: "16 bits, `NBD_INFO_BLOCK_SIZE`; 32
/// bits, minimum block size; 32 bits, preferred block size; 32 bits, maximum
/// block size" (*length* 14).
pub fn encode_info_block_size(out: &mut Vec<u8>, option: u32, min: u32, preferred: u32, max: u32) {
    let mut data = [0u8; 14];
    data[0..2].copy_from_slice(&info::BLOCK_SIZE.to_be_bytes());
    data[2..6].copy_from_slice(&min.to_be_bytes());
    data[6..10].copy_from_slice(&preferred.to_be_bytes());
    data[10..14].copy_from_slice(&max.to_be_bytes());
    encode_option_reply(out, option, rep::INFO, &data);
}

/// `NBD_REP_INFO` / `NBD_INFO_NAME` or `NBD_INFO_DESCRIPTION`: "16 bits, type;
/// String, *length - 2* bytes".
pub fn encode_info_string(out: &mut Vec<u8>, option: u32, info_type: u16, s: &str) -> Result<(), EncodeError> {
    check_string(s)?;
    let mut data = Vec::with_capacity(2 + s.len());
    data.extend_from_slice(&info_type.to_be_bytes());
    data.extend_from_slice(s.as_bytes());
    encode_option_reply(out, option, rep::INFO, &data);
    Ok(())
}

/// An error reply: "All error replies MAY have some data set, in which case
/// that data is an error message string suitable for display to the user."
pub fn encode_rep_error(out: &mut Vec<u8>, option: u32, error_type: u32, message: &str) -> Result<(), EncodeError> {
    if error_type & rep::ERR_BIT == 0 {
        return Err(EncodeError::NotAnError(error_type));
    }
    check_string(message)?;
    encode_option_reply(out, option, error_type, message.as_bytes());
    Ok(())
}

/// The reply to `NBD_OPT_EXPORT_NAME`: "S: 64 bits, size of the export in
/// bytes; S: 16 bits, transmission flags; S: 124 bytes, zeroes (reserved)
/// (unless `NBD_FLAG_C_NO_ZEROES` was negotiated by the client)".
pub fn encode_export_name_reply(size: u64, transmission_flags: u16, no_zeroes: bool) -> Vec<u8> {
    let pad = if no_zeroes { 0 } else { EXPORT_NAME_ZEROES };
    let mut out = Vec::with_capacity(10 + pad);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&transmission_flags.to_be_bytes());
    out.resize(10 + pad, 0);
    out
}

// ------------------------------------------------------------- transmission

/// Request type, with unknown values kept so the server can answer `EINVAL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `NBD_CMD_READ`.
    Read,
    /// `NBD_CMD_WRITE`; *length* bytes of data follow the header.
    Write,
    /// `NBD_CMD_DISC`.
    Disc,
    /// `NBD_CMD_FLUSH`.
    Flush,
    /// `NBD_CMD_TRIM`.
    Trim,
    /// `NBD_CMD_CACHE`.
    Cache,
    /// `NBD_CMD_WRITE_ZEROES`.
    WriteZeroes,
    /// `NBD_CMD_BLOCK_STATUS`.
    BlockStatus,
    /// Any other value.
    Other(u16),
}

impl Command {
    /// From the wire value.
    pub fn from_u16(v: u16) -> Self {
        use crate::consts::cmd;
        match v {
            cmd::READ => Command::Read,
            cmd::WRITE => Command::Write,
            cmd::DISC => Command::Disc,
            cmd::FLUSH => Command::Flush,
            cmd::TRIM => Command::Trim,
            cmd::CACHE => Command::Cache,
            cmd::WRITE_ZEROES => Command::WriteZeroes,
            cmd::BLOCK_STATUS => Command::BlockStatus,
            other => Command::Other(other),
        }
    }

    /// To the wire value.
    pub fn to_u16(self) -> u16 {
        use crate::consts::cmd;
        match self {
            Command::Read => cmd::READ,
            Command::Write => cmd::WRITE,
            Command::Disc => cmd::DISC,
            Command::Flush => cmd::FLUSH,
            Command::Trim => cmd::TRIM,
            Command::Cache => cmd::CACHE,
            Command::WriteZeroes => cmd::WRITE_ZEROES,
            Command::BlockStatus => cmd::BLOCK_STATUS,
            Command::Other(v) => v,
        }
    }
}

/// A transmission-phase request header:
/// "C: 32 bits, 0x25609513, magic; C: 16 bits, command flags; C: 16 bits,
/// type; C: 64 bits, handle; C: 64 bits, offset (unsigned); C: 32 bits,
/// length (unsigned); C: (*length* bytes of data if the request is of type
/// `NBD_CMD_WRITE`)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Command flags (`consts::cmd_flags`), unvalidated.
    pub flags: u16,
    /// Request type.
    pub kind: Command,
    /// The client's handle (called "cookie" in newer revisions of the spec),
    /// echoed in the reply.
    pub cookie: u64,
    /// Byte offset into the export.
    pub offset: u64,
    /// Length in bytes.
    pub length: u32,
}

impl Request {
    /// Bytes of payload following the header on the wire (only `NBD_CMD_WRITE`).
    pub fn payload_len(&self) -> u32 {
        if self.kind == Command::Write {
            self.length
        } else {
            0
        }
    }

    /// Encodes the header (a client's view; used in tests and tools).
    pub fn encode(&self) -> [u8; REQUEST_HEADER_LEN] {
        let mut out = [0u8; REQUEST_HEADER_LEN];
        out[0..4].copy_from_slice(&magic::REQUEST.to_be_bytes());
        out[4..6].copy_from_slice(&self.flags.to_be_bytes());
        out[6..8].copy_from_slice(&self.kind.to_u16().to_be_bytes());
        out[8..16].copy_from_slice(&self.cookie.to_be_bytes());
        out[16..24].copy_from_slice(&self.offset.to_be_bytes());
        out[24..28].copy_from_slice(&self.length.to_be_bytes());
        out
    }
}

/// Decodes a 28-byte request header (not its payload). The magic is checked as
/// soon as its bytes are present. Flags, type and range are left to
/// [`crate::validate()`], which yields the errno to reply with.
pub fn decode_request(buf: &[u8]) -> Decoded<Request> {
    let have = buf.len().min(4);
    let want = magic::REQUEST.to_be_bytes();
    if buf[..have] != want[..have] {
        let mut found = [0u8; 4];
        found[..have].copy_from_slice(&buf[..have]);
        return Err(DecodeError::BadRequestMagic(u32::from_be_bytes(found)));
    }
    if buf.len() < REQUEST_HEADER_LEN {
        return Ok(None);
    }
    let req = Request {
        flags: be_u16(buf, 4),
        kind: Command::from_u16(be_u16(buf, 6)),
        cookie: be_u64(buf, 8),
        offset: be_u64(buf, 16),
        length: be_u32(buf, 24),
    };
    Ok(Some((req, REQUEST_HEADER_LEN)))
}

/// The error values a reply may carry ("Error values").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[repr(u32)]
pub enum Errno {
    /// `NBD_EPERM` (1), Operation not permitted.
    #[error("EPERM: operation not permitted")]
    Perm = 1,
    /// `NBD_EIO` (5), Input/output error.
    #[error("EIO: input/output error")]
    Io = 5,
    /// `NBD_ENOMEM` (12), Cannot allocate memory.
    #[error("ENOMEM: cannot allocate memory")]
    NoMem = 12,
    /// `NBD_EINVAL` (22), Invalid argument.
    #[error("EINVAL: invalid argument")]
    Inval = 22,
    /// `NBD_ENOSPC` (28), No space left on device.
    #[error("ENOSPC: no space left on device")]
    NoSpc = 28,
    /// `NBD_EOVERFLOW` (75), Value too large.
    #[error("EOVERFLOW: value too large")]
    Overflow = 75,
    /// `NBD_ENOTSUP` (95), Operation not supported.
    #[error("ENOTSUP: operation not supported")]
    NotSup = 95,
    /// `NBD_ESHUTDOWN` (108), Server is in the process of being shut down.
    #[error("ESHUTDOWN: server is shutting down")]
    Shutdown = 108,
}

impl Errno {
    /// The wire value.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// From a wire value; `None` for values the spec does not define ("The
    /// client SHOULD treat an unexpected error value as if it had been
    /// `NBD_EINVAL`").
    pub fn from_code(v: u32) -> Option<Self> {
        Some(match v {
            1 => Errno::Perm,
            5 => Errno::Io,
            12 => Errno::NoMem,
            22 => Errno::Inval,
            28 => Errno::NoSpc,
            75 => Errno::Overflow,
            95 => Errno::NotSup,
            108 => Errno::Shutdown,
            _ => return None,
        })
    }
}

/// A simple reply header: "S: 32 bits, 0x67446698, magic; S: 32 bits, error
/// (MAY be zero); S: 64 bits, handle; S: (*length* bytes of data if the
/// request is of type `NBD_CMD_READ`)". `error` is `None` for success. For a
/// successful read the caller sends the data after these 16 bytes.
pub fn encode_simple_reply(cookie: u64, error: Option<Errno>) -> [u8; SIMPLE_REPLY_LEN] {
    let mut out = [0u8; SIMPLE_REPLY_LEN];
    out[0..4].copy_from_slice(&magic::SIMPLE_REPLY.to_be_bytes());
    out[4..8].copy_from_slice(&error.map_or(0, Errno::code).to_be_bytes());
    out[8..16].copy_from_slice(&cookie.to_be_bytes());
    out
}

/// A decoded simple reply header (a client's view; used in tests and tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimpleReply {
    /// Raw error value (0 = success).
    pub error: u32,
    /// Handle echoed from the request.
    pub cookie: u64,
}

/// Decodes a 16-byte simple reply header.
pub fn decode_simple_reply(buf: &[u8]) -> Decoded<SimpleReply> {
    if buf.len() < SIMPLE_REPLY_LEN {
        return Ok(None);
    }
    let m = be_u32(buf, 0);
    if m != magic::SIMPLE_REPLY {
        return Err(DecodeError::BadMagic { expected: magic::SIMPLE_REPLY.into(), found: m.into() });
    }
    Ok(Some((SimpleReply { error: be_u32(buf, 4), cookie: be_u64(buf, 8) }, SIMPLE_REPLY_LEN)))
}

/// A decoded option reply header and its data (a client's view; used in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionReply {
    /// Option replied to.
    pub option: u32,
    /// Reply type (`consts::rep`).
    pub reply_type: u32,
    /// Reply data.
    pub data: Vec<u8>,
}

/// Decodes one option reply, bounding its data by `max_len`.
pub fn decode_option_reply(buf: &[u8], max_len: u32) -> Decoded<OptionReply> {
    if buf.len() < OPTION_REPLY_HEADER_LEN {
        return Ok(None);
    }
    let m = be_u64(buf, 0);
    if m != magic::OPTION_REPLY {
        return Err(DecodeError::BadMagic { expected: magic::OPTION_REPLY, found: m });
    }
    let option = be_u32(buf, 8);
    let reply_type = be_u32(buf, 12);
    let length = be_u32(buf, 16);
    if length > max_len {
        return Err(DecodeError::OptionTooLong { option, length, max: max_len });
    }
    let total = OPTION_REPLY_HEADER_LEN + length as usize;
    if buf.len() < total {
        return Ok(None);
    }
    Ok(Some((OptionReply { option, reply_type, data: buf[OPTION_REPLY_HEADER_LEN..total].to_vec() }, total)))
}
