//! # swan-models
//!
//! Device models in virtual time. A model answers "when would this operation complete,
//! and what did it do internally (GC copies, erases)?" It never sleeps, spawns no thread,
//! reads no clock: time is a value passed in ([`Nanos`]), and the caller must submit
//! operations in non-decreasing `now` order.
//!
//! - [`ssd`]: an SSD with a page-level or block-level FTL, internal greedy GC, TRIM and NAND
//!   timing across channels and dies, so bandwidth and GC stalls emerge from the model.
//! - [`host`]: the host's cores and the threads a request's path crosses (client, connection
//!   reader, engine), each a FIFO with a cost per request and per KiB.
//! - [`link`]: a network link with a bandwidth cap (the AFA's network interface).
//! - [`fimm`]: Triple-A's Flash Inline Memory Module: NAND packages on one channel, no
//!   controller, addressed by physical page.
//! - [`fabric`]: Triple-A's PCIe flash array network (root complex, switches, endpoints,
//!   clusters of FIMMs) with credit flow control and a per-request breakdown of link
//!   contention, storage contention and queue stall.
//! - [`hdd`]: a conventional hard disk (seek, rotation, zoned transfer, one actuator).
//! - [`smr`]: a drive-managed shingled disk over [`hdd`]: bands written in order, an STL
//!   (Apas §IV-A), per-band valid/invalid counts and a band-cleaning primitive.
//! - [`calendar`]: the busy calendar of one shared wire, for the Triple-A models.

pub mod calendar;
pub mod fabric;
pub mod fimm;
pub mod hba;
pub mod hdd;
pub mod host;
pub mod link;
pub mod smr;
pub mod ssd;
pub mod zns;

pub use swan_core::io::IoClass;

/// Virtual time in nanoseconds.
pub type Nanos = u64;

/// What a device is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevOpKind {
    Read,
    Write,
    Trim,
    Flush,
}

/// One operation on one device: `count` 4 KiB blocks from block `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DevOp {
    pub kind: DevOpKind,
    pub block: u64,
    pub count: u32,
    pub class: IoClass,
}

/// A member device model in virtual time.
pub trait Device {
    /// Submit `op` at time `now`; returns when it completes. Submissions must come in
    /// non-decreasing `now` order.
    fn submit(&mut self, now: Nanos, op: DevOp) -> Nanos;

    /// When the device will have finished everything submitted so far, background work included.
    fn busy_until(&self) -> Nanos;
}
