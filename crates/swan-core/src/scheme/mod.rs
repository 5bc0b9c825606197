//! The array schemes: what turns a user request into member I/O.
//!
//! | scheme | write strategy | where GC runs |
//! |---|---|---|
//! | `raid0`, `raid4`, `raid5` | in place, as mdadm does (parity read-modify-write for partial stripes) | only inside the SSDs |
//! | `lograid0/4/5` | one log striped over every SSD (SOFA/SALSA/Purity style) | anywhere: GC I/O lands on every SSD |
//! | `swan0/4/5` | append-only to the front-end R-group of a 2-D array | only in back-end R-groups |
//!
//! A scheme is a state machine. [`Scheme::submit`] plans a user request; [`Scheme::start_gc`]
//! asks whether the scheme wants to start a GC job now and plans it; [`Scheme::finish_gc`]
//! tells it a job's I/O has completed (and plans the follow-up: summaries, TRIMs). The
//! driver calls `start_gc` after every event until it says no.

mod array;
mod error;
pub mod inplace;
pub mod log;
mod p2l;

use crate::geometry::{Geometry, GeometryError, RaidLevel, StripeGeometry};
use crate::io::{IoPlan, MemberBlock, MemberId};
use crate::summary::Summary;
use crate::victim::VictimPolicy;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

pub use array::{ArrayScheme, CheckpointImage, LogSlot, VictimOutlook};
pub use error::{ConsistencyError, GcSettingError, RestoreError};
pub use inplace::InPlaceRaid;
pub use log::{
    prefer_row, Layout, LogArray, LogConfig, Move, ParityReadPolicy, ReadRules, ReadWaits, RowRefusal,
    DEFAULT_MIN_GAIN_NS, GC_WRITE_PHASE, PARTIAL_PARITY_LOG_SEGMENTS,
};

/// What a user asks of the volume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReqOp {
    Read,
    Write,
    Trim,
    Flush,
}

/// A user request over `blocks` 4 KiB blocks from `lba`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub op: ReqOp,
    pub lba: u64,
    pub blocks: u32,
    /// Force unit access: the write must be durable before it is acknowledged.
    pub fua: bool,
}

impl Request {
    pub fn new(op: ReqOp, lba: u64, blocks: u32) -> Self {
        Self { op, lba, blocks, fua: false }
    }
}

/// A request the scheme refuses; the driver answers it with an error.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RequestError {
    #[error("request for blocks {lba}..{end} runs past the end of the {volume}-block volume")]
    OutOfRange { lba: u64, end: u64, volume: u64 },
    #[error("request of zero blocks")]
    Empty,
}

/// How a submission went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submitted {
    /// The plan holds the request's I/O (possibly none, e.g. a read of unmapped blocks).
    Planned,
    /// No free space until GC makes some; nothing changed. Retry after a GC job finishes.
    NoSpace,
}

pub type GcJobId = u64;

/// The scheme families and RAID levels, as named on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SchemeKind {
    Raid(RaidLevel),
    LogRaid(RaidLevel),
    Swan(RaidLevel),
}

impl SchemeKind {
    pub const ALL: [SchemeKind; 9] = [
        SchemeKind::Raid(RaidLevel::Raid0),
        SchemeKind::Raid(RaidLevel::Raid4),
        SchemeKind::Raid(RaidLevel::Raid5),
        SchemeKind::LogRaid(RaidLevel::Raid0),
        SchemeKind::LogRaid(RaidLevel::Raid4),
        SchemeKind::LogRaid(RaidLevel::Raid5),
        SchemeKind::Swan(RaidLevel::Raid0),
        SchemeKind::Swan(RaidLevel::Raid4),
        SchemeKind::Swan(RaidLevel::Raid5),
    ];

    pub fn raid(self) -> RaidLevel {
        match self {
            SchemeKind::Raid(r) | SchemeKind::LogRaid(r) | SchemeKind::Swan(r) => r,
        }
    }

    pub fn is_log_structured(self) -> bool {
        !matches!(self, SchemeKind::Raid(_))
    }
}

impl fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (family, r) = match self {
            SchemeKind::Raid(r) => ("raid", r),
            SchemeKind::LogRaid(r) => ("lograid", r),
            SchemeKind::Swan(r) => ("swan", r),
        };
        write!(f, "{family}{}", r.digit())
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("unknown scheme '{0}': expected one of raid0, raid4, raid5, lograid0, lograid4, lograid5, swan0, swan4, swan5")]
pub struct UnknownScheme(pub String);

