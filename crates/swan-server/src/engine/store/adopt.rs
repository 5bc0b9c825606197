//! Segments adopted at recovery get a summary before the array serves writes.
//!
//! A segment still open when the server last stopped comes back with live blocks and no
//! summary ([`LogArray::adopted_segments`]). Without one its blocks would be checked only
//! against CRCs held in memory until the next stop, and a block the replayed journal did not
//! name against nothing at all. So at the first point the array holds such a segment as its
//! own, every live block is read and checked against the CRC the journal named for it (a
//! mismatch is rebuilt from its row where the row's parity allows, else the journal's CRC is
//! kept, and the block stays unreadable rather than be blessed), and the segment is sealed
//! with a summary carrying each block's CRC. A block no record named gets the CRC of what
//! the member holds now: that is the first time the array can say what it holds.
//!
//! [`LogArray::adopted_segments`]: swan_core::scheme::LogArray::adopted_segments

use super::Store;
use crate::member::{MemberError, BLOCK};
use swan_core::geometry::Geometry;
use swan_core::summary::DEAD;

/// What sealing the adopted segments found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AdoptedSeals {
    /// Segments sealed now.
    pub segments: u64,
    /// Live blocks that matched the CRC a replayed journal record named for them.
    pub verified: u64,
    /// Live blocks no record named: their CRC is taken from what the member holds.
    pub first_crcs: u64,
    /// Blocks that did not match their named CRC and were rebuilt from parity.
    pub repaired: u64,
    /// Blocks that did not match their named CRC and could not be rebuilt: they keep the
    /// journal's CRC, so reads of them fail.
    pub unreadable: u64,
    /// Segments left adopted because a member of their R-group is not healthy.
    pub left_degraded: u64,
}

impl Store {
    /// Seal each of `adopted` whose R-group is whole (see the module comment). The caller
    /// gives their rows parity next and syncs; the checkpoint after that makes the seals
    /// durable (a crash before it adopts the segments again, and this runs again).
    pub(super) fn seal_adopted(&mut self, adopted: &[u64]) -> Result<AdoptedSeals, MemberError> {
        let mut out = AdoptedSeals::default();
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(out) };
        for &seg in adopted {
            let group = geo.group_of_segment(seg);
            if geo.group_members(group).any(|m| !self.io.members.is_healthy(m)) {
                out.left_degraded += 1;
                continue;
            }
            let Some(bytes) = self.adopted_summary(&geo, seg, &mut out)? else { break };
            for index in 0..geo.summary_blocks {
                let (m, at) = geo.slot_location(seg, geo.payload_slots() + index);
                let at_byte = index as usize * BLOCK;
                self.io.members[m as usize].write(at, &bytes[at_byte..at_byte + BLOCK])?;
            }
        }
        Ok(out)
    }

    /// Seal adopted segment `seg` in the scheme and give back its summary's bytes, each live
    /// block checked against the CRC the journal named for it (see the module comment);
    /// None if the scheme has no such segment to seal. The caller writes the summary.
    pub(super) fn adopted_summary(
        &mut self,
        geo: &Geometry,
        seg: u64,
        out: &mut AdoptedSeals,
    ) -> Result<Option<Vec<u8>>, MemberError> {
        let mut block = vec![0u8; BLOCK];
        // The live blocks, from the map (the segment has no summary to read them from).
        let Some(mut summary) = self.scheme.seal_adopted(seg) else { return Ok(None) };
        for (slot, entry) in summary.entries.iter_mut().enumerate() {
            if entry.lba == DEAD {
                continue;
            }
            let pba = geo.pba(seg, slot as u32);
            let (m, at) = geo.slot_location(seg, slot as u32);
            self.io.members[m as usize].read(at, &mut block)?;
            let found = crc32c::crc32c(&block);
            entry.crc = match self.crcs.adopted.get(&pba).copied() {
                None => {
                    out.first_crcs += 1;
                    found
                }
                Some(named) if named == found => {
                    out.verified += 1;
                    named
                }
                Some(named) => {
                    let rebuilt =
                        self.io.members.rebuild(m, at, &mut block)?.is_some() && crc32c::crc32c(&block) == named;
                    // A zone takes no rewrite: there the block is rebuilt on each read
                    // until GC moves it.
                    if rebuilt && self.io.members[m as usize].zoned().is_none() {
                        self.io.members[m as usize].write(at, &block)?;
                    }
                    if rebuilt {
                        out.repaired += 1;
                    } else {
                        out.unreadable += 1;
                    }
                    eprintln!(
                        "swan: logical block {} (segment {seg}, member {m} block {at}) does not match the CRC \
                         its journal record named: {}",
                        entry.lba,
                        if rebuilt { "rebuilt from parity" } else { "it reads as EIO until rewritten" }
                    );
                    named
                }
            };
        }
        summary.block_crcs = true;
        for slot in 0..geo.payload_slots() {
            self.crcs.adopted.remove(&geo.pba(seg, slot));
        }
        out.segments += 1;
        Ok(Some(summary.encode(geo.summary_blocks)))
    }
}
