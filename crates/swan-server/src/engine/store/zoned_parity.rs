//! Parity over zoned members at recovery: what sealing a segment in its zones writes, and
//! the rows a crash left with parity that does not match their data.
//!
//! Over plain members recovery rewrites every row's parity of the segments open at a crash
//! ([`Store::reparity_adopted`]). A zone takes a slot once, so here each row past the zones'
//! write pointers is written whole, parity included, and a row whose parity landed is taken
//! as it is. A crash may have left such a row wrong: its parity landed and a data write did
//! not, or either landed torn. Its data still reads (each block has its CRC); only a member
//! lost later would find the row's parity wrong. So its live blocks move out as user
//! writes, while there is room, each checked against its CRC first.
//!
//! [`Store::reparity_adopted`]: super::Store

use super::Store;
use crate::engine::EngineError;
use crate::member::BLOCK;
use crate::members::Members;
use swan_core::geometry::Geometry;
use swan_core::summary::{Summary, DEAD};

/// A live block of a row whose parity does not match its data: (logical block, member,
/// member block, the CRC its segment's summary records).
pub(super) type WeakBlock = (u64, u32, u64, u32);

impl Store {
    /// Rows of `seg` whose parity reached its member (`landed`: rows each column holds) and
    /// is not the XOR of what the data columns hold, those that did not land reading as the
    /// zeroes they are padded with.
    pub(super) fn uneven_rows(
        &self,
        geo: &Geometry,
        seg: u64,
        cols: &[u32],
        landed: &[u64],
    ) -> Result<Vec<u32>, EngineError> {
        let (mut one, mut acc) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
        let mut uneven = Vec::new();
        for row in 0..geo.segment_rows {
            let block = geo.row_block(seg, row);
            let Some(pc) = geo.parity_column(block) else { break };
            if u64::from(row) >= landed[pc as usize] {
                continue;
            }
            let members = cols.iter().map(|&m| &self.io.members[m as usize]);
            if !crate::parity::row_is_consistent(members, block, &mut one, &mut acc)? {
                uneven.push(row);
            }
        }
        Ok(uneven)
    }

    /// Add the live blocks of `seg`'s `rows` to `weak`, with the CRCs `summary` records.
    pub(super) fn note_weak(
        &self,
        geo: &Geometry,
        seg: u64,
        rows: &[u32],
        summary: &Summary,
        weak: &mut Vec<WeakBlock>,
    ) {
        for &row in rows {
            let block = geo.row_block(seg, row);
            for m in geo.group_members(geo.group_of_segment(seg)) {
                let Some((s, slot)) = geo.slot_at(m, block) else { continue };
                let Some(e) = summary.entries.get(slot as usize).filter(|e| s == seg && e.lba != DEAD) else {
                    continue;
                };
                if self.scheme.slot_of(e.lba) == Some(geo.pba(seg, slot)) {
                    weak.push((e.lba, m, block, e.crc));
                }
            }
        }
    }

    /// [`Store::note_weak`] of sealed segment `seg`, whole in its zones, every member of its
    /// R-group healthy (else nothing can be checked), from the summary on the members.
    pub(super) fn note_weak_of_sealed(
        &self,
        geo: &Geometry,
        seg: u64,
        weak: &mut Vec<WeakBlock>,
    ) -> Result<(), EngineError> {
        let cols: Vec<u32> = geo.group_members(geo.group_of_segment(seg)).collect();
        if cols.iter().any(|&m| !self.io.members.is_healthy(m)) {
            return Ok(());
        }
        let uneven = self.uneven_rows(geo, seg, &cols, &vec![u64::from(geo.segment_rows); cols.len()])?;
        if uneven.is_empty() {
            return Ok(());
        }
        let mut buf = Vec::new();
        crate::summaries::read_raw(&self.io.members, geo, seg, &mut buf)?;
        match Summary::decode(&buf) {
            Ok(s) => self.note_weak(geo, seg, &uneven, &s, weak),
            Err(e) => {
                eprintln!("swan: segment {seg}: rows whose parity does not match their data, and no summary: {e}")
            }
        }
        Ok(())
    }

