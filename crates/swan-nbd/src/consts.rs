//! Wire constants of the NBD protocol, as numbered in the NetworkBlockDevice/nbd
//! `doc/proto.md` ("Newstyle negotiation", "Values", "Request message", "Simple
//! reply message", "Error values"). All values travel in network byte order.

/// Magic numbers.
pub mod magic {
    /// S: 64 bits, `0x4e42444d41474943` (ASCII '`NBDMAGIC`') (also known as the `INIT_PASSWD`).
    pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
    /// S/C: 64 bits, `0x49484156454F5054` (ASCII '`IHAVEOPT`').
    pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
    /// S: 64 bits, `0x3e889045565a9` (magic number for replies).
    pub const OPTION_REPLY: u64 = 0x0003_e889_0455_65a9;
    /// C: 32 bits, 0x25609513, magic (`NBD_REQUEST_MAGIC`).
    pub const REQUEST: u32 = 0x2560_9513;
    /// S: 32 bits, 0x67446698, magic (`NBD_SIMPLE_REPLY_MAGIC`; used to be `NBD_REPLY_MAGIC`).
    pub const SIMPLE_REPLY: u32 = 0x6744_6698;
    /// S: 32 bits, 0x668e33ef, magic (`NBD_STRUCTURED_REPLY_MAGIC`).
    pub const STRUCTURED_REPLY: u32 = 0x668e_33ef;
}

/// Handshake flags (16 bits, sent by the server after `IHAVEOPT`).
pub mod handshake_flags {
    /// bit 0, `NBD_FLAG_FIXED_NEWSTYLE`.
    pub const FIXED_NEWSTYLE: u16 = 1 << 0;
    /// bit 1, `NBD_FLAG_NO_ZEROES`.
    pub const NO_ZEROES: u16 = 1 << 1;
    /// "The server MUST NOT set any other flags".
    pub const ALL: u16 = FIXED_NEWSTYLE | NO_ZEROES;
}

/// Client flags (32 bits, sent by the client after the handshake flags).
pub mod client_flags {
    /// bit 0, `NBD_FLAG_C_FIXED_NEWSTYLE`.
    pub const FIXED_NEWSTYLE: u32 = 1 << 0;
    /// bit 1, `NBD_FLAG_C_NO_ZEROES`.
    pub const NO_ZEROES: u32 = 1 << 1;
    /// "Clients MUST NOT set any other flags".
    pub const ALL: u32 = FIXED_NEWSTYLE | NO_ZEROES;
}

/// Option types (the "option" field during option haggling).
pub mod opt {
    /// `NBD_OPT_EXPORT_NAME` (1).
    pub const EXPORT_NAME: u32 = 1;
    /// `NBD_OPT_ABORT` (2).
    pub const ABORT: u32 = 2;
    /// `NBD_OPT_LIST` (3).
    pub const LIST: u32 = 3;
    /// `NBD_OPT_PEEK_EXPORT` (4), withdrawn; not in use.
    pub const PEEK_EXPORT: u32 = 4;
    /// `NBD_OPT_STARTTLS` (5).
    pub const STARTTLS: u32 = 5;
    /// `NBD_OPT_INFO` (6).
    pub const INFO: u32 = 6;
    /// `NBD_OPT_GO` (7).
    pub const GO: u32 = 7;
    /// `NBD_OPT_STRUCTURED_REPLY` (8).
    pub const STRUCTURED_REPLY: u32 = 8;
    /// `NBD_OPT_LIST_META_CONTEXT` (9).
    pub const LIST_META_CONTEXT: u32 = 9;
    /// `NBD_OPT_SET_META_CONTEXT` (10).
    pub const SET_META_CONTEXT: u32 = 10;
}

