//! Apas's management (Liu, Zeng and Feng, *Apas: an Application Aware Hybrid Storage System
//! combining SSDs and SWDs*), as pure policy.
//!
//! Apas puts an SSD cache, shared by applications, in front of shingled write disks (SWDs).
//! Its **cache partitioning policy** (CPP, Algorithm 1) divides the cache into a read cache
//! and a write cache, each further divided per application, from the data volumes a
//! **monitor** collects every time period (10,000 s in the paper). Its **GC policy**
//! (Algorithm 2) classifies the SWD's shingled bands into five types A–E by where their valid
//! data lies (Fig. 2), weights them B=0, E=1, C=2, D=3, A=4, and reclaims the heaviest
//! (fewer valid blocks first within a type): **aggressively** when idle time is detected,
//! **lazily** when the free space falls below 20 %.
//!
//! Nothing here performs I/O or reads a clock. The driver (the simulator) owns time, the SSD
//! and SMR models and the idle detection (e.g. [`crate::ggc::IdleDetector`]); it reports
//! numbers and carries out the partitions and cleanings it gets back. The intended call
//! sequence:
//!
//! ```text
//! let mut monitor = Monitor::new(apps);                   // apps: the trace's application count
//! let mut cpp = Cpp::new(CppConfig::default(), cache_blocks, apps)?;
//! let mut cache = ApasCache::new(cpp.partition());         // the initial, equal partition
//! let gc = GcPolicy::new(GcConfig::default())?;
//! for each request (app, op, blocks):
//!     monitor.request(app, op, bytes);
//!     let outcome = cache.read(app, lba) / cache.write(app, lba, tag);  // per block
//!     monitor.lookup(app, op, hit);                          // from the outcome
//!     read miss: smr.read the block, then cache.fill(app, lba, tag);
//!     write: smr.write every block of outcome.destage (the SSD write itself is the hit path);
//!     monitor.completion(app, latency_ns);                   // when the request completes
//!     let (r, w) = cache.occupancy(app); monitor.allocated(app, r, w);   // space held
//! at the end of every period:
//!     let stats = monitor.end_period();                     // resets for the next period
//!     cache.resize(cpp.adjust(&stats));                     // Algorithm 1; evictions to destage
//! when idle time is detected, and after writes to the SMR disk:
//!     let plan = gc.plan(&smr.band_states(), smr.free_blocks(), smr.shingled_blocks(), idle);
//!     for v in plan.now() { smr.clean(now, v.band) }       // Algorithm 2's order
//!     in idle time, stop at the next arrival; when busy, the driver may cap the work per
//!     call (once live data exceeds 1 − lazy target, no plan can reach the target).
//! ```
//!
//! Module map:
//! - [`monitor`]: per application, per period: read and write volume, hits and misses, mean latency.
//! - [`cpp`]: Algorithm 1, the adjustor: the cache's partition among applications, read and write.
//! - [`bands`]: Fig. 2's band types and Algorithm 2's victim order and cleaning modes.
//! - [`cache`]: the partitioned cache itself: per-application LRU read caches and write-back
//!   write caches, keyed by logical block.
//!
//! Every choice the paper leaves open is a documented parameter of [`CppConfig`] or
//! [`GcConfig`]; `docs/apas.md` lists them with their defaults and reasons.

pub mod bands;
pub mod cache;
pub mod cpp;
pub mod monitor;

pub use bands::{BandClass, BandState, CleaningMode, CleaningPlan, GcConfig, GcPolicy, Victim};
pub use cache::{ApasCache, ReadOutcome, WriteOutcome};
pub use cpp::{AppPartition, AppShare, Cpp, CppConfig, Partition};
pub use monitor::{AppPeriod, Monitor, Op, PeriodStats};

use thiserror::Error;

/// An application's id: dense, 0.. (the trace readers number them so).
pub type AppId = u32;

/// Why an Apas configuration cannot exist.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ApasError {
    #[error("cache partitioning: {0}")]
    Cpp(String),
    #[error("GC policy: {0}")]
    Gc(String),
}
