//! Triple-A's autonomic flash-array management (Jung et al., ASPLOS '14, §4), as pure policy.
//!
//! Triple-A unboxes SSDs into bare flash modules (**FIMMs**); four FIMMs behind one PCIe
//! **endpoint** form a **cluster**, clusters hang off PCIe **switches**, and the switches off
//! the host's **root complex**. The FTL lives above the fabric, in a management module, so
//! that module knows where every page is and can move it. What hurts such an array is not
//! GC but contention:
//!
//! - **Link contention**: a cluster's shared local bus is busy moving other FIMMs' data, so
//!   a request whose FIMM is ready still waits. Such a cluster is **hot** (Eq. 1). Triple-A
//!   moves the pages of the request that showed it to a **cold** cluster under the same
//!   switch (Eq. 2): **autonomic data migration**. With **shadow cloning** the pages come
//!   from the endpoint, where the read that revealed the heat has just put them.
//! - **Storage contention**: requests stall in the switch-level queue behind one busy FIMM,
//!   the **laggard**, found by latency monitoring (Eq. 3, against t_SLA) or by queue
//!   examination (the FIMM with the most stalled requests when the queue is full). Triple-A
//!   **reshapes the data layout** inside the cluster: stalled writes are redirected to other
//!   FIMMs, stalled reads' pages are copied there once read. If every FIMM of the cluster is
//!   a laggard, the pages migrate to another cluster instead.
//!
//! Nothing here performs I/O or reads a clock. The driver (the simulator) reports what it
//! observed — a request's device-level latency, the stalled requests of a queue — and carries
//! out the [`Action`]s it gets back on its fabric model. Module map:
//!
//! - [`shape`]: switches × clusters × FIMMs, and how a cluster is numbered.
//! - [`detect`]: the paper's three expressions and the queue examination, as functions.
//! - [`layout`]: where each logical page lives: a static striping plus the pages moved.
//! - [`manager`]: the policy: observations in, migrations and reshapes out.
//! - [`ftl`]: one FIMM's flash translation and GC, for runs with GC-active FIMMs.
//! - [`config`]: every threshold the paper leaves open, with its default and why.

pub mod config;
pub mod detect;
pub mod ftl;
pub mod layout;
pub mod manager;
pub mod shape;

#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod manager_tests;

pub use config::{AutonomicConfig, GcLaggard, LaggardDetection};
pub use detect::PageTiming;
pub use ftl::{Collection, FimmFtl, FimmMapError, GcCopy};
pub use layout::{DataLayout, LayoutConfig, Location, Move, StaticLayout};
pub use manager::{Action, ActionKind, Autonomic, AutonomicStats, Carry, Completed, OpKind, Stalled};
pub use shape::FabricShape;

use thiserror::Error;

/// Time in nanoseconds, as the driver counts it.
pub type Nanos = u64;

/// Why a Triple-A configuration cannot exist.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TripleAError {
    #[error("fabric shape: {0}")]
    Shape(String),
    #[error("data layout: {0}")]
    Layout(String),
    #[error("autonomic management: {0}")]
    Config(String),
}
