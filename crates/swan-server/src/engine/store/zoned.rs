//! Zoned members at recovery: the write pointers are the truth.
//!
//! After a crash a zone may hold more than the map says: writes that reached the device
//! but no journal record. Two things follow, and both are done before the array serves:
//!
//! - **A free segment's zones are reset.** The scheme writes a free segment from its first
//!   row, which a zone takes only at pointer 0; and whatever a free segment's zones hold,
//!   no map names it.
//! - **An adopted segment's live blocks move out.** A segment open at the last stop comes
//!   back with live blocks and no summary (`adopt.rs`), and where the members are written
//!   anywhere it is sealed in place. A zone takes no summary after the last block the crash
//!   left there, so here its zones are finished (they hold active resources a device
//!   limits), and each live block is read, checked against the CRC the journal named for
//!   it, and written again as a user write into a fresh segment; the adopted segment is
//!   then left with nothing live, for GC to reset. A block that does not match
//!   its named CRC moves with that CRC, so it still reads as EIO rather than be blessed
//!   (RAID0 has no parity to rebuild it from).

use super::Store;
use crate::engine::EngineError;
use crate::member::BLOCK;
use swan_core::io::IoPlan;
use swan_models::zns::zones::ZoneCondition;

/// What opening zoned members found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZonedOpen {
    /// Zones of free segments that held something and were reset.
    pub zones_reset: u64,
    /// Zones of adopted segments finished (made full where their pointers were).
    pub zones_finished: u64,
    /// Adopted segments emptied.
    pub segments: u64,
    /// Live blocks moved out of them.
    pub moved: u64,
    /// Of those, blocks that matched the CRC a replayed journal record named for them.
    pub verified: u64,
    /// Of those, blocks that did not match it: moved with it, so they read as EIO.
    pub unreadable: u64,
}

impl Store {
    /// Reset free segments' zones and empty the adopted segments (see the module comment).
    /// The caller syncs and checkpoints next.
    pub(super) fn open_zoned(&mut self, adopted: &[u64]) -> Result<ZonedOpen, EngineError> {
        let mut out = ZonedOpen::default();
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(out) };
        let mut plan = IoPlan::new();
        self.scheme.plan_free_trims(&mut plan);
        let mut reports = Vec::with_capacity(self.io.members.len());
        for i in 0..self.io.members.len() {
            let m = &self.io.members[i];
            reports.push(if m.is_absent() { Vec::new() } else { m.report_zones()? });
        }
        for io in plan.ios() {
            let m = &self.io.members[io.member as usize];
            let Some(zone) = m.zoned().and_then(|l| l.zone_of(io.block)) else { continue };
            if reports[io.member as usize].get(zone as usize).is_some_and(|z| z.write_pointer > 0) {
                m.trim(io.block, u64::from(io.count))?;
                out.zones_reset += 1;
            }
        }
        // The adopted segments' zones are finished first: nothing more is written there,
        // and a device that limits its active zones has room for the moves' new segment.
        for &seg in adopted {
            for m in geo.group_members(geo.group_of_segment(seg)) {
                let member = &self.io.members[m as usize];
                let Some(zone) = member.zoned().and_then(|l| l.zone_of(geo.row_block(seg, 0))) else { continue };
                let z = reports[m as usize].get(zone as usize);
                if z.is_some_and(|z| z.write_pointer > 0 && z.condition != ZoneCondition::Full) {
                    member.finish_zone(zone)?;
                    out.zones_finished += 1;
                }
            }
        }
        let mut block = vec![0u8; BLOCK];
        for &seg in adopted {
            for (slot, lba) in self.scheme.live_blocks(seg) {
                let pba = geo.pba(seg, slot);
                let (m, at) = geo.slot_location(seg, slot);
                self.io.members[m as usize].read(at, &mut block)?;
                let found = crc32c::crc32c(&block);
                let named = self.crcs.adopted.get(&pba).copied();
                match named {
                    Some(n) if n == found => out.verified += 1,
                    Some(_) => {
                        out.unreadable += 1;
                        eprintln!(
                            "swan: logical block {lba} (segment {seg}, member {m} block {at}) does not match the CRC its \
                             journal record named: it moves with that CRC and reads as EIO until rewritten"
                        );
                    }
                    None => {}
                }
                if !self.write_block(lba, &block) {
                    return Err(EngineError::Zoned(format!(
                        "no free segment to move the live blocks of segment {seg}, open at the last stop, out of its \
                         zones; the array is full"
                    )));
                }
                if let (Some(n), Some(new)) = (named, self.scheme.slot_of(lba)) {
                    self.crcs.note(&geo, new, n);
                }
                self.crcs.adopted.remove(&pba);
                out.moved += 1;
            }
            out.segments += 1;
        }
        self.wait_writes();
        Ok(out)
    }
}
