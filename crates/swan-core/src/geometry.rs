//! Array geometry: where every block, segment, stripe row and parity block lives.
//!
//! This module is the one place that does layout arithmetic. Every other module asks it.
//!
//! ## Layout of the log-structured schemes (SWAN, Log-RAID)
//!
//! The array is a 2-D grid of SSDs (members): `rgroups` R-groups (columns of the paper's
//! Figure 3) of `ssds_per_rgroup` members each, striped inside the R-group as RAID0, RAID4
//! (dedicated parity member) or RAID5 (rotating parity, left-symmetric as mdadm's default).
//! Log-RAID is the degenerate grid of one R-group holding every SSD.
//!
//! Each member is cut into *rows* of one block. A **segment** is `segment_rows` consecutive
//! rows across all members of one R-group: `segment_rows` blocks (default 256 = 1 MiB) on each
//! member. Sizing the segment per member matches the paper's analytic model (§3.5), where
//! `Tw` is the time to write one segment to one SSD and a segment is 256 blocks, and makes
//! every TRIM of a victim a 1 MiB range on each SSD.
//!
//! The data *slots* of a segment are numbered row-major over its data columns: slot
//! `s` is row `s / data_members`, data column `s % data_members`, so consecutive log
//! appends land on different SSDs and an 8 KiB write uses two SSDs in parallel. The last
//! [`Geometry::summary_blocks`] slots of a segment hold its summary; the others are payload.
//!
//! Global segment numbers run R-group by R-group: segment `g * segments_per_group + i` is the
//! `i`-th segment of R-group `g`. A physical block address (PBA) is
//! `segment * data_slots + slot`.

use crate::divisor::Divisor;
use crate::io::{MemberBlock, MemberId};
use crate::summary;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// How an R-group stripes its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RaidLevel {
    /// Striping, no redundancy.
    Raid0,
    /// Striping with a dedicated parity member (the last of the R-group).
    Raid4,
    /// Striping with parity rotating over the members, left-symmetric.
    Raid5,
}

impl RaidLevel {
    /// Members per stripe row that hold parity.
    pub fn parity_members(self) -> u32 {
        match self {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid4 | RaidLevel::Raid5 => 1,
        }
    }

    /// The smallest number of members this level can be built from.
    pub fn min_members(self) -> u32 {
        match self {
            RaidLevel::Raid0 => 1,
            RaidLevel::Raid4 | RaidLevel::Raid5 => 2,
        }
    }

    pub fn digit(self) -> u8 {
        match self {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid4 => 4,
            RaidLevel::Raid5 => 5,
        }
    }
}

impl fmt::Display for RaidLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RAID{}", self.digit())
    }
}

/// An impossible geometry, with what would work instead.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum GeometryError {
    #[error("an array needs at least one R-group (got 0)")]
    NoRgroups,
    #[error("{raid} needs at least {min} SSDs per R-group (got {got}); use --ssds-per-rgroup {min} or more, or RAID0")]
    TooFewMembers { raid: RaidLevel, min: u32, got: u32 },
    #[error("segment of {got} rows is too small: a segment needs at least {min} rows (blocks per SSD) so its summary leaves room for data")]
    SegmentTooSmall { got: u32, min: u32 },
    #[error("each SSD holds {member_blocks} blocks, fewer than the {needed} needed for 2 segments of {segment_rows} blocks; use larger members or smaller segments")]
    MemberTooSmall { member_blocks: u64, needed: u64, segment_rows: u32 },
    #[error(
        "array of {members} SSDs with {blocks} blocks each is too large: physical addresses need more than 40 bits"
    )]
    TooLarge { members: u64, blocks: u64 },
}

/// The shape and size of a log-structured array (SWAN or Log-RAID).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "GeometryFields")]
pub struct Geometry {
    pub rgroups: u32,
    pub ssds_per_rgroup: u32,
    pub raid: RaidLevel,
    /// Blocks per member available to the array (after any reserved area).
    pub member_blocks: u64,
    /// First member block used by the array (room for a superblock on real members).
    pub member_offset: u64,
    /// Stripe rows per segment = blocks per member per segment.
    pub segment_rows: u32,
    // Derived, filled in by `new`:
    pub data_members: u32,
    pub segments_per_group: u64,
    pub data_slots: u32,
    pub summary_blocks: u32,
    /// The numbers above that block numbers are divided by, ready to divide by
    /// multiplication; `new` fills them from the fields, which no one changes after.
    #[serde(skip)]
    div: Divisors,
}

