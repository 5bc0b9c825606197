//! The built array the faces hold: in-place RAID or a log-structured scheme, and what each
//! answers for both, so that a driver asks the array and never which kind it is.

use super::{GcJobId, GcSettingError, InPlaceRaid, Layout, LogArray, MapChange, Move, Scheme, SummarySource};
use crate::geometry::Geometry;
use crate::io::{IoPlan, MemberBlock, MemberId};
use crate::l2p::{PackedMap, UNMAPPED};
use crate::summary::Summary;

/// What [`ArrayScheme::victim_outlook`] tells of one R-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VictimOutlook {
    pub free_segments: u64,
    /// Valid blocks of the segment GC would take next, if any is sealed.
    pub best_victim_valid: Option<u32>,
    /// Payload slots of a segment.
    pub payload_slots: u32,
}

/// Where a logical block's live copy is in the log: what a read of it is checked against
/// ([`ArrayScheme::log_slot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogSlot {
    pub pba: u64,
    pub segment: u64,
    pub slot: u32,
    /// The segment's seal ([`ArrayScheme::segment_seq`]); 0 while it is open or adopted.
    pub seq: u64,
}

/// What a checkpoint writes of a log-structured array: its map and each segment's seal.
pub struct CheckpointImage<'a> {
    pub l2p: &'a PackedMap,
    /// By segment; 0 for one never sealed (free, open, or adopted at recovery).
    pub seqs: Vec<u64>,
}

/// A built array: in-place RAID, or a log-structured scheme (SWAN, log-RAID).
///
/// A closed pair rather than one wide trait: what only a log has (map changes to journal,
/// summaries, victims awaiting release, free segments to TRIM) is asked of the [`LogArray`]
/// itself, so [`Scheme`] holds only what both answer. It dereferences to the [`Scheme`]
/// both faces drive, as the `Box<dyn Scheme>` it replaces did.
pub enum ArrayScheme {
    InPlace(InPlaceRaid),
    Log(Box<LogArray>),
}

impl ArrayScheme {
    /// The log, for what only a log-structured scheme does; `None` for in-place RAID. Kept
    /// inside the core: a face asks the array below, never which kind it is.
    pub(crate) fn log(&self) -> Option<&LogArray> {
        match self {
            ArrayScheme::Log(la) => Some(la),
            ArrayScheme::InPlace(_) => None,
        }
    }

    pub(crate) fn log_mut(&mut self) -> Option<&mut LogArray> {
        match self {
            ArrayScheme::Log(la) => Some(la),
            ArrayScheme::InPlace(_) => None,
        }
    }

    /// GC victims waiting for [`LogArray::release_deferred`]; in-place RAID has none.
    pub fn pending_release(&self) -> usize {
        self.log().map_or(0, LogArray::pending_release)
    }

    /// Release the GC victims waiting (a sync point made their moves durable) and plan their
    /// TRIMs into `plan`; how many were released. In-place RAID has none.
    pub fn release_deferred(&mut self, plan: &mut IoPlan) -> usize {
        match self {
            ArrayScheme::Log(la) => la.release_deferred(plan),
            ArrayScheme::InPlace(_) => {
                plan.clear();
                0
            }
        }
    }

    /// Free segments in R-group `group` (a log-RAID array's one log is group 0); in-place
    /// RAID has no segments.
    pub fn free_segments_in(&self, group: u32) -> u64 {
        self.log().map_or(0, |la| la.segments().free_count(group))
    }

    /// The segments SWAN's GC keeps free in each back-end R-group, for a SWAN array.
    pub fn swan_gc_target(&self) -> Option<u64> {
        self.log().filter(|la| la.config().layout == Layout::Swan).map(|la| la.config().swan_gc_target)
    }

    /// SWAN's read priority ([`LogArray::set_read_priority`]); in-place RAID runs no array
    /// GC for reads to overtake, so there it changes nothing.
    pub fn set_read_priority(&mut self, on: bool) {
        if let ArrayScheme::Log(la) = self {
            la.set_read_priority(on);
        }
    }

    /// The experiment of GC in SWAN's front-end ([`LogArray::set_gc_in_front_end`]).
    pub fn set_gc_in_front_end(&mut self, on: bool) -> Result<(), GcSettingError> {
        match self {
            ArrayScheme::Log(la) => la.set_gc_in_front_end(on),
            ArrayScheme::InPlace(_) if on => Err(GcSettingError::FrontEndOnInPlace),
            ArrayScheme::InPlace(_) => Ok(()),
        }
    }

    /// The free segments SWAN's GC keeps in each back-end R-group ([`LogArray::set_swan_gc_target`]).
    pub fn set_swan_gc_target(&mut self, segments: u64) -> Result<(), GcSettingError> {
        match self {
            ArrayScheme::Log(la) => la.set_swan_gc_target(segments),
            ArrayScheme::InPlace(_) => Err(GcSettingError::TargetOnInPlace),
        }
    }

