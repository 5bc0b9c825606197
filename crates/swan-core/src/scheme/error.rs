//! Why a scheme's state is inconsistent, why a map could not be restored into an array,
//! and why a GC setting was refused. Each names the block, slot or segment concerned.

use crate::segment::{SegState, SegmentTableError};
use thiserror::Error;

/// The first invariant [`Scheme::check`](super::Scheme::check) found broken.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ConsistencyError {
    #[error(transparent)]
    Segments(#[from] SegmentTableError),
    #[error("block {lba} mapped into the summary of segment {segment}")]
    MappedIntoSummary { lba: u64, segment: u64 },
    #[error("block {lba} maps to slot {pba} whose P2L says {p2l}")]
    P2lDisagrees { lba: u64, pba: u64, p2l: u64 },
    #[error("block {lba} lives in free segment {segment}")]
    InFreeSegment { lba: u64, segment: u64 },
    #[error("{bits} slots marked live but {mapped} blocks mapped")]
    LiveBits { bits: u64, mapped: u64 },
    #[error("block {lba} maps to slot {pba}, which is not marked live")]
    NotLive { lba: u64, pba: u64 },
    #[error("segment {segment} counts {counted} valid blocks but holds {holds}")]
    ValidCount { segment: u64, counted: u32, holds: u32 },
    #[error("full GC segment {segment} of R-group {group} is {state:?}")]
    FullGcSegment { segment: u64, group: usize, state: SegState },
}

/// Why [`LogArray::restore`](super::LogArray::restore) refused a recovered map: one that
/// cannot be right for the array's configuration.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RestoreError {
    #[error("a map of {map} blocks for a volume of {volume}")]
    MapLength { map: u64, volume: u64 },
    #[error("{given} segment sequence numbers for {segments} segments")]
    SeqCount { given: usize, segments: u64 },
    #[error("block {lba} maps to slot {pba}, beyond the array's {slots} slots")]
    BeyondSlots { lba: u64, pba: u64, slots: u64 },
    #[error("block {lba} maps into the summary of segment {segment}")]
    IntoSummary { lba: u64, segment: u64 },
    #[error("block {lba} maps to slot {pba}, which block {holder} holds too")]
    SlotHeldBy { lba: u64, pba: u64, holder: u64 },
    /// As [`RestoreError::SlotHeldBy`], for an array that keeps no dense P2L to say which.
    #[error("block {lba} maps to slot {pba}, which an earlier block holds too")]
    SlotHeld { lba: u64, pba: u64 },
}

/// Why a GC setting ([`LogArray::set_swan_gc_target`](super::LogArray::set_swan_gc_target),
/// [`LogArray::set_gc_in_front_end`](super::LogArray::set_gc_in_front_end)) was refused:
/// the scheme has no such GC, or the value is out of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum GcSettingError {
    #[error("the GC target is SWAN's (back-end R-groups); Log-RAID cleans between watermarks")]
    TargetOnLogRaid,
    #[error("a GC target applies to SWAN arrays; in-place RAID runs no array GC")]
    TargetOnInPlace,
    #[error(
        "a GC target of {segments} segments is outside {least}..={most} (this array's spare holds {spare} segments)"
    )]
    TargetRange { segments: u64, least: u64, most: u64, spare: u64 },
    #[error("GC in the front-end is an experiment on SWAN's R-groups; Log-RAID has no front-end")]
    FrontEndOnLogRaid,
    #[error("GC in the front-end is an experiment on SWAN's R-groups; in-place RAID runs no array GC")]
    FrontEndOnInPlace,
}