/// [`Geometry`]'s divisors ([`Divisor`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Divisors {
    ssds_per_rgroup: Divisor,
    segment_rows: Divisor,
    data_members: Divisor,
    segments_per_group: Divisor,
    data_slots: Divisor,
}

impl Default for Divisors {
    fn default() -> Self {
        let one = Divisor::new(1);
        Divisors {
            ssds_per_rgroup: one,
            segment_rows: one,
            data_members: one,
            segments_per_group: one,
            data_slots: one,
        }
    }
}

/// A geometry as it is written out: its divisors are worked out again when it is read back
/// (through [`Geometry::new`], which also checks it).
#[derive(Deserialize)]
struct GeometryFields {
    rgroups: u32,
    ssds_per_rgroup: u32,
    raid: RaidLevel,
    member_blocks: u64,
    member_offset: u64,
    segment_rows: u32,
}

impl TryFrom<GeometryFields> for Geometry {
    type Error = GeometryError;

    fn try_from(f: GeometryFields) -> Result<Self, GeometryError> {
        Geometry::new(f.rgroups, f.ssds_per_rgroup, f.raid, f.member_blocks, f.member_offset, f.segment_rows)
    }
}

impl Geometry {
    /// Lay out `rgroups` × `ssds_per_rgroup` members of `member_blocks` blocks each.
    pub fn new(
        rgroups: u32,
        ssds_per_rgroup: u32,
        raid: RaidLevel,
        member_blocks: u64,
        member_offset: u64,
        segment_rows: u32,
    ) -> Result<Self, GeometryError> {
        if rgroups == 0 {
            return Err(GeometryError::NoRgroups);
        }
        if ssds_per_rgroup < raid.min_members() {
            return Err(GeometryError::TooFewMembers { raid, min: raid.min_members(), got: ssds_per_rgroup });
        }
        let data_members = ssds_per_rgroup - raid.parity_members();
        let min_rows = 4;
        if segment_rows < min_rows {
            return Err(GeometryError::SegmentTooSmall { got: segment_rows, min: min_rows });
        }
        let usable = member_blocks.saturating_sub(member_offset);
        let segments_per_group = usable / u64::from(segment_rows);
        if segments_per_group < 2 {
            return Err(GeometryError::MemberTooSmall {
                member_blocks,
                needed: member_offset + 2 * u64::from(segment_rows),
                segment_rows,
            });
        }
        let data_slots = segment_rows * data_members;
        let summary_blocks = summary::blocks_needed(data_slots);
        if summary_blocks * 2 > data_slots {
            return Err(GeometryError::SegmentTooSmall { got: segment_rows, min: segment_rows * 2 });
        }
        let total_slots = u64::from(rgroups) * segments_per_group * u64::from(data_slots);
        if total_slots >= crate::l2p::UNMAPPED {
            return Err(GeometryError::TooLarge {
                members: u64::from(rgroups * ssds_per_rgroup),
                blocks: member_blocks,
            });
        }
        Ok(Self {
            rgroups,
            ssds_per_rgroup,
            raid,
            member_blocks,
            member_offset,
            segment_rows,
            data_members,
            segments_per_group,
            data_slots,
            summary_blocks,
            div: Divisors {
                ssds_per_rgroup: Divisor::new(u64::from(ssds_per_rgroup)),
                segment_rows: Divisor::new(u64::from(segment_rows)),
                data_members: Divisor::new(u64::from(data_members)),
                segments_per_group: Divisor::new(segments_per_group),
                data_slots: Divisor::new(u64::from(data_slots)),
            },
        })
    }

    pub fn members(&self) -> u32 {
        self.rgroups * self.ssds_per_rgroup
    }

    pub fn segments(&self) -> u64 {
        u64::from(self.rgroups) * self.segments_per_group
    }

    /// Slots of a segment that carry user data (the rest hold the summary).
    pub fn payload_slots(&self) -> u32 {
        self.data_slots - self.summary_blocks
    }

    /// The first member block past the segments (where a partial-parity log begins).
    pub fn segments_end(&self) -> MemberBlock {
        self.member_offset + self.segments_per_group * u64::from(self.segment_rows)
    }

    /// Blocks of user data the whole array can hold physically.
    pub fn payload_blocks(&self) -> u64 {
        self.segments() * u64::from(self.payload_slots())
    }

    #[inline]
    pub fn group_of_segment(&self, segment: u64) -> u32 {
        self.div.segments_per_group.quotient(segment) as u32
    }

