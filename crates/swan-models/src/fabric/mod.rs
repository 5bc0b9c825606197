//! Triple-A's flash array network in virtual time (Jung et al., ASPLOS '14, §3, §5.1,
//! Fig. 2 and 5): a host's root complex (RC) with one PCIe switch per port, endpoints
//! under each switch, and behind each endpoint a *cluster* of FIMMs on the endpoint's
//! shared local bus. It answers "when does this page operation on that FIMM complete, and
//! where did it wait?" — the per-request link contention, storage contention and queue
//! stall at the RC, switch and endpoint that the paper reports (Table 2, Fig. 10, Fig. 15).
//!
//! What it must never do: decide where data lives. Triple-A's address translation, GC,
//! hot-cluster migration and laggard reshaping sit in the host-side management module
//! (§4); they will drive this model, which only carries packets and runs NAND commands.
//!
//! # A request's path
//! - **Read**: a request packet goes down RC → switch → endpoint; the endpoint's HAL
//!   issues the read to the die, the page crosses the FIMM's channel and the cluster's
//!   local bus, and the data comes back up endpoint → switch → RC.
//! - **Write**: the data goes down; the endpoint keeps it in its write buffer and sends an
//!   acknowledgement up; the buffer entry is given back when the page is programmed. A
//!   full write buffer holds the data in the endpoint's downstream buffer (§4.2: writes
//!   "could also be stalled if the buffer needs to evict"). With no write buffer a write
//!   is acknowledged when programmed.
//! - **Erase**: a request goes down, the acknowledgement comes up when the block is erased.
//!
//! # Flow control and where waiting is charged
//! Every RC, switch and endpoint has a receiver buffer of fixed capacity each way
//! ([`credit`]). A packet leaves a node only when the next node has an entry for it *and*
//! the link is idle (each link direction, the local bus and each FIMM channel is a
//! [`crate::calendar::Calendar`]). Every wait is charged once to the node where the packet
//! stood — the queue stall of that level — and once to a cause: **link contention**
//! (waiting for a PCIe link, the local bus or a channel) or **storage contention** (waiting
//! for a busy die or a full write buffer). A wait for a receiver entry inherits the cause
//! of the packet that held it. So, per request, `queue stall = link + storage contention`,
//! the identity Table 2 shows row by row, and `latency = service + queue stall`, where the
//! service time is what the request takes on an idle array.
//!
//! # Entry points
//! [`Fabric::submit`] routes an operation to a FIMM through the whole network.
//! [`Fabric::cluster_mut`] exposes one cluster as a member device ([`Cluster::submit`]:
//! from its endpoint's PCIe port down), and [`crate::fimm::Fimm::submit`] one FIMM alone,
//! so an array engine can later treat either as a member (the "a cluster as an SSD").
//!
//! Modules: [`config`] and [`presets`] (parameters and their sources), `credit` (receiver
//! buffers), `cluster` (endpoint, local bus, FIMMs), `route` ([`Fabric`]).

mod cluster;
pub mod config;
mod credit;
pub mod presets;
mod route;
#[cfg(test)]
mod tests;

pub use cluster::Cluster;
pub use config::{EndpointConfig, FabricConfig, FabricConfigError, PcieConfig, RootComplexConfig, SwitchConfig};
pub use presets::{preset, triple_a, triple_a_4x16, PRESET_NAMES};
pub use route::Fabric;

use crate::fimm::FimmOpError;
use crate::Nanos;

/// Which FIMM: switch (RC port), cluster under that switch, FIMM on that cluster's bus.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FimmAddr {
    pub switch: u32,
    pub cluster: u32,
    pub fimm: u32,
}

/// Why a packet waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Cause {
    /// For a wire: a PCIe link, the local bus, a FIMM channel.
    Link,
    /// For the storage: a busy die or page register, a full write buffer.
    Storage,
}

/// Where a packet waited.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    RootComplex,
    Switch,
    Endpoint,
}

/// Time a request spent waiting in each level's queues.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStall {
    pub root_complex_ns: Nanos,
    pub switch_ns: Nanos,
    pub endpoint_ns: Nanos,
}

impl QueueStall {
    pub fn total_ns(&self) -> Nanos {
        self.root_complex_ns + self.switch_ns + self.endpoint_ns
    }
}

/// A request's completion and where its time went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub submitted: Nanos,
    /// When the host has the result: a read's data, a write's or erase's acknowledgement.
    pub done: Nanos,
    /// When the FIMM's die took the command: until then the request was *stalled* (§4.2:
    /// "not issued to an underlying FIMM yet").
    pub issued: Nanos,
    /// When the FIMM finished: for a buffered write, when its page is programmed (after
    /// `done`); otherwise when the read data left the die or the program/erase ended.
    pub media_done: Nanos,
    pub link_contention_ns: Nanos,
    pub storage_contention_ns: Nanos,
    pub queue_stall: QueueStall,
    /// The request found its switch's downstream queue full and waited at the root complex
    /// for an entry: the moment Triple-A's queue examination (§4.2, Fig. 8) looks at it.
    pub switch_queue_full: bool,
}

impl Completion {
    pub fn latency_ns(&self) -> Nanos {
        self.done - self.submitted
    }

    /// What the request would take on an idle array: latency less every wait.
    pub fn service_ns(&self) -> Nanos {
        self.latency_ns() - self.queue_stall.total_ns()
    }

    /// Charges `ns` of waiting at `level` for `cause`.
    pub(crate) fn charge(&mut self, level: Level, cause: Cause, ns: Nanos) {
        match cause {
            Cause::Link => self.link_contention_ns += ns,
            Cause::Storage => self.storage_contention_ns += ns,
        }
        match level {
            Level::RootComplex => self.queue_stall.root_complex_ns += ns,
            Level::Switch => self.queue_stall.switch_ns += ns,
            Level::Endpoint => self.queue_stall.endpoint_ns += ns,
        }
    }
}

/// An operation the fabric cannot route or run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FabricOpError {
    #[error("no {what} {index}: the fabric has {count}")]
    NoSuch { what: &'static str, index: u32, count: u32 },
    #[error(
        "a migration programs a page under the switch it came from: switch {from} to switch {to}, or not a program"
    )]
    NotAMigration { from: u32, to: u32 },
    #[error(transparent)]
    Fimm(#[from] FimmOpError),
}
