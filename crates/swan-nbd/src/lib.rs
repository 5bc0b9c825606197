//! The NBD (Network Block Device) protocol for swan's block server: wire
//! constants, byte-level encoders/decoders for the fixed-newstyle handshake and
//! the transmission phase (simple replies), and validation of requests against
//! an export's advertised limits. These are pure (no I/O, no clock): the server
//! that owns sockets drives them. The exceptions are [`client`], a blocking NBD
//! client over TCP or unix sockets (what `swan replay --nbd` sends requests with), and
//! [`stream`], the socket type it shares with the server's connections.
//!
//! Source: NetworkBlockDevice/nbd `doc/proto.md`.

pub mod client;
pub mod codec;
pub mod consts;
pub mod handshake;
pub mod stream;
pub mod validate;

pub use codec::{
    decode_client_flags, decode_export_name, decode_info_request, decode_option_header, decode_option_reply,
    decode_request, decode_simple_reply, encode_export_name_reply, encode_greeting, encode_info_block_size,
    encode_info_export, encode_info_string, encode_option_reply, encode_rep_ack, encode_rep_error, encode_rep_server,
    encode_simple_reply, ClientFlags, Command, DecodeError, Decoded, EncodeError, Errno, InfoRequest, OptionHeader,
    OptionReply, Request, SimpleReply,
};
pub use handshake::{Action, ExportConfig, Handshake, ServerConfig, TlsMode};
pub use validate::{validate, ExportLimits};

#[cfg(test)]
mod cve_tests;
#[cfg(test)]
mod handshake_tests;
#[cfg(test)]
mod tests;