    #[inline]
    pub fn first_segment_of_group(&self, group: u32) -> u64 {
        u64::from(group) * self.segments_per_group
    }

    /// The members of R-group `group`, column by column.
    pub fn group_members(&self, group: u32) -> impl Iterator<Item = MemberId> + '_ {
        (0..self.ssds_per_rgroup).map(move |c| self.member(group, c))
    }

    #[inline]
    pub fn member(&self, group: u32, column: u32) -> MemberId {
        group * self.ssds_per_rgroup + column
    }

    /// The member block holding row `row` (0-based within the segment) of `segment`.
    #[inline]
    pub fn row_block(&self, segment: u64, row: u32) -> MemberBlock {
        let local = self.div.segments_per_group.remainder(segment);
        self.member_offset + local * u64::from(self.segment_rows) + u64::from(row)
    }

    /// Which column of its R-group holds the parity of the stripe row at member block `row_block`.
    #[inline]
    pub fn parity_column(&self, row_block: MemberBlock) -> Option<u32> {
        let k = self.ssds_per_rgroup;
        match self.raid {
            RaidLevel::Raid0 => None,
            RaidLevel::Raid4 => Some(k - 1),
            RaidLevel::Raid5 => Some(k - 1 - self.div.ssds_per_rgroup.remainder(row_block) as u32),
        }
    }

    /// The column of data column `data_col` in the stripe row at `row_block`.
    #[inline]
    pub fn data_column(&self, row_block: MemberBlock, data_col: u32) -> u32 {
        match self.parity_column(row_block) {
            None => data_col,
            Some(p) if self.raid == RaidLevel::Raid4 => {
                debug_assert!(data_col < p);
                data_col
            }
            // Left-symmetric: data starts just after the parity column and wraps.
            Some(p) => self.div.ssds_per_rgroup.remainder(u64::from(p + 1 + data_col)) as u32,
        }
    }

    /// Where slot `slot` of `segment` lives: (member, member block).
    #[inline]
    pub fn slot_location(&self, segment: u64, slot: u32) -> (MemberId, MemberBlock) {
        debug_assert!(slot < self.data_slots);
        debug_assert_eq!(self.div.data_members.get(), u64::from(self.data_members), "a geometry changed after new");
        let (row, data_col) = self.div.data_members.div_rem(u64::from(slot));
        let (row, data_col) = (row as u32, data_col as u32);
        let block = self.row_block(segment, row);
        let group = self.group_of_segment(segment);
        (self.member(group, self.data_column(block, data_col)), block)
    }

    /// The segment and data slot stored at `block` of `member`, if it is a data slot
    /// (not parity, not outside the segments): the inverse of [`Geometry::slot_location`].
    pub fn slot_at(&self, member: MemberId, block: MemberBlock) -> Option<(u64, u32)> {
        let rel = block.checked_sub(self.member_offset)?;
        let (local, row) = self.div.segment_rows.div_rem(rel);
        if local >= self.segments_per_group || member >= self.members() {
            return None;
        }
        let (group, column) = self.div.ssds_per_rgroup.div_rem(u64::from(member));
        let (group, column) = (group as u32, column as u32);
        let segment = self.first_segment_of_group(group) + local;
        let row = row as u32;
        let k = self.ssds_per_rgroup;
        let data_col = match (self.raid, self.parity_column(block)) {
            (_, None) => column,
            (_, Some(p)) if p == column => return None,
            (RaidLevel::Raid4, Some(_)) => column,
            (_, Some(p)) => (column + k - p - 1) % k,
        };
        Some((segment, row * self.data_members + data_col))
    }

    /// Whether `slot` completes a stripe row (its parity can then be written).
    #[inline]
    pub fn slot_ends_row(&self, slot: u32) -> bool {
        self.div.data_members.remainder(u64::from(slot) + 1) == 0
    }

    #[inline]
    pub fn pba(&self, segment: u64, slot: u32) -> u64 {
        segment * u64::from(self.data_slots) + u64::from(slot)
    }

    #[inline]
    pub fn split_pba(&self, pba: u64) -> (u64, u32) {
        let (segment, slot) = self.div.data_slots.div_rem(pba);
        (segment, slot as u32)
    }

    /// The segment of `pba` (the first half of [`Geometry::split_pba`]).
    #[inline]
    pub fn segment_of_pba(&self, pba: u64) -> u64 {
        self.div.data_slots.quotient(pba)
    }
}

