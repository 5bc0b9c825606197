//! The seam between the NBD front and whatever stores the blocks.
//!
//! Connections decode and validate requests at the edge, then hand each one to a
//! [`Backend`] with a [`Completion`] to call when it is done. The backend may complete
//! requests out of order and from any thread; the connection matches replies to
//! requests by cookie. A backend never sees a request the export's advertised limits
//! forbid (range, alignment, length, flags): those are answered by the connection.

use swan_nbd::Errno;

/// What a backend offers, as advertised during the handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    pub name: String,
    pub description: String,
    pub size_bytes: u64,
    /// Requests' offset and length are multiples of this.
    pub min_block: u32,
    pub preferred_block: u32,
    pub max_payload: u32,
    pub read_only: bool,
    /// Advertise `NBD_FLAG_CAN_MULTI_CONN`: only if a FLUSH on one connection covers
    /// writes replied to on every connection.
    pub multi_conn: bool,
}

/// One request, already validated against [`ExportInfo`].
#[derive(Debug, PartialEq, Eq)]
pub enum BlockOp {
    Read,
    /// The payload, exactly `len` bytes.
    Write(Vec<u8>),
    Flush,
    Trim,
    /// Write zeroes. `may_trim` is false when the client sent `NBD_CMD_FLAG_NO_HOLE`.
    WriteZeroes {
        may_trim: bool,
    },
}

#[derive(Debug, PartialEq, Eq)]
pub struct BlockRequest {
    pub op: BlockOp,
    pub offset: u64,
    pub len: u32,
    /// Force unit access: durable before the reply.
    pub fua: bool,
}

/// The outcome: the data for a read (exactly `len` bytes), empty otherwise.
pub type Reply = Result<Vec<u8>, Errno>;

/// Called exactly once per request, from any thread.
pub type Completion = Box<dyn FnOnce(Reply) + Send + 'static>;

pub trait Backend: Send + Sync + 'static {
    fn info(&self) -> ExportInfo;

    /// Start `req`; call `done` when it has completed (possibly before returning).
    fn submit(&self, req: BlockRequest, done: Completion);
}
