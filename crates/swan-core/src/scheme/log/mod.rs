//! The log-structured array: Log-RAID and SWAN over one engine.
//!
//! Every write is appended to an open segment; the L2P map says where each logical block
//! lives; a block rewritten elsewhere leaves a dead copy behind; GC picks a *victim*
//! segment, moves its valid blocks to a GC segment of the same R-group, and TRIMs the
//! victim (§4.2) so the SSD can erase it cheaply.
//!
//! The two layouts differ only in *where* things happen:
//!
//! - [`Layout::LogRaid`]: one R-group holds every SSD. User writes and GC share all SSDs;
//!   GC starts when free segments fall below a low watermark and runs to a high one.
//! - [`Layout::Swan`]: R-groups form a 2-D array. The **front-end** R-group takes every
//!   user write. When its free segments are exhausted, the back-end R-group with the most
//!   free segments becomes the front-end (the paper: "selects a new R-group in the back-end
//!   pool that has enough free space"; swan takes the one with the most, ties to the R-group
//!   that was front-end longest ago). GC runs only in **back-end** R-groups, one victim at a
//!   time per R-group, and moves valid blocks within the victim's R-group. It runs while the
//!   back-end holds fewer free segments than a target, on the R-group with the best greedy
//!   victim; by default every back-end R-group may collect at once
//!   ([`LogConfig::swan_gc_max_groups`]; 1 gives Fig. 6(b)'s single busy R-group). User reads are marked
//!   [`IoClass::UserPreempt`]: they overtake queued GC work on their SSD (the slides'
//!   "a read that falls on the back-end R-group doing GC preempts GC").
//!
//! ## Concurrency with GC
//! A GC job plans its reads and writes at once but remaps a moved block only when the job
//! finishes, and only if the block still lives in the victim (`l2p == from`): a user write
//! or trim that lands meanwhile wins, and the copy becomes a dead slot. Until then reads keep
//! going to the victim, which is trimmed only after the job. A GC segment is sealed (its
//! summary written) only when no job still has moves pending into it, so a segment is never
//! chosen as a victim while data is on its way in. One job per R-group is in flight at a
//! time, so two jobs never share a parity row whose data is still in flight.
//!
//! The parts, one job each: `config` (tunables and the volume they leave), `append`
//! (where writes go: open segments, parity, seals, front-end rotation), `degraded` (rows
//! holding a failed member's block, completed before a sync), `map` (the L2P,
//! P2L and live bits kept in step), `gc` (victims and their moves), `parity_log` (RAIZN's
//! partial-parity log), `scheme` (the
//! [`Scheme`](super::Scheme) interface: user requests to plans), `parity_read` (reads
//! served around a busy member from the rest of their stripe row), and `restore` (rebuilding
//! from a recovered map, and the consistency check).

mod append;
mod config;
mod degraded;
mod gc;
mod map;
mod parity_log;
mod parity_read;
mod restore;
mod scheme;
#[cfg(test)]
mod tests;

pub use config::{Layout, LogConfig, DEFAULT_SPARE, LEAST_SWAN_GC_TARGET};
pub use gc::GC_WRITE_PHASE;
pub use parity_log::PARTIAL_PARITY_LOG_SEGMENTS;
pub use parity_read::{prefer_row, ParityReadPolicy, ReadRules, ReadWaits, RowRefusal, DEFAULT_MIN_GAIN_NS};

use super::p2l::ReverseMap;
use super::{Counters, GcJobId, GcSettingError, MapChange};
use crate::geometry::Geometry;
use crate::io::IoClass;
use crate::l2p::PackedMap;
use crate::segment::SegmentTable;
use std::collections::BTreeMap;

/// Where an open segment fills next.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    seg: u64,
    next: u32,
}

/// One block a GC job moves: logical block `lba` from slot `from` (in the victim) to slot
/// `to`. The job's plan stages move `j` in staging slot `j`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub lba: u64,
    pub from: u64,
    pub to: u64,
}

#[derive(Debug)]
struct GcJob {
    group: u32,
    victim: u64,
    moves: Vec<Move>,
}

pub struct LogArray {
    cfg: LogConfig,
    geo: Geometry,
    l2p: PackedMap,
    /// Which logical block each physical slot was written for; a slot is live only if the
    /// L2P map points back at it. Every slot's, or only unsealed segments' (see
    /// [`LogConfig::p2l_in_summaries`]).
    p2l: ReverseMap,
    /// A victim's P2L read back from its summary (reused between jobs).
    victim_p2l: Vec<u64>,
    /// One bit per physical slot: set while the slot holds the live copy of its block
    /// (exactly when `l2p[p2l[slot]] == slot`). GC finds a victim's live blocks by scanning
    /// these bits instead of looking every slot up in the L2P map.
    live: Vec<u64>,
    segs: SegmentTable,
    /// GC moves planned into each segment and not yet finished.
    inbound: Vec<u32>,
    front: u32,
    user_open: Option<Cursor>,
    gc_open: Vec<Option<Cursor>>,
    /// Full GC segments waiting for their inbound moves before being sealed.
    gc_full: Vec<Vec<u64>>,
    seal_seq: u64,
    next_job: GcJobId,
    jobs: BTreeMap<GcJobId, GcJob>,
    job_in_flight: Vec<bool>,
    move_pool: Vec<Vec<Move>>,
    /// SWAN: rotation count at which each R-group last became front-end (age for ties).
    last_front: Vec<u64>,
    /// SWAN: R-groups running without one of their members (written only when no healthy
    /// R-group has room: a degraded group's new data has no redundancy to spare).
    degraded: Vec<bool>,
    /// Per R-group, its failed member: rows holding a block of it are completed before a
    /// sync ([`LogArray::pad_rows_at_risk`]), so that block is in parity on the members.
    failed_member: Vec<Option<u32>>,
    /// Log-RAID: between the watermarks, whether GC is on.
    lograid_gc_on: bool,
    /// Blocks of the last write refused for want of space (0 once a write fits).
    starved_for: u64,
    counters: Counters,
    scratch: Vec<u64>,
    /// Changes since the driver last took them, when it asked for them.
    changes: Option<Vec<MapChange>>,
    /// Victims emptied by GC, waiting for [`LogArray::release_deferred`]: (R-group, segment).
    releasing: Vec<(u32, u64)>,
    /// SWAN: user reads preempt GC on their member ([`LogArray::set_read_priority`]).
    read_priority: bool,
    /// Per segment, whether GC moves (not user writes) filled it last: for
    /// [`VictimChoice`](super::VictimChoice) only.
    gc_written: Vec<bool>,
    /// SWAN, an experiment: GC may take victims in the front-end R-group too
    /// ([`LogArray::set_gc_in_front_end`]).
    gc_in_front_end: bool,
    /// RAIZN's partial-parity log, when [`LogConfig::partial_parity_log`] asks for it.
    parity_log: Option<parity_log::ParityLog>,
}