/// The layout of an in-place RAID0/4/5 array (what mdadm does): the volume is striped in
/// chunks over all members, and a logical block always lives at the same place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StripeGeometry {
    pub members: u32,
    pub raid: RaidLevel,
    /// Blocks per chunk (mdadm's default chunk is 512 KiB = 128 blocks).
    pub chunk_blocks: u32,
    pub member_blocks: u64,
    pub member_offset: u64,
    /// Whole stripes that fit on the members.
    pub stripes: u64,
}

impl StripeGeometry {
    pub fn new(
        members: u32,
        raid: RaidLevel,
        chunk_blocks: u32,
        member_blocks: u64,
        member_offset: u64,
    ) -> Result<Self, GeometryError> {
        if members < raid.min_members() {
            return Err(GeometryError::TooFewMembers { raid, min: raid.min_members(), got: members });
        }
        if chunk_blocks == 0 {
            return Err(GeometryError::SegmentTooSmall { got: 0, min: 1 });
        }
        let stripes = member_blocks.saturating_sub(member_offset) / u64::from(chunk_blocks);
        if stripes == 0 {
            return Err(GeometryError::MemberTooSmall {
                member_blocks,
                needed: member_offset + u64::from(chunk_blocks),
                segment_rows: chunk_blocks,
            });
        }
        Ok(Self { members, raid, chunk_blocks, member_blocks, member_offset, stripes })
    }

    pub fn data_members(&self) -> u32 {
        self.members - self.raid.parity_members()
    }

    /// Blocks of data per full stripe.
    pub fn stripe_data_blocks(&self) -> u64 {
        u64::from(self.chunk_blocks) * u64::from(self.data_members())
    }

    pub fn volume_blocks(&self) -> u64 {
        self.stripes * self.stripe_data_blocks()
    }

    pub fn parity_member(&self, stripe: u64) -> Option<u32> {
        let k = self.members;
        match self.raid {
            RaidLevel::Raid0 => None,
            RaidLevel::Raid4 => Some(k - 1),
            RaidLevel::Raid5 => Some(k - 1 - (stripe % u64::from(k)) as u32),
        }
    }

    /// (stripe, member, member block) of logical block `lba`.
    pub fn locate(&self, lba: u64) -> (u64, MemberId, MemberBlock) {
        let per_stripe = self.stripe_data_blocks();
        let stripe = lba / per_stripe;
        let within = lba % per_stripe;
        let data_col = (within / u64::from(self.chunk_blocks)) as u32;
        let offset = within % u64::from(self.chunk_blocks);
        let member = match self.parity_member(stripe) {
            None => data_col,
            Some(p) if self.raid == RaidLevel::Raid4 => {
                let _ = p;
                data_col
            }
            Some(p) => (p + 1 + data_col) % self.members,
        };
        (stripe, member, self.stripe_block(stripe) + offset)
    }

    /// First member block of `stripe` on every member.
    pub fn stripe_block(&self, stripe: u64) -> MemberBlock {
        self.member_offset + stripe * u64::from(self.chunk_blocks)
    }