impl FromStr for SchemeKind {
    type Err = UnknownScheme;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.to_ascii_lowercase().replace(['-', '_'], "");
        SchemeKind::ALL.into_iter().find(|k| k.to_string() == lower).ok_or_else(|| UnknownScheme(s.to_string()))
    }
}

/// The shape of an array: R-groups × SSDs per R-group of a given size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArraySpec {
    pub kind: SchemeKind,
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    pub member_blocks: u64,
    pub member_offset: u64,
    /// Blocks per member per segment (log-structured schemes).
    pub segment_rows: u32,
    /// Blocks per chunk (in-place schemes).
    pub chunk_blocks: u32,
    pub victim: VictimPolicy,
    /// Overrides of the log-structured engine's GC tunables (defaults in [`LogConfig::new`]).
    #[serde(default)]
    pub tuning: LogTuning,
}

/// Optional overrides of [`LogConfig`]'s GC tunables, in segments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogTuning {
    pub swan_gc_target: Option<u64>,
    pub swan_gc_max_groups: Option<u32>,
    pub lograid_gc_low: Option<u64>,
    pub lograid_gc_high: Option<u64>,
    /// See [`LogConfig::defer_release`].
    #[serde(default)]
    pub defer_release: bool,
    /// See [`LogConfig::p2l_in_summaries`].
    #[serde(default)]
    pub p2l_in_summaries: bool,
    /// See [`LogConfig::zoned_members`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub zoned_members: bool,
    /// RAIZN's partial-parity log (see [`LogConfig::partial_parity_log`]): the log takes
    /// [`PARTIAL_PARITY_LOG_SEGMENTS`] segments' worth of blocks at the end of each member.
    ///
    /// [`PARTIAL_PARITY_LOG_SEGMENTS`]: crate::scheme::PARTIAL_PARITY_LOG_SEGMENTS
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial_parity_log: bool,
    /// Expose at most this many blocks, keeping the rest of the payload as spare space for GC
    /// (the array's over-provisioning; a server records its choice in the superblock).
    #[serde(default)]
    pub volume_blocks: Option<u64>,
}

impl LogTuning {
    /// What a block server runs: victims released only once the moves out of them are
    /// durable, P2L kept in the summaries on the members, and the volume `swan create`
    /// recorded (`None` while it is still working that out). Every GC tunable keeps the
    /// core's default, so the simulator given this runs the server's configuration.
    pub fn served(volume_blocks: Option<u64>) -> Self {
        Self { defer_release: true, p2l_in_summaries: true, volume_blocks, ..Self::default() }
    }
}

impl ArraySpec {
    pub fn members(&self) -> u32 {
        self.rgroups * self.ssds_per_rgroup
    }

    /// Members that share a stripe row, and so its parity: an R-group in SWAN, every member
    /// in log-RAID and in-place RAID (RAID0 rows have this width too, and no parity).
    pub fn parity_group_width(&self) -> u32 {
        match self.kind {
            SchemeKind::Swan(_) => self.ssds_per_rgroup,
            SchemeKind::LogRaid(_) | SchemeKind::Raid(_) => self.members(),
        }
    }

    /// Blocks of each member the segments may take: all of it but a partial-parity log,
    /// which lies after them.
    pub fn segment_member_blocks(&self) -> u64 {
        let log_segments = if self.tuning.partial_parity_log { log::PARTIAL_PARITY_LOG_SEGMENTS } else { 0 };
        self.member_blocks.saturating_sub(u64::from(log_segments) * u64::from(self.segment_rows))
    }

    /// The scheme's name in reports: RAIZN for Log-RAID5 with a partial-parity log.
    pub fn label(&self) -> String {
        if self.tuning.partial_parity_log {
            "raizn".into()
        } else {
            self.kind.to_string()
        }
    }

    /// Build the scheme. Log-RAID and in-place RAID use every member as one stripe;
    /// SWAN uses the 2-D grid.
    pub fn build(&self) -> Result<ArrayScheme, GeometryError> {
        Ok(match self.log_config()? {
            Some(cfg) => ArrayScheme::Log(Box::new(LogArray::new(cfg))),
            None => ArrayScheme::InPlace(InPlaceRaid::new(self.stripe_geometry()?)),
        })
    }

    /// The blocks the volume would expose, without building the scheme's maps (a sizing
    /// search tries many shapes).
    pub fn volume_blocks(&self) -> Result<u64, GeometryError> {
        Ok(match self.log_config()? {
            Some(cfg) => cfg.volume_blocks,
            None => self.stripe_geometry()?.volume_blocks(),
        })
    }

