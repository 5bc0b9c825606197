//! An SSD in virtual time: page- or block-level FTL, internal greedy GC, TRIM, and NAND
//! timing across channels and dies, so that bandwidth, write amplification and GC stalls
//! *emerge* from the model instead of being scripted.
//!
//! - [`config`]: what a device is made of, derived sizes, validation.
//! - [`presets`]: the SWAN paper's 850 PRO (page and block FTL), Harmonia's SSD, an
//!   open-channel SSD.
//! - `ftl`, `ftl_page`, `ftl_block`, `victim`: where pages live and what internal work a
//!   write costs (GC copies, merges, erases).
//! - `timing`: when that work happens, from per-die, per-channel and host-link busy-until
//!   times, with a preemption lane for SWAN's GC-preempting reads.
//! - `device`: [`Ssd`], the [`crate::Device`] tying them together, with aging, Harmonia's
//!   GC hooks and [`SsdStats`].
//! - [`variation`]: SSDs of one model that are not equally fast (per-SSD speed spread and
//!   slow periods, after Hao et al.'s field measurements), off by default.
//!
//! # The model in brief
//! - Pages are 4 KiB; a `DevOp` block is one logical page. A *unit* is what works in
//!   parallel: `channels × dies_per_channel × planes_per_die` (planes are folded in as
//!   independent units).
//! - Dies are strict FIFO servers; channels and the host link are bandwidth pipes. Writes
//!   cross the host link, then a channel, then program; reads sense, cross the channel,
//!   then the host link. Without a write buffer a write completes when its last page is
//!   programmed and waits for any GC it triggered; with one (`write_buffer_pages`) it
//!   completes once its pages are in DRAM, and a FLUSH waits until they are programmed. A
//!   read completes when its last page has crossed the host link, after any GC it waited for. Unmapped reads, trims and flushes cost only
//!   `cmd_latency_ns`, which every command pays on top of its media time.
//! - Page FTL: writes stripe round-robin over units. When free blocks reach the trigger,
//!   the write first runs greedy GC (fewest valid pages first) until a few blocks are
//!   free, charged to the dies, so the write and everything queued behind it on those
//!   dies waits: random-write collapse and GC stalls emerge from this.
//! - Block FTL: out-of-order writes merge a whole block.
//! - `UserPreempt` operations overtake queued `Gc`-class (array GC) work on every
//!   resource. Host reads overtake the device's own GC only when it is preemptible
//!   (`gc_preemptible`), and buffered write-back always; `suspension` decides what they do
//!   about such an operation already running.
//!
//! Cost: `submit` is O(pages touched + pages copied by GC it triggers), allocates nothing
//! and schedules no events; completion times are computed directly. The page FTL keeps
//! under 8 bytes of state per physical page.

mod aging;
pub mod bandwidth;
pub mod config;
mod device;
mod domain;
mod frontier;
mod ftl;
mod ftl_block;
mod ftl_error;
mod ftl_page;
mod in_flight;
mod nand;
pub mod presets;
mod stats;
mod timing;
pub mod variation;
mod victim;
mod write_buffer;

#[cfg(test)]
mod domain_tests;
#[cfg(test)]
mod layout_tests;
#[cfg(test)]
mod tests;

pub use config::{FtlKind, GcDomain, Placement, SsdConfig, SsdConfigError, Suspension, WriteLayout, PAGE_BYTES};
pub use device::{ForceTarget, GcPressure, Served, SoftLimitNotice, Ssd};
pub use ftl_error::FtlInvariantError;
pub use presets::{preset, PRESET_NAMES};
pub use stats::SsdStats;
pub use timing::Overtakes;
pub(crate) use timing::{NandTiming, Prio, Timing};
pub use variation::{SlowPeriods, Variation, VariationError};
pub(crate) use write_buffer::WriteBuffer;