    /// The logical block at `block` of `member`, the inverse of [`StripeGeometry::locate`];
    /// None for parity and for blocks outside the stripes.
    pub fn lba_at(&self, member: MemberId, block: MemberBlock) -> Option<u64> {
        let chunk = u64::from(self.chunk_blocks);
        let row = block.checked_sub(self.member_offset).filter(|&r| r < self.stripes * chunk)?;
        if member >= self.members {
            return None;
        }
        let (stripe, offset) = (row / chunk, row % chunk);
        let data_col = match self.parity_member(stripe) {
            None => member,
            Some(p) if p == member => return None,
            // RAID4's parity is the last member: data columns are the members before it.
            Some(_) if self.raid == RaidLevel::Raid4 => member,
            // RAID5's data columns start after the stripe's parity member, wrapping.
            Some(p) => (member + self.members - p - 1) % self.members,
        };
        Some(stripe * self.stripe_data_blocks() + u64::from(data_col) * chunk + offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn lba_at_inverts_locate() {
        for raid in [RaidLevel::Raid0, RaidLevel::Raid4, RaidLevel::Raid5] {
            let g = StripeGeometry::new(4, raid, 8, 5 + 8 * 7 + 3, 5).unwrap();
            let mut data = BTreeSet::new();
            for m in 0..g.members {
                for b in 0..g.member_blocks + 2 {
                    match g.lba_at(m, b) {
                        Some(lba) => {
                            let (_, member, block) = g.locate(lba);
                            assert_eq!((member, block), (m, b), "{raid:?} member {m} block {b}: lba {lba}");
                            assert!(data.insert(lba), "{raid:?}: lba {lba} twice");
                        }
                        None => {
                            let inside = (5..5 + 8 * 7).contains(&b);
                            let parity = inside && g.parity_member((b - 5) / 8) == Some(m);
                            assert!(parity || !inside, "{raid:?} member {m} block {b}: data without an lba");
                        }
                    }
                }
            }
            assert_eq!(data.len() as u64, g.stripes * g.stripe_data_blocks(), "{raid:?}: every lba once");
            assert_eq!(data.last().copied(), Some(g.stripes * g.stripe_data_blocks() - 1));
            assert_eq!(g.lba_at(4, 5), None, "{raid:?}: no member 4");
        }
    }

    #[test]
    fn slot_at_inverts_slot_location() {
        for raid in [RaidLevel::Raid0, RaidLevel::Raid4, RaidLevel::Raid5] {
            let g = Geometry::new(2, 4, raid, 3 + 4 * 16, 3, 16).unwrap();
            let mut data = 0;
            for m in 0..g.members() {
                for b in 0..g.member_blocks + 2 {
                    if let Some((seg, slot)) = g.slot_at(m, b) {
                        assert_eq!(g.slot_location(seg, slot), (m, b), "{raid:?} member {m} block {b}");
                        data += 1;
                    } else if (3..3 + 4 * 16).contains(&b) {
                        // Only parity inside the segments has no slot.
                        assert_eq!(g.parity_column(b), Some(m % 4), "{raid:?} member {m} block {b}");
                    }
                }
            }
            assert_eq!(data, g.segments() * u64::from(g.data_slots));
        }
    }

    #[test]
    fn every_slot_has_its_own_place() {
        for raid in [RaidLevel::Raid0, RaidLevel::Raid4, RaidLevel::Raid5] {
            let g = Geometry::new(3, 3, raid, 4 * 16, 0, 16).unwrap();
            let mut seen = BTreeSet::new();
            for seg in 0..g.segments() {
                for slot in 0..g.data_slots {
                    let (m, b) = g.slot_location(seg, slot);
                    assert_eq!(m / g.ssds_per_rgroup, g.group_of_segment(seg));
                    if let Some(p) = g.parity_column(b) {
                        assert_ne!(m % g.ssds_per_rgroup, p, "data on the parity column");
                    }
                    assert!(seen.insert((m, b)), "{raid}: slot placed twice");
                }
            }
            let parity: u32 = if raid == RaidLevel::Raid0 { 0 } else { 1 };
            assert_eq!(seen.len() as u64, g.segments() * 16 * u64::from(3 - parity));
        }
    }

    #[test]
    fn raid5_parity_rotates_over_every_member() {
        let g = Geometry::new(1, 4, RaidLevel::Raid5, 64, 0, 16).unwrap();
        let cols: BTreeSet<u32> = (0..4).map(|r| g.parity_column(r).unwrap()).collect();
        assert_eq!(cols.len(), 4);
    }

    #[test]
    fn summary_of_a_1mib_segment_takes_its_share() {
        // 4R-2SSD: 2 data members × 256 rows = 512 slots.
        let g = Geometry::new(4, 2, RaidLevel::Raid0, 1 << 15, 0, 256).unwrap();
        assert_eq!(g.data_slots, 512);
        assert!(g.summary_blocks >= 1 && g.summary_blocks <= 4);
    }

    #[test]
    fn impossible_geometries_say_what_would_work() {
        assert_eq!(Geometry::new(0, 2, RaidLevel::Raid0, 1024, 0, 16), Err(GeometryError::NoRgroups));
        let e = Geometry::new(2, 1, RaidLevel::Raid5, 1024, 0, 16).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
        let e = Geometry::new(2, 2, RaidLevel::Raid0, 20, 0, 16).unwrap_err();
        assert!(matches!(e, GeometryError::MemberTooSmall { .. }), "{e}");
    }

    #[test]
    fn stripe_layout_covers_each_member_block_once() {
        for raid in [RaidLevel::Raid0, RaidLevel::Raid4, RaidLevel::Raid5] {
            let s = StripeGeometry::new(4, raid, 8, 64, 0).unwrap();
            let mut seen = BTreeSet::new();
            for lba in 0..s.volume_blocks() {
                let (stripe, m, b) = s.locate(lba);
                assert_ne!(Some(m), s.parity_member(stripe));
                assert!(seen.insert((m, b)));
            }
        }
    }
}