    fn stripe_geometry(&self) -> Result<StripeGeometry, GeometryError> {
        StripeGeometry::new(self.members(), self.kind.raid(), self.chunk_blocks, self.member_blocks, self.member_offset)
    }

    /// The log-structured engine's configuration, tunables applied; `None` for in-place RAID.
    pub fn log_config(&self) -> Result<Option<LogConfig>, GeometryError> {
        let (groups, per_group, layout) = match self.kind {
            SchemeKind::Raid(_) => return Ok(None),
            SchemeKind::Swan(_) => (self.rgroups, self.ssds_per_rgroup, Layout::Swan),
            SchemeKind::LogRaid(_) => (1, self.members(), Layout::LogRaid),
        };
        let geometry = Geometry::new(
            groups,
            per_group,
            self.kind.raid(),
            self.segment_member_blocks(),
            self.member_offset,
            self.segment_rows,
        )?;
        let mut cfg = LogConfig::new(geometry, layout, self.victim);
        let t = &self.tuning;
        cfg.swan_gc_max_groups = t.swan_gc_max_groups.unwrap_or(cfg.swan_gc_max_groups).max(1);
        cfg.lograid_gc_low = t.lograid_gc_low.unwrap_or(cfg.lograid_gc_low);
        cfg.lograid_gc_high = t.lograid_gc_high.unwrap_or(cfg.lograid_gc_high).max(cfg.lograid_gc_low + 1);
        cfg.defer_release = t.defer_release;
        cfg.p2l_in_summaries = t.p2l_in_summaries;
        cfg.zoned_members = t.zoned_members;
        cfg.partial_parity_log = t.partial_parity_log;
        if let Some(v) = t.volume_blocks {
            cfg.limit_volume(v);
        }
        cfg.swan_gc_target = t.swan_gc_target.unwrap_or(cfg.swan_gc_target);
        Ok(Some(cfg))
    }
}

/// What a scheme reports about itself, for metrics and `swan status`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The R-group taking writes (log-structured schemes).
    pub front_group: Option<u32>,
    /// Free segments in the whole array.
    pub free_segments: u64,
    /// R-groups with GC jobs in flight, as a bit set.
    pub gc_groups: u64,
    pub segments: u64,
}

/// Monotonic counters; the driver differences them per interval.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub user_blocks_written: u64,
    pub user_blocks_read: u64,
    pub user_blocks_trimmed: u64,
    /// Valid blocks GC moved.
    pub gc_blocks_moved: u64,
    pub victims: u64,
    /// Sum over victims of their valid blocks when chosen.
    pub victim_valid_blocks: u64,
    /// Sum over victims of their payload slots (for utilization).
    pub victim_payload_blocks: u64,
    pub front_rotations: u64,
    pub no_space: u64,
    /// Victims whose P2L had to be rebuilt by scanning the L2P map, because their summary
    /// could not be read back or did not agree with the map (see [`SummarySource`]).
    pub p2l_scans: u64,
    /// User blocks written when GC took its first victim (GC onset, counted in writes so
    /// that a simulator and a server can compare it).
    pub gc_onset_user_blocks: Option<u64>,
    /// Slots written with zeroes to complete a degraded R-group's rows before a sync
    /// (see `scheme/log/degraded.rs`): dead on arrival, given back by GC.
    pub padded_slots: u64,
    /// User blocks read around their member, from the rest of their stripe row and its
    /// parity (`scheme/log/parity_read.rs`).
    #[serde(default)]
    pub parity_read_blocks: u64,
    /// Member block reads those cost beyond the one a direct read would have made.
    #[serde(default)]
    pub parity_extra_reads: u64,
    /// Where the victims came from and what GC passed over (`scheme/log/gc.rs`,
    /// [`VictimChoice`]): diagnostics, read by no policy.
    #[serde(default)]
    pub victim_choice: VictimChoice,
}

