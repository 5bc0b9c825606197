//! swan's block server: the same schemes the simulator drives (SWAN, Log-RAID, in-place
//! RAID), laid over real files or block devices and served over NBD.
//!
//! - [`layout`]: the superblock and the metadata area of every member (FORMAT.md).
//! - [`checkpoint`], [`journal`]: the durable map: checkpoints and the change journal.
//! - [`array`]: create an array, open it from its members, recover its state.
//! - [`engine`]: the thread that drives the scheme over the members (the [`service::BlockService`]).
//! - [`pool`]: the threads that carry out plain user reads and large writes beside the engine.
//! - [`service`]: the seam between the NBD front (connections) and the engine.
//! - [`payload`]: WRITE payloads whose buffers go back to their connection for reuse.
//! - [`member`]: one member over its backing (a file or device, or memory): checked block I/O.
//! - [`nbd`]: the NBD listener and connections (handshake, transmission, replies).
//! - [`emulate`]: the simulator's SSD model in wall-clock time in front of each member.
//! - [`control`]: the status socket `swan status` reads.
//! - [`metrics`]: Prometheus metrics of a running server (`swan serve --metrics`).
//! - [`parity`]: stripe-row XOR: checking a row, rebuilding a block of it.
//! - [`scrub`]: every live block checked against its summary CRC, rebuilt from parity.
//! - [`uring`]: plain reads of O_DIRECT members through an io_uring, from one thread.
//! - [`summaries`]: segment summaries read back (GC's P2L, `swan check`).
//! - [`threads`]: the CPU time of the server's threads, by stage of a request's path.
//! - [`trace_record`]: `swan serve --record-trace`: the requests served, as a blkparse trace.
//!
//! The crash-replay and fault-injection harnesses that drive this engine live in the dev-only
//! `swan-testkit` crate.

pub mod array;
pub mod blockcrc;
pub mod check;
pub mod checkpoint;
pub mod control;
pub mod emulate;
pub mod engine;
mod field_crc;
pub mod journal;
pub mod layout;
pub mod member;
pub mod members;
pub mod metrics;
pub mod nbd;
pub mod parity;
pub mod payload;
pub mod pool;
pub mod scrub;
pub mod service;
pub mod summaries;
pub mod threads;
pub mod trace_record;
pub mod uring;
