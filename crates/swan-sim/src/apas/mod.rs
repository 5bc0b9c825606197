//! Apas in the simulator (Liu, Zeng and Feng, *Apas: an Application Aware Hybrid Storage
//! System combining SSDs and SWDs*): a block trace replayed through an SSD cache over
//! shingled write disks (SWDs), managed by Apas ([`swan_core::apas`]) or by the HWSR
//! baseline as the Apas paper describes it ([`hwsr`]), reported per time period as the
//! paper's Figs. 3–5 are.
//!
//! - [`layout`]: where a logical block lives: striped over the disks in band-sized chunks.
//! - [`cleaning_log`]: every band cleaning, what it moved and freed, what it held up.
//! - [`disks`]: the SWDs in virtual time, their cleaning (Algorithm 2 or HWSR's greedy) and
//!   idle detection.
//! - [`hwsr`]: the baseline's cache split and cleaning.
//! - [`run`]: the replay loop: open loop at the trace's own times, requests carry app ids.
//! - [`report`]: per-period rows and a summary per policy.
//!
//! What a request costs (virtual time, from its arrival):
//! - **read**: blocks in the cache are read on the SSD; the others from their disks (runs of
//!   consecutive disk blocks in one access), then filled into the reader's read cache (the
//!   fill's SSD write is queued at the disk read's completion and delays later requests,
//!   not this one). The request completes when its last block is in.
//! - **write**: every block is written on the SSD (write-back). A block the write cache
//!   evicts to make room is **destaged** to its disk; the request waits for those disk
//!   writes too, since the room it takes is free only once the old data is on the disk.
//! - **cleaning** occupies a disk like any other access: requests queue behind it.
//!
//! Every disk serves its operations first come first served (the HDD model's queue); the
//! SSD is the `apas-slc` preset sized to the cache.

pub mod cleaning_log;
pub mod disks;
mod error;
pub mod hwsr;
pub mod layout;
pub mod report;
pub mod run;

#[cfg(test)]
mod tests;

pub use error::{ApasRunError, DiskLayoutError, HwsrError};
pub use report::{PeriodRow, Policy, PolicyReport, Summary};
pub use run::{
    run_policy, ApasSimConfig, ApasTrace, DiskFill, DEFAULT_AUTO_HEADROOM, DEFAULT_CACHE_FRACTION, DEFAULT_DISKS,
};