/// How GC's victims compare with what it could not take, counted at each pick: the
/// emptiest sealed segment anywhere in the array (greedy over every segment, as one pool
/// would choose), and why an R-group holding a segment emptier than the victim was passed
/// over (a pick counts under each reason it met). And the victims that GC moves had
/// written, against those user writes had. Diagnostics for docs/findings/swan.md, "The
/// causes, by experiment"; no policy reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VictimChoice {
    /// Sum over picks of the fewest valid blocks any sealed segment held (any R-group, any role).
    pub best_anywhere_valid_blocks: u64,
    /// Picks that passed over an emptier segment in the front-end, which SWAN's GC may not enter.
    pub emptier_in_front_end: u64,
    /// Picks that passed over an emptier segment in an R-group already collecting (one
    /// victim per R-group at a time).
    pub emptier_in_collecting: u64,
    /// Picks that passed over an emptier segment in an R-group with no free segment for the moves.
    pub emptier_without_room: u64,
    /// Victims written by GC moves (the rest were written by user writes)...
    pub gc_written_victims: u64,
    /// ...and their valid blocks when chosen.
    pub gc_written_valid_blocks: u64,
}

impl VictimChoice {
    fn since(&self, earlier: &VictimChoice) -> VictimChoice {
        VictimChoice {
            best_anywhere_valid_blocks: self.best_anywhere_valid_blocks - earlier.best_anywhere_valid_blocks,
            emptier_in_front_end: self.emptier_in_front_end - earlier.emptier_in_front_end,
            emptier_in_collecting: self.emptier_in_collecting - earlier.emptier_in_collecting,
            emptier_without_room: self.emptier_without_room - earlier.emptier_without_room,
            gc_written_victims: self.gc_written_victims - earlier.gc_written_victims,
            gc_written_valid_blocks: self.gc_written_valid_blocks - earlier.gc_written_valid_blocks,
        }
    }
}

impl Counters {
    /// What happened since `earlier`, a snapshot of these same counters: a driver that warms
    /// an array up before measuring subtracts the warm-up this way.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            user_blocks_written: self.user_blocks_written - earlier.user_blocks_written,
            user_blocks_read: self.user_blocks_read - earlier.user_blocks_read,
            user_blocks_trimmed: self.user_blocks_trimmed - earlier.user_blocks_trimmed,
            gc_blocks_moved: self.gc_blocks_moved - earlier.gc_blocks_moved,
            victims: self.victims - earlier.victims,
            victim_valid_blocks: self.victim_valid_blocks - earlier.victim_valid_blocks,
            victim_payload_blocks: self.victim_payload_blocks - earlier.victim_payload_blocks,
            front_rotations: self.front_rotations - earlier.front_rotations,
            no_space: self.no_space - earlier.no_space,
            p2l_scans: self.p2l_scans - earlier.p2l_scans,
            padded_slots: self.padded_slots - earlier.padded_slots,
            parity_read_blocks: self.parity_read_blocks - earlier.parity_read_blocks,
            parity_extra_reads: self.parity_extra_reads - earlier.parity_extra_reads,
            victim_choice: self.victim_choice.since(&earlier.victim_choice),
            // GC that began before `earlier` was already running when this span began.
            gc_onset_user_blocks: match earlier.gc_onset_user_blocks {
                Some(_) => Some(0),
                None => self.gc_onset_user_blocks.map(|b| b - earlier.user_blocks_written),
            },
        }
    }
}

/// Reads a sealed segment's summary back from the members, for a scheme that keeps the P2L
/// of sealed segments only there ([`LogConfig::p2l_in_summaries`]).
pub trait SummarySource {
    /// The summary of `segment` of an array laid out as `geo`, as the members hold it;
    /// `None` if it cannot be read or decoded.
    fn read_summary(&mut self, geo: &Geometry, segment: u64) -> Option<Summary>;
}

/// For drivers with no summaries to read (a scheme then rebuilds a victim's P2L from its map).
pub struct NoSummaries;

impl SummarySource for NoSummaries {
    fn read_summary(&mut self, _geo: &Geometry, _segment: u64) -> Option<Summary> {
        None
    }
}

/// One change to the durable state of a log-structured array, in the order it happened.
///
/// A server journals these so that a restart finds every block where the array last put it:
/// replaying them in order over a checkpoint of the map reproduces the map exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapChange {
    /// Logical block `lba` now lives in physical slot `pba` ([`crate::l2p::UNMAPPED`]: nowhere).
    Map { lba: u64, pba: u64 },
    /// `segment` was sealed with sequence number `seq`: its summary is written.
    Sealed { segment: u64, seq: u64 },
}

/// An array scheme, driven by a simulator or a server.
pub trait Scheme: Send {
    fn kind(&self) -> SchemeKind;

    /// Blocks the volume exposes to users.
    fn volume_blocks(&self) -> u64;

    fn members(&self) -> u32;