    /// [`Scheme::start_gc`], a log-structured array's victim P2L read from its summary on
    /// the members ([`LogArray::start_gc_with`]).
    pub fn start_gc_with(&mut self, plan: &mut IoPlan, summaries: &mut dyn SummarySource) -> Option<GcJobId> {
        match self {
            ArrayScheme::Log(la) => la.start_gc_with(plan, summaries),
            ArrayScheme::InPlace(s) => s.start_gc(plan),
        }
    }

    /// The R-group GC job `job` collects in, while it runs; in-place RAID's jobs (none
    /// today) belong to no R-group.
    pub fn gc_group(&self, job: GcJobId) -> Option<u32> {
        self.log().and_then(|la| la.gc_group(job))
    }

    /// The map changes since the last call, in order ([`LogArray::take_changes`]), appended
    /// to `out`; in-place RAID keeps its blocks where they are and changes no map.
    pub fn take_changes(&mut self, out: &mut Vec<MapChange>) {
        if let ArrayScheme::Log(la) = self {
            la.take_changes(out);
        }
    }

    /// The summaries the last plans sealed are on the members ([`LogArray::summaries_written`]).
    pub fn summaries_written(&mut self) {
        if let ArrayScheme::Log(la) = self {
            la.summaries_written();
        }
    }

    /// The segments a restart adopted open, to be sealed before serving
    /// ([`LogArray::adopted_segments`]); in-place RAID has none.
    pub fn adopted_segments(&self) -> Vec<u64> {
        self.log().map_or_else(Vec::new, |la| la.adopted_segments().collect())
    }

    /// The live blocks of `segment` as (slot, logical block), from the map: what a server
    /// moves out of an adopted segment it cannot seal where it lies (a zone written past
    /// its live blocks takes no summary after them); none for in-place RAID.
    pub fn live_blocks(&self, segment: u64) -> Vec<(u32, u64)> {
        let Some(la) = self.log() else { return Vec::new() };
        let entries = la.summary_of(segment).entries;
        entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.lba != crate::summary::DEAD)
            .map(|(i, e)| (i as u32, e.lba))
            .collect()
    }

    /// Where logical block `lba` lives (a slot), if anywhere; none for in-place RAID.
    pub fn slot_of(&self, lba: u64) -> Option<u64> {
        let pba = self.log()?.l2p().get(lba);
        (pba != crate::l2p::UNMAPPED).then_some(pba)
    }

    /// Whether GC's work on the members yields to user reads (SWAN's reads preempt GC).
    pub fn gc_preemptible(&self) -> bool {
        self.log().is_some_and(LogArray::read_priority)
    }

    /// Plan a TRIM of every free segment (cleared first) ([`LogArray::plan_free_trims`]);
    /// in-place RAID keeps no record of what is unused, so it plans nothing.
    pub fn plan_free_trims(&self, plan: &mut IoPlan) {
        match self {
            ArrayScheme::Log(la) => la.plan_free_trims(plan),
            ArrayScheme::InPlace(_) => plan.clear(),
        }
    }

    /// The moves of GC job `job`, in staging-slot order ([`LogArray::gc_moves`]); in-place
    /// RAID's jobs move nothing.
    pub fn gc_moves(&self, job: GcJobId) -> &[Move] {
        self.log().map_or(&[], |la| la.gc_moves(job))
    }

    /// The share of the data members' capacity the volume leaves to GC; `None` for in-place
    /// RAID, which runs no GC and gives users all of it.
    pub fn gc_spare(&self) -> Option<f64> {
        self.log().map(|la| 1.0 - la.volume_blocks() as f64 / la.geometry().payload_blocks() as f64)
    }

    /// R-group `group`'s GC outlook: its free segments, and the valid blocks of its best
    /// victim out of a segment's payload slots; `None` for in-place RAID, and for a group
    /// the log does not have (a striped log is one R-group of every member, whatever R-groups
    /// the array was created with).
    pub fn victim_outlook(&self, group: u32) -> Option<VictimOutlook> {
        self.log().filter(|la| group < la.segments().groups()).map(|la| {
            let segs = la.segments();
            VictimOutlook {
                free_segments: segs.free_count(group),
                best_victim_valid: segs.min_valid(group).map(|s| segs.valid(s)),
                payload_slots: la.geometry().payload_slots(),
            }
        })
    }

    /// `segment`'s summary as the scheme has it ([`LogArray::summary_of`]); `None` for
    /// in-place RAID, which writes no summaries.
    pub fn summary_of(&self, segment: u64) -> Option<Summary> {
        self.log().map(|la| la.summary_of(segment))
    }

    /// The bytes of `segment`'s summary as the scheme has it ([`LogArray::summary_of`]),
    /// `block_crcs` (one per slot, held since the segment opened) written into its live
    /// entries; `None` for in-place RAID, which writes no summaries.
    pub fn encoded_summary(&self, segment: u64, block_crcs: Option<Vec<u32>>) -> Option<Vec<u8>> {
        self.log().map(|la| {
            let mut s = la.summary_of(segment);
            // Every live slot of a segment sealed in this run was written in it, so its CRC
            // is in the table.
            if let Some(crcs) = block_crcs {
                for (e, crc) in s.entries.iter_mut().zip(crcs) {
                    e.crc = if e.lba == crate::summary::DEAD { 0 } else { crc };
                }
                s.block_crcs = true;
            }
            s.encode(la.geometry().summary_blocks)
        })
    }
}