    /// Move the `weak` blocks that still match their CRC out as user writes, while the
    /// array has room; a block that does not match stays, and reads as EIO. Returns the
    /// blocks moved and those left for want of room.
    pub(super) fn move_weak(&mut self, weak: &[WeakBlock]) -> (u64, u64) {
        let mut block = vec![0u8; BLOCK];
        let (mut moved, mut left) = (0, 0);
        for (i, &(lba, m, at, crc)) in weak.iter().enumerate() {
            let readable = self.io.read(m, at, &mut block).is_ok() && crc32c::crc32c(&block) == crc;
            if !readable {
                continue;
            }
            if !self.write_block(lba, &block) {
                left = (weak.len() - i) as u64;
                eprintln!(
                    "swan: {left} live block(s) in stripe rows whose parity a crash left not matching their data stay \
                     there for want of a free segment: each still reads (its CRC is checked), and GC moves it"
                );
                break;
            }
            moved += 1;
        }
        if moved > 0 {
            self.wait_writes();
        }
        (moved, left)
    }
}

/// What sealing a segment in its zones writes past each member's write pointer: zeroes for
/// the data slots that never landed, the summary in its slots, and each row's parity as the
/// XOR of what its data columns then hold.
pub(super) struct ZoneFill<'a> {
    pub geo: &'a Geometry,
    pub seg: u64,
    /// The R-group's members, column by column, and the rows each holds.
    pub cols: &'a [u32],
    pub landed: &'a [u64],
    pub summary: &'a [u8],
}

impl ZoneFill<'_> {
    /// The summary block at (`row`, column `c`), if that slot is one.
    fn summary_at(&self, row: u32, c: usize) -> Option<&[u8]> {
        let block = self.geo.row_block(self.seg, row);
        let (_, slot) = self.geo.slot_at(self.cols[c], block)?;
        let index = slot.checked_sub(self.geo.payload_slots())? as usize;
        Some(&self.summary[index * BLOCK..(index + 1) * BLOCK])
    }

    /// Whether (`row`, column `c`) is the row's parity.
    fn is_parity(&self, row: u32, c: usize) -> bool {
        self.geo.parity_column(self.geo.row_block(self.seg, row)) == Some(c as u32)
    }

    /// Rows column `c` must hold once sealed: up to its last summary block, or its last
    /// parity of a row whose XOR may not be zero (a row holding landed data or summary).
    /// Past that the zone is finished and reads as the zeroes it should hold.
    pub fn rows_to_write(&self, c: usize) -> u32 {
        let front = self.landed.iter().copied().max().unwrap_or(0);
        (self.landed[c] as u32..self.geo.segment_rows)
            .rev()
            .find(|&row| {
                self.summary_at(row, c).is_some()
                    || (self.is_parity(row, c)
                        && (u64::from(row) < front || (0..self.cols.len()).any(|d| self.summary_at(row, d).is_some())))
            })
            .map_or(self.landed[c] as u32, |row| row + 1)
    }

    /// The bytes column `c` takes at `row` (past its write pointer), and whether they are
    /// filler.
    pub fn block(&self, members: &Members, row: u32, c: usize) -> Result<(Vec<u8>, bool), EngineError> {
        if let Some(s) = self.summary_at(row, c) {
            return Ok((s.to_vec(), false));
        }
        if !self.is_parity(row, c) {
            return Ok((vec![0u8; BLOCK], true));
        }
        let block = self.geo.row_block(self.seg, row);
        let (mut parity, mut one) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
        for d in (0..self.cols.len()).filter(|&d| d != c) {
            if let Some(s) = self.summary_at(row, d) {
                crate::parity::xor(&mut parity, s);
            } else if u64::from(row) < self.landed[d] {
                members[self.cols[d] as usize].read(block, &mut one)?;
                crate::parity::xor(&mut parity, &one);
            }
        }
        Ok((parity, false))
    }
}