    /// Plan what a newly created array does to its members before serving (cleared first).
    /// Log-structured schemes TRIM every segment: a free segment is a trimmed segment, so
    /// the SSDs never carry data the array has no use for. In-place RAID does nothing, as
    /// mdadm does not discard at creation.
    fn format(&mut self, plan: &mut IoPlan);

    /// A hint that `req` will be submitted soon: warm the cache for its map entries
    /// (`near: false`), or, a little later, once those are in, for what they point at
    /// (`near: true`). Changes nothing; a driver that knows its next requests calls it to
    /// overlap their memory waits with the work before them.
    fn prefetch(&self, _req: &Request, _near: bool) {}

    /// Plan `req` into `plan` (cleared first).
    fn submit(&mut self, req: &Request, plan: &mut IoPlan) -> Result<Submitted, RequestError>;

    /// The largest write that can always be placed once GC has run, however full the
    /// volume: a driver submits no larger write (a server advertises this as its maximum
    /// block size). A larger one may wait for room GC can never free.
    fn largest_write_blocks(&self) -> u64 {
        self.volume_blocks()
    }

    /// Whether a block TRIMmed through this scheme reads back as zeroes, so that a driver
    /// may answer "write zeroes" with a TRIM.
    fn trimmed_reads_zero(&self) -> bool;

    /// If the scheme wants a GC job now, plan it into `plan` (cleared first) and return its id.
    fn start_gc(&mut self, plan: &mut IoPlan) -> Option<GcJobId>;

    /// Every I/O of job `job` has completed. Plans the follow-up (summaries, TRIMs) into `plan`
    /// (cleared first); the follow-up is fire-and-forget for the scheme.
    fn finish_gc(&mut self, job: GcJobId, plan: &mut IoPlan);

    fn status(&self) -> Status;

    fn counters(&self) -> &Counters;

    /// Where logical block `lba` lives now, if anywhere (tests and tools).
    fn locate(&self, lba: u64) -> Option<(MemberId, MemberBlock)>;

    /// Check every invariant (O(size); for tests).
    fn check(&self) -> Result<(), ConsistencyError>;

    /// Metadata memory the scheme holds, in bytes.
    fn heap_bytes(&self) -> u64;

    /// Member `member` failed (or is whole again, rebuilt). A log-structured array goes on
    /// filling the member's slots (their blocks live in each row's parity) and completes the
    /// rows that hold one when asked to ([`LogArray::pad_rows_at_risk`]); SWAN also keeps its
    /// writes away from a degraded R-group while a healthy one has room. In-place schemes
    /// have nowhere else to write.
    fn set_failed_member(&mut self, member: u32, failed: bool);
}

pub(crate) fn check_range(req: &Request, volume: u64) -> Result<(), RequestError> {
    if req.op == ReqOp::Flush {
        return Ok(());
    }
    if req.blocks == 0 {
        return Err(RequestError::Empty);
    }
    let end = req.lba.saturating_add(u64::from(req.blocks));
    if end > volume {
        return Err(RequestError::OutOfRange { lba: req.lba, end, volume });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheme_names_round_trip() {
        for k in SchemeKind::ALL {
            assert_eq!(k.to_string().parse::<SchemeKind>(), Ok(k));
        }
        assert_eq!("SWAN-0".parse::<SchemeKind>(), Ok(SchemeKind::Swan(RaidLevel::Raid0)));
        assert!("raid6".parse::<SchemeKind>().unwrap_err().to_string().contains("swan0"));
    }

    /// A striped log created with several R-groups (as `swan create --scheme lograid0
    /// --rgroups 3` makes one) is one R-group of every member: asked of the others, its GC
    /// outlook is None, not a panic (the server asks of each when it reports no space).
    #[test]
    fn a_striped_log_has_one_rgroup_whatever_it_was_created_with() {
        let spec = ArraySpec {
            kind: SchemeKind::LogRaid(RaidLevel::Raid0),
            rgroups: 3,
            ssds_per_rgroup: 2,
            member_blocks: 8 * 48,
            member_offset: 0,
            segment_rows: 8,
            chunk_blocks: 4,
            victim: crate::victim::VictimPolicy::Greedy,
            tuning: Default::default(),
        };
        let a = spec.build().expect("a valid array");
        assert_eq!(a.log_geometry().map(|g| g.rgroups), Some(1));
        assert!(a.victim_outlook(0).is_some());
        assert!(a.victim_outlook(1).is_none() && a.victim_outlook(2).is_none());
    }
}