impl LogArray {
    pub fn new(cfg: LogConfig) -> Self {
        let slots = cfg.geometry.segments() * u64::from(cfg.geometry.data_slots);
        let l2p = PackedMap::for_values(cfg.volume_blocks, slots);
        Self::with_l2p(cfg, l2p)
    }

    fn with_l2p(cfg: LogConfig, l2p: PackedMap) -> Self {
        let geo = cfg.geometry;
        let groups = geo.rgroups as usize;
        let segs = SegmentTable::new(geo.rgroups, geo.segments_per_group, geo.payload_slots());
        Self {
            l2p,
            p2l: if cfg.p2l_in_summaries {
                ReverseMap::open_only(geo.data_slots)
            } else {
                ReverseMap::dense(geo.segments(), geo.data_slots, cfg.volume_blocks)
            },
            victim_p2l: Vec::new(),
            live: vec![0; (geo.segments() * u64::from(geo.data_slots)).div_ceil(64) as usize],
            inbound: vec![0; geo.segments() as usize],
            segs,
            front: 0,
            user_open: None,
            gc_open: vec![None; groups],
            gc_full: vec![Vec::new(); groups],
            seal_seq: 0,
            next_job: 1,
            jobs: BTreeMap::new(),
            job_in_flight: vec![false; groups],
            move_pool: Vec::new(),
            last_front: vec![0; groups],
            degraded: vec![false; groups],
            failed_member: vec![None; groups],
            lograid_gc_on: false,
            starved_for: 0,
            counters: Counters::default(),
            scratch: Vec::new(),
            changes: None,
            releasing: Vec::new(),
            read_priority: true,
            gc_written: vec![false; geo.segments() as usize],
            gc_in_front_end: false,
            parity_log: cfg.partial_parity_log.then(|| parity_log::ParityLog::new(&geo)),
            geo,
            cfg,
        }
    }

    pub fn config(&self) -> &LogConfig {
        &self.cfg
    }

    /// SWAN: keep `segments` that user writes may take free in the back-end R-groups from
    /// now on, within what the spare can hold: at least one, at most the spare segments (GC
    /// cannot free more than the volume leaves over; above that it would compact victims
    /// that hold nothing dead). Err says what would be accepted.
    pub fn set_swan_gc_target(&mut self, segments: u64) -> Result<(), GcSettingError> {
        if self.cfg.layout != Layout::Swan {
            return Err(GcSettingError::TargetOnLogRaid);
        }
        let (least, spare) = (LEAST_SWAN_GC_TARGET, self.cfg.spare_segments());
        if segments < least || segments > spare.max(least) {
            return Err(GcSettingError::TargetRange { segments, least, most: spare.max(least), spare });
        }
        self.cfg.swan_gc_target = segments;
        Ok(())
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn segments(&self) -> &SegmentTable {
        &self.segs
    }

    /// The L2P map (checkpoints write it as it is stored).
    pub fn l2p(&self) -> &PackedMap {
        &self.l2p
    }

    fn seg_of(&self, pba: u64) -> u64 {
        self.geo.segment_of_pba(pba)
    }

    /// SWAN's read priority (the slides: "a read that falls on the back-end R-group doing
    /// GC preempts GC"), on by default; off, user reads queue behind GC work in arrival
    /// order, as Log-RAID's always do (its GC has no R-group of its own to yield).
    pub fn set_read_priority(&mut self, on: bool) {
        self.read_priority = on;
    }

    /// SWAN, an experiment against the paper (off by default): let GC choose its victim in
    /// the front-end R-group as well as in the back-end, greedy over every R-group, moving
    /// its blocks inside the front-end. It asks whether SWAN's victims are fuller than one
    /// log's because the emptiest segments sit in the front-end while GC must run
    /// (docs/findings/swan.md). Err for Log-RAID, which has no front-end.
    pub fn set_gc_in_front_end(&mut self, on: bool) -> Result<(), GcSettingError> {
        if on && self.cfg.layout != Layout::Swan {
            return Err(GcSettingError::FrontEndOnLogRaid);
        }
        self.gc_in_front_end = on;
        Ok(())
    }

    pub fn gc_in_front_end(&self) -> bool {
        self.gc_in_front_end
    }

    pub fn read_priority(&self) -> bool {
        self.read_priority && self.cfg.layout == Layout::Swan
    }

    /// The class of every user read: the one place either face learns whether reads preempt GC.
    fn read_class(&self) -> IoClass {
        if self.read_priority() {
            IoClass::UserPreempt
        } else {
            IoClass::User
        }
    }
}