impl ArrayScheme {
    /// The log's geometry (segments, slots, where each lives); `None` for in-place RAID,
    /// which has no log and keeps each block where its address puts it.
    pub fn log_geometry(&self) -> Option<&Geometry> {
        self.log().map(LogArray::geometry)
    }

    /// Where logical block `lba`'s live copy is in the log; `None` if it is unmapped, and
    /// for in-place RAID.
    pub fn log_slot(&self, lba: u64) -> Option<LogSlot> {
        let la = self.log()?;
        let pba = la.l2p().get(lba);
        if pba == UNMAPPED {
            return None;
        }
        let (segment, slot) = la.geometry().split_pba(pba);
        Some(LogSlot { pba, segment, slot, seq: la.segments().seq(segment) })
    }

    /// Segment `segment`'s seal: 0 while it is open, free or adopted at recovery without
    /// one (and for in-place RAID, which has no segments).
    pub fn segment_seq(&self, segment: u64) -> u64 {
        self.log().map_or(0, |la| la.segments().seq(segment))
    }

    /// The live block at `member`'s `block` as (slot, logical block), if it is a slot of a
    /// segment not yet sealed ([`LogArray::live_at`]); in-place RAID has no open rows of a
    /// log, so `None`.
    pub fn live_at(&self, member: MemberId, block: MemberBlock) -> Option<(u64, u64)> {
        self.log().and_then(|la| la.live_at(member, block))
    }

    /// The logical block live in log slot `pba`, if its segment is not yet sealed
    /// ([`LogArray::live_lba`]); `None` for in-place RAID.
    pub fn live_lba(&self, pba: u64) -> Option<u64> {
        self.log().and_then(|la| la.live_lba(pba))
    }

    /// The segments still filling, lowest first ([`LogArray::open_segments`]); in-place RAID
    /// has none.
    pub fn open_segments(&self) -> Vec<u64> {
        self.log().map_or_else(Vec::new, |la| la.open_segments().collect())
    }

    /// Complete with zeroes the open rows holding a failed member's block
    /// ([`LogArray::pad_rows_at_risk`]), planned into `plan`; the rows padded. In-place RAID
    /// writes parity with every write and has no open rows.
    pub fn pad_rows_at_risk(&mut self, plan: &mut IoPlan) -> u32 {
        match self {
            ArrayScheme::Log(la) => la.pad_rows_at_risk(plan),
            ArrayScheme::InPlace(_) => {
                plan.clear();
                0
            }
        }
    }

    /// Seal adopted segment `segment` ([`LogArray::seal_adopted`]) and give the summary the
    /// driver writes for it before the seal is durable; `None` for in-place RAID, which
    /// adopts nothing.
    pub fn seal_adopted(&mut self, segment: u64) -> Option<Summary> {
        let la = self.log_mut()?;
        la.seal_adopted(segment);
        Some(la.summary_of(segment))
    }

    /// Seal adopted segment `segment` as the summary found on the members numbers it
    /// ([`LogArray::seal_adopted_as`]); false for in-place RAID, which adopts nothing.
    pub fn seal_adopted_as(&mut self, segment: u64, seq: u64) -> bool {
        self.log_mut().map(|la| la.seal_adopted_as(segment, seq)).is_some()
    }

    /// What a checkpoint writes of the array; `None` for in-place RAID, whose blocks are
    /// where their addresses put them and which writes no checkpoint.
    pub fn checkpoint_image(&self) -> Option<CheckpointImage<'_>> {
        self.log().map(|la| {
            let segs = la.segments();
            CheckpointImage { l2p: la.l2p(), seqs: (0..segs.len()).map(|s| segs.seq(s)).collect() }
        })
    }
}

impl From<LogArray> for ArrayScheme {
    fn from(la: LogArray) -> Self {
        ArrayScheme::Log(Box::new(la))
    }
}

impl std::ops::Deref for ArrayScheme {
    type Target = dyn Scheme;

    fn deref(&self) -> &(dyn Scheme + 'static) {
        match self {
            ArrayScheme::InPlace(s) => s,
            ArrayScheme::Log(la) => la.as_ref(),
        }
    }
}

impl std::ops::DerefMut for ArrayScheme {
    fn deref_mut(&mut self) -> &mut (dyn Scheme + 'static) {
        match self {
            ArrayScheme::InPlace(s) => s,
            ArrayScheme::Log(la) => la.as_mut(),
        }
    }
}