/// Option reply types ("reply type" field in fixed newstyle negotiation).
pub mod rep {
    /// `NBD_REP_ACK` (1).
    pub const ACK: u32 = 1;
    /// `NBD_REP_SERVER` (2).
    pub const SERVER: u32 = 2;
    /// `NBD_REP_INFO` (3).
    pub const INFO: u32 = 3;
    /// `NBD_REP_META_CONTEXT` (4).
    pub const META_CONTEXT: u32 = 4;
    /// "error reply types, all of which are denoted by having bit 31 set".
    pub const ERR_BIT: u32 = 1 << 31;
    /// `NBD_REP_ERR_UNSUP` (2^31 + 1).
    pub const ERR_UNSUP: u32 = ERR_BIT + 1;
    /// `NBD_REP_ERR_POLICY` (2^31 + 2).
    pub const ERR_POLICY: u32 = ERR_BIT + 2;
    /// `NBD_REP_ERR_INVALID` (2^31 + 3).
    pub const ERR_INVALID: u32 = ERR_BIT + 3;
    /// `NBD_REP_ERR_PLATFORM` (2^31 + 4).
    pub const ERR_PLATFORM: u32 = ERR_BIT + 4;
    /// `NBD_REP_ERR_TLS_REQD` (2^31 + 5).
    pub const ERR_TLS_REQD: u32 = ERR_BIT + 5;
    /// `NBD_REP_ERR_UNKNOWN` (2^31 + 6): "The requested export is not available."
    pub const ERR_UNKNOWN: u32 = ERR_BIT + 6;
    /// `NBD_REP_ERR_SHUTDOWN` (2^31 + 7).
    pub const ERR_SHUTDOWN: u32 = ERR_BIT + 7;
    /// `NBD_REP_ERR_BLOCK_SIZE_REQD` (2^31 + 8).
    pub const ERR_BLOCK_SIZE_REQD: u32 = ERR_BIT + 8;
}

/// Information types carried in `NBD_REP_INFO` (and requested by `NBD_OPT_INFO`/`GO`).
pub mod info {
    /// `NBD_INFO_EXPORT` (0); *length* MUST be 12.
    pub const EXPORT: u16 = 0;
    /// `NBD_INFO_NAME` (1).
    pub const NAME: u16 = 1;
    /// `NBD_INFO_DESCRIPTION` (2).
    pub const DESCRIPTION: u16 = 2;
    /// `NBD_INFO_BLOCK_SIZE` (3); *length* MUST be 14.
    pub const BLOCK_SIZE: u16 = 3;
}

/// Transmission flags (16 bits, sent with the export size).
pub mod tflags {
    /// bit 0, `NBD_FLAG_HAS_FLAGS`: MUST always be 1.
    pub const HAS_FLAGS: u16 = 1 << 0;
    /// bit 1, `NBD_FLAG_READ_ONLY`.
    pub const READ_ONLY: u16 = 1 << 1;
    /// bit 2, `NBD_FLAG_SEND_FLUSH`.
    pub const SEND_FLUSH: u16 = 1 << 2;
    /// bit 3, `NBD_FLAG_SEND_FUA`.
    pub const SEND_FUA: u16 = 1 << 3;
    /// bit 4, `NBD_FLAG_ROTATIONAL`.
    pub const ROTATIONAL: u16 = 1 << 4;
    /// bit 5, `NBD_FLAG_SEND_TRIM`.
    pub const SEND_TRIM: u16 = 1 << 5;
    /// bit 6, `NBD_FLAG_SEND_WRITE_ZEROES` (also exposes `NBD_CMD_FLAG_NO_HOLE`).
    pub const SEND_WRITE_ZEROES: u16 = 1 << 6;
    /// bit 7, `NBD_FLAG_SEND_DF`.
    pub const SEND_DF: u16 = 1 << 7;
    /// bit 8, `NBD_FLAG_CAN_MULTI_CONN`.
    pub const CAN_MULTI_CONN: u16 = 1 << 8;
    /// bit 9, `NBD_FLAG_SEND_RESIZE` (experimental).
    pub const SEND_RESIZE: u16 = 1 << 9;
    /// bit 10, `NBD_FLAG_SEND_CACHE`.
    pub const SEND_CACHE: u16 = 1 << 10;
    /// bit 11, `NBD_FLAG_SEND_FAST_ZERO`.
    pub const SEND_FAST_ZERO: u16 = 1 << 11;
}

