//! # swan-core
//!
//! The array schemes of the SWAN paper and its baselines, as pure state machines.
//!
//! A scheme takes user requests (read, write, trim, flush of a range of 4 KiB blocks)
//! and answers with an [`io::IoPlan`]: the member (SSD) operations that carry the request
//! out, in dependency phases. It never performs I/O and never reads a clock: time and
//! devices come from outside — the simulator (`swan-sim`) supplies virtual time and
//! modelled SSDs, the server supplies wall-clock time and real files. That is what lets
//! both faces of swan run the *same* SWAN code.
//!
//! Module map:
//! - [`geometry`]: blocks, segments, stripe rows, parity placement; one place for layout arithmetic.
//! - [`l2p`]: the logical-to-physical map, packed at 5 bytes per block.
//! - [`segment`]: the segment table (state, valid count, sequence) with greedy buckets.
//! - [`summary`]: the segment summary (CRC32C, sequence number, P2L) and its encoding.
//! - [`victim`]: GC victim policies (greedy, cost-benefit).
//! - [`ggc`]: Harmonia's globally coordinated GC: the O-RAID's coordinator policies.
//! - [`scheme`]: in-place RAID0/4/5, Log-RAID0/4/5 and SWAN0/4/5.
//! - [`driver`]: what both faces do around a scheme (victims released, writes short of space,
//!   R-group roles, reads planned around busy members), decided once.
//! - [`analytic`]: the analytic model of SWAN §3.5 (Eq. 1).
//! - [`triple_a`]: Triple-A's autonomic management (hot clusters, laggards, data migration).
//! - [`apas`]: Apas's management: per-application cache partitioning (Algorithm 1) and SMR band
//!   cleaning (Algorithm 2).

pub mod analytic;
pub mod apas;
pub mod divisor;
pub mod driver;
pub mod geometry;
pub mod ggc;
pub mod io;
pub mod l2p;
pub mod prefetch;
pub mod scheme;
pub mod segment;
pub mod summary;
pub mod triple_a;
pub mod victim;

/// The unit of addressing everywhere in swan: a 4 KiB block.
pub const BLOCK_SIZE: usize = 4096;
/// [`BLOCK_SIZE`] as a `u64`, for byte arithmetic.
pub const BLOCK_BYTES: u64 = BLOCK_SIZE as u64;
