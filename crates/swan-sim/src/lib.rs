//! # swan-sim
//!
//! The deterministic flash-array simulator: the scheme code of `swan-core` driven in
//! virtual time over the device models of `swan-models`. See `OUTPUT.md` for what a run writes.
//!
//! - [`engine`]: the event loop (no clock, no files).
//! - [`source`]: the seam the engine draws requests from ([`source::ArrivalSource`]).
//! - [`workload`]: fio-like request generators, and Harmonia's HPC workloads.
//! - [`trace`]: block-trace readers; [`replay`]: a trace as a request source (simulator and
//!   the NBD replay client alike).
//! - [`hot_clusters`]: Triple-A's micro-benchmark (random 4 KB I/O with N hot clusters).
//! - [`triple_a`]: Triple-A's management driving the PCIe fabric model.
//! - [`fabric_array`]: an array's members as Triple-A clusters behind that fabric.
//! - [`zoned_array`]: an array's members as zoned SSDs, one segment per zone.
//! - [`apas`]: Apas's SSD cache over shingled disks, and the HWSR baseline, replaying a trace.
//! - [`ggc`]: Harmonia's coordinated GC carried out on the modelled SSDs.
//! - [`member_trace`]: each member SSD's I/O recorded during a run, and replayed on one SSD
//!   alone (SWAN's Fig. 12 as the paper measured it).
//! - [`prefill`]: the untimed fill and overwrite of a log-structured array before a run.
//! - [`metrics`]: interval rows and latency histograms.
//! - [`output`]: writes a run directory (`summary.json`, CSVs).
//! - [`report`]: draws the paper's figures from run directories.
mod append_group;

pub mod apas;
pub mod engine;
pub mod fabric_array;
pub mod ggc;
pub mod hba_array;
pub mod hot_clusters;
pub mod member_trace;
pub mod members;
pub mod metrics;
pub mod output;
pub mod prefill;
pub mod replay;
pub mod report;
pub mod rng;
pub mod runs;
pub mod source;
pub mod trace;
pub mod triple_a;
pub mod workload;
mod zone_lock;
pub mod zoned_array;
