//! Triple-A in virtual time: the management policy of `swan_core::triple_a` driving the
//! PCIe fabric model of `swan_models::fabric`, under a closed or open loop of requests: the
//! hot-cluster micro-benchmark ([`crate::hot_clusters`]) or a block trace ([`trace`]).
//!
//! The driver routes every 4 KiB page of a request to the FIMM the data layout names, tells
//! the management module what it observed — each request's device-level latency when it
//! completes (Eq. 1), each stall as it happens (Eq. 3) — and carries out the moves it
//! decides: a migration's page crosses the switch from the old endpoint to the new one
//! ([`Fabric::migrate`]), a reshaped page is programmed on another FIMM of its cluster, a
//! redirected write needs nothing. Every wait is charged by the fabric to a level and a
//! cause, which is what the report sums (Table 2, Fig. 10, Fig. 15).
//!
//! This is a driver of its own beside the SSD-array engine ([`crate::engine`]): that engine
//! still assumes SSD members, and folding the fabric into it as a member topology is the
//! next step (issue "Triple-A").
//!
//! With [`TripleAConfig::gc`] the FIMMs collect garbage ([`gc`]): a write goes to its FIMM's
//! log head instead of its slot's place, and collections take the FIMM's dies and its
//! cluster's bus while the user's requests do.
//!
//! Approximations, each a consequence of completion-time-at-submission models:
//! - An operation is timed whole when submitted, so a move decided later does not re-time
//!   operations already routed: a stalled write "redirected" keeps its old timing, and only
//!   the page's later accesses go to the new place.
//! - The map changes when a move is decided, not when its copy lands (see
//!   `swan_core::triple_a::manager`); a read in between waits at the new die for the copy's
//!   program and those queued before it, unless [`TripleAConfig::map_after_copy`] sends it
//!   to the old place.

mod classes;
pub(crate) mod gc;
#[cfg(test)]
mod gc_tests;
mod report;
mod run;
#[cfg(test)]
mod tests;
mod trace;
#[cfg(test)]
mod trace_tests;
mod watch;

pub use classes::{ClassReport, CopyReport};
pub use gc::{GcConfig, GcReport};
pub use report::{LatencyUs, StallUs, TripleAReport};
pub use run::TripleADriver;
pub use trace::{TraceWorkload, TRACE_DEPTH};

use swan_core::triple_a::{AutonomicConfig, TripleAError};
use swan_models::fabric::{FabricConfig, FabricConfigError};
use swan_models::Nanos;
use thiserror::Error;

/// A Triple-A run: the fabric, the management, the layout and when to stop.
#[derive(Clone, Debug)]
pub struct TripleAConfig {
    pub fabric: FabricConfig,
    pub autonomic: AutonomicConfig,
    /// The static layout deals the logical space to clusters in chunks of this many 4 KiB
    /// pages (1 MiB by default).
    pub chunk_pages: u64,
    /// The share of every FIMM kept free for pages moved to it.
    pub spare_fraction: f64,
    pub sim_seconds: f64,
    /// Requests issued before this simulated second are not counted.
    pub measure_from_s: f64,
    /// Eq. 2's bus utilisation is measured over windows of this length. 1 ms: a hundred
    /// 4 KB reads' sense time, short enough to follow a burst.
    pub bus_window_ns: Nanos,
    /// GC-active FIMMs (see [`GcConfig`]); `None`: pages are programmed in place, as the
    /// paper's FIMMs are.
    pub gc: Option<GcConfig>,
    /// Draws the FIMMs' aging writes; the run's constructors set it to the run's seed.
    pub gc_seed: u64,
    /// Reads of a moved page go to its old place until its copy is programmed at the new
    /// one, as a module that switches its map after the copy would serve them. Off: the
    /// map switches when the move is decided, and such a read waits on the new die for the
    /// copy's program and every program queued before it.
    pub map_after_copy: bool,
}

impl TripleAConfig {
    /// A run of `seconds` on `fabric` under `autonomic`, with the defaults above and 10 %
    /// spare per FIMM.
    pub fn new(fabric: FabricConfig, autonomic: AutonomicConfig, seconds: f64) -> Self {
        Self {
            fabric,
            autonomic,
            chunk_pages: 256,
            spare_fraction: 0.10,
            sim_seconds: seconds,
            measure_from_s: 0.0,
            bus_window_ns: 1_000_000,
            gc: None,
            gc_seed: 1,
            map_after_copy: false,
        }
    }

    /// The run's name in reports: which of Triple-A's managements it runs.
    pub fn label(&self) -> String {
        let gc = |g: &GcConfig| if g.timed { "gc" } else { "gc-untimed" };
        match &self.gc {
            Some(g) if self.autonomic.reshaping => {
                format!("{} {}-{}", management_label(&self.autonomic), gc(g), self.autonomic.gc_laggard.name())
            }
            Some(g) => format!("{} {}", management_label(&self.autonomic), gc(g)),
            None => management_label(&self.autonomic).to_string(),
        }
    }
}

/// "triple-a", "migration-only", "reshaping-only" or "non-autonomic": which of Triple-A's
/// managements `autonomic` turns on.
pub fn management_label(autonomic: &AutonomicConfig) -> &'static str {
    match (autonomic.migration, autonomic.reshaping) {
        (true, true) => "triple-a",
        (true, false) => "migration-only",
        (false, true) => "reshaping-only",
        (false, false) => "non-autonomic",
    }
}

/// Why a Triple-A run could not start or go on.
#[derive(Debug, Error)]
pub enum TripleARunError {
    #[error("invalid fabric: {0}")]
    Fabric(#[from] FabricConfigError),
    #[error(transparent)]
    Policy(#[from] TripleAError),
    #[error("invalid run: {0}")]
    Config(String),
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    #[error(transparent)]
    HotClusters(#[from] crate::hot_clusters::HotClusterError),
    #[error("the fabric refused an operation: {0}")]
    Route(#[from] swan_models::fabric::FabricOpError),
}