/// Request types (`type` field of a request).
pub mod cmd {
    /// `NBD_CMD_READ` (0).
    pub const READ: u16 = 0;
    /// `NBD_CMD_WRITE` (1).
    pub const WRITE: u16 = 1;
    /// `NBD_CMD_DISC` (2).
    pub const DISC: u16 = 2;
    /// `NBD_CMD_FLUSH` (3).
    pub const FLUSH: u16 = 3;
    /// `NBD_CMD_TRIM` (4).
    pub const TRIM: u16 = 4;
    /// `NBD_CMD_CACHE` (5).
    pub const CACHE: u16 = 5;
    /// `NBD_CMD_WRITE_ZEROES` (6).
    pub const WRITE_ZEROES: u16 = 6;
    /// `NBD_CMD_BLOCK_STATUS` (7).
    pub const BLOCK_STATUS: u16 = 7;
    /// `NBD_CMD_RESIZE` (8), experimental.
    pub const RESIZE: u16 = 8;
}

/// Command flags (16 bits, sent with every request).
pub mod cmd_flags {
    /// bit 0, `NBD_CMD_FLAG_FUA`.
    pub const FUA: u16 = 1 << 0;
    /// bit 1, `NBD_CMD_FLAG_NO_HOLE`.
    pub const NO_HOLE: u16 = 1 << 1;
    /// bit 2, `NBD_CMD_FLAG_DF`.
    pub const DF: u16 = 1 << 2;
    /// bit 3, `NBD_CMD_FLAG_REQ_ONE`.
    pub const REQ_ONE: u16 = 1 << 3;
    /// bit 4, `NBD_CMD_FLAG_FAST_ZERO`.
    pub const FAST_ZERO: u16 = 1 << 4;
    /// Every flag the spec defines.
    pub const ALL: u16 = FUA | NO_HOLE | DF | REQ_ONE | FAST_ZERO;
}

/// Size of the request header: 32-bit magic, 16-bit flags, 16-bit type, 64-bit
/// handle, 64-bit offset, 32-bit length.
pub const REQUEST_HEADER_LEN: usize = 28;
/// Size of a simple reply header: 32-bit magic, 32-bit error, 64-bit handle.
pub const SIMPLE_REPLY_LEN: usize = 16;
/// Size of an option request header: 64-bit magic, 32-bit option, 32-bit length.
pub const OPTION_HEADER_LEN: usize = 16;
/// Size of an option reply header: 64-bit magic, 32-bit option, 32-bit type, 32-bit length.
pub const OPTION_REPLY_HEADER_LEN: usize = 20;
/// Server greeting: `NBDMAGIC`, `IHAVEOPT`, 16-bit handshake flags.
pub const GREETING_LEN: usize = 18;
/// "124 bytes, zeroes (reserved) (unless `NBD_FLAG_C_NO_ZEROES` was negotiated)".
pub const EXPORT_NAME_ZEROES: usize = 124;
/// "[a string] SHOULD be no longer than 256 bytes and MUST be no longer than 4096 bytes."
pub const MAX_STRING_LEN: usize = 4096;
/// Default bound on option data this crate accepts (a server policy, not a spec value).
pub const DEFAULT_MAX_OPTION_LEN: u32 = 64 * 1024;
/// "any *length* less than 2^25 (33,554,432) bytes SHOULD NOT be considered a
/// denial of service attack"; the interoperable maximum payload.
pub const DEFAULT_MAX_PAYLOAD: u32 = 1 << 25;
/// Conventional NBD port ("the IANA-reserved port for NBD, 10809").
pub const NBD_PORT: u16 = 10809;
