//! Zoned members at recovery: the write pointers are the truth.
//!
//! After a crash a zone may hold more than the map says: writes that reached the device
//! but no journal record. Two things follow, and both are done before the array serves:
//!
//! - **A free segment's zones are reset.** The scheme writes a free segment from its first
//!   row, which a zone takes only at pointer 0; and whatever a free segment's zones hold,
//!   no map names it.
//! - **An adopted segment is sealed where its zones stand.** A segment open at the last stop
//!   comes back with live blocks and no summary (`adopt.rs`). Where the members are written
//!   anywhere its summary is written in place; a zone takes a write only at its pointer, so
//!   here each member's zone is padded with zeroes from its pointer to the summary blocks it
//!   holds, which are then written (they are the segment's last slots, so those zones end
//!   full), and the zones holding none are finished (they hold active resources a device
//!   limits). The padded slots were never mapped: they are dead, as a summary says. This
//!   needs no free segment, so a crash when GC had the array down to its reserve does not
//!   keep it from serving again.
//! - **Or its summary is there already.** The crash may have come after a full segment's
//!   summary reached the members and before its seal was logged. A summary found whole
//!   behind the write pointers, naming this segment and each live block as the map does, is
//!   taken as the seal, with the number it carries.
//! - **Or, failing both, its live blocks move out.** When a summary block is already behind
//!   its zone's pointer (the crash came while the segment was being sealed, and a zone takes
//!   no second summary), or a member of its R-group is not healthy, the zones are finished
//!   and each live block is read, checked against the CRC the journal named for it, and
//!   written again as a user write into a fresh segment; the adopted segment is then left
//!   with nothing live, for GC to reset. A block that does not match its named CRC moves
//!   with that CRC, so it still reads as EIO rather than be blessed (RAID0 has no parity
//!   to rebuild it from).

use super::adopt::AdoptedSeals;
use super::Store;
use crate::engine::EngineError;
use crate::member::{Zone, BLOCK};
use swan_core::geometry::Geometry;
use swan_core::io::IoPlan;
use swan_core::summary::Summary;
use swan_models::zns::zones::ZoneCondition;

/// Filler blocks written at a time when a zone is padded to its summary.
const PAD_CHUNK_BLOCKS: u64 = 256;

/// What opening zoned members found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZonedOpen {
    /// Zones of free segments that held something and were reset.
    pub zones_reset: u64,
    /// Adopted segments whose summary was found whole on the members, taken as sealed.
    pub found_sealed: u64,
    /// Adopted segments sealed in place (their zones padded to the summary).
    pub sealed: u64,
    /// Filler blocks written to get there.
    pub padded: u64,
    /// Zones of adopted segments finished (made full where their pointers were).
    pub zones_finished: u64,
    /// Adopted segments emptied (their live blocks moved out).
    pub segments: u64,
    /// Live blocks moved out of them.
    pub moved: u64,
    /// Live blocks, sealed or moved, that matched the CRC a replayed journal record named.
    pub verified: u64,
    /// Live blocks, sealed or moved, that did not match it: they keep it, so they read as EIO.
    pub unreadable: u64,
}

impl Store {
    /// Reset free segments' zones and seal or empty the adopted segments (see the module
    /// comment). The caller syncs and checkpoints next.
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
        // The summaries found go first: their seal numbers are above every logged one, and
        // the seals given now number after them.
        // A seal writes to every member of the R-group: with one not healthy, the live
        // blocks move out instead.
        let (mut rest, mut to_move) = (Vec::new(), Vec::new());
        for &seg in adopted {
            if geo.group_members(geo.group_of_segment(seg)).any(|m| !self.io.members.is_healthy(m)) {
                to_move.push(seg);
            } else if !self.take_found_summary(&geo, seg, &reports, &mut out)? {
                rest.push(seg);
            }
        }
        for seg in rest {
            if !self.seal_in_zones(&geo, seg, &reports, &mut out)? {
                to_move.push(seg);
            }
        }
        self.move_out(&geo, &to_move, &reports, &mut out)?;
        Ok(out)
    }

    /// Emulating zoned members: tell each model what its member's zones hold once the open
    /// has reset, padded and finished them, which it did behind the models' backs.
    pub(super) fn show_zones_to_model(&mut self) -> Result<(), EngineError> {
        let Some(emu) = self.exec.emu.as_mut() else { return Ok(()) };
        for (m, member) in (0u32..).zip(self.io.members.iter()) {
            if !member.is_absent() && member.zoned().is_some() {
                emu.take_zone_report(m, &member.report_zones()?);
            }
        }
        Ok(())
    }

    /// Member `m`'s zone holding member block `block`, its first block and its state as the
    /// report read at open found it.
    fn zone_at(&self, reports: &[Vec<Zone>], m: u32, block: u64) -> Option<(u32, u64, Zone)> {
        let layout = self.io.members[m as usize].zoned()?;
        let zone = layout.zone_of(block)?;
        let z = *reports[m as usize].get(zone as usize)?;
        Some((zone, layout.zone_start(zone), z))
    }

    /// Finish member `m`'s zone of segment `seg` if the report found it written in part:
    /// nothing more is written there, and its active resources go back to the device.
    fn finish_open_zone(
        &self,
        geo: &Geometry,
        seg: u64,
        m: u32,
        reports: &[Vec<Zone>],
        out: &mut ZonedOpen,
    ) -> Result<(), EngineError> {
        let Some((zone, _, z)) = self.zone_at(reports, m, geo.row_block(seg, 0)) else { return Ok(()) };
        if z.write_pointer > 0 && z.condition != ZoneCondition::Full {
            self.io.members[m as usize].finish_zone(zone)?;
            out.zones_finished += 1;
        }
        Ok(())
    }

    /// Take adopted segment `seg`, its R-group healthy, as sealed if its whole summary is
    /// behind its zones' write pointers and agrees with the map (see the module comment);
    /// false, with nothing done, if not.
    fn take_found_summary(
        &mut self,
        geo: &Geometry,
        seg: u64,
        reports: &[Vec<Zone>],
        out: &mut ZonedOpen,
    ) -> Result<bool, EngineError> {
        let mut bytes = vec![0u8; geo.summary_blocks as usize * BLOCK];
        for index in 0..geo.summary_blocks {
            let (m, at) = geo.slot_location(seg, geo.payload_slots() + index);
            let Some((_, start, z)) = self.zone_at(reports, m, at) else { return Ok(false) };
            if at >= start + z.write_pointer {
                return Ok(false);
            }
            let i = index as usize * BLOCK;
            self.io.members[m as usize].read(at, &mut bytes[i..i + BLOCK])?;
        }
        let Ok(summary) = Summary::decode(&bytes) else { return Ok(false) };
        let live = self.scheme.live_blocks(seg);
        let agrees = summary.segment == seg
            && summary.seq > 0
            && summary.block_crcs
            && summary.entries.len() == geo.payload_slots() as usize
            && live.iter().all(|&(slot, lba)| {
                let e = &summary.entries[slot as usize];
                e.lba == lba && self.crcs.adopted.get(&geo.pba(seg, slot)).is_none_or(|&named| named == e.crc)
            });
        if !agrees {
            return Ok(false);
        }
        let mut block = vec![0u8; BLOCK];
        for &(slot, lba) in &live {
            let (m, at) = geo.slot_location(seg, slot);
            self.io.members[m as usize].read(at, &mut block)?;
            if crc32c::crc32c(&block) == summary.entries[slot as usize].crc {
                out.verified += 1;
            } else {
                out.unreadable += 1;
                eprintln!(
                    "swan: logical block {lba} (segment {seg}, member {m} block {at}) does not match the CRC its \
                     summary names: it reads as EIO until rewritten"
                );
            }
        }
        for m in geo.group_members(geo.group_of_segment(seg)) {
            self.finish_open_zone(geo, seg, m, reports, out)?;
        }
        self.scheme.seal_adopted_as(seg, summary.seq);
        for slot in 0..geo.payload_slots() {
            self.crcs.adopted.remove(&geo.pba(seg, slot));
        }
        out.found_sealed += 1;
        Ok(true)
    }

    /// Seal adopted segment `seg`, its R-group healthy, where the crash left its zones (see
    /// the module comment); false, with nothing done, where it cannot be.
    fn seal_in_zones(
        &mut self,
        geo: &Geometry,
        seg: u64,
        reports: &[Vec<Zone>],
        out: &mut ZonedOpen,
    ) -> Result<bool, EngineError> {
        // (member, block, summary index) of each summary block.
        let summary: Vec<(u32, u64, usize)> = (0..geo.summary_blocks)
            .map(|i| {
                let (m, at) = geo.slot_location(seg, geo.payload_slots() + i);
                (m, at, i as usize)
            })
            .collect();
        for &(m, at, _) in &summary {
            let Some((_, start, z)) = self.zone_at(reports, m, at) else { return Ok(false) };
            if z.condition == ZoneCondition::Full || at < start + z.write_pointer {
                return Ok(false);
            }
        }
        let mut seals = AdoptedSeals::default();
        let Some(bytes) = self.adopted_summary(geo, seg, &mut seals)? else { return Ok(false) };
        out.verified += seals.verified;
        out.unreadable += seals.unreadable;
        let zeroes = vec![0u8; PAD_CHUNK_BLOCKS as usize * BLOCK];
        for m in geo.group_members(geo.group_of_segment(seg)) {
            let mut mine: Vec<(u64, usize)> =
                summary.iter().filter(|s| s.0 == m).map(|&(_, at, index)| (at, index)).collect();
            if mine.is_empty() {
                self.finish_open_zone(geo, seg, m, reports, out)?;
                continue;
            }
            let Some((_, start, z)) = self.zone_at(reports, m, geo.row_block(seg, 0)) else { continue };
            let member = &self.io.members[m as usize];
            mine.sort_unstable();
            let mut pointer = start + z.write_pointer;
            for (at, index) in mine {
                while pointer < at {
                    let n = (at - pointer).min(PAD_CHUNK_BLOCKS);
                    member.write(pointer, &zeroes[..n as usize * BLOCK])?;
                    pointer += n;
                    out.padded += n;
                }
                member.write(at, &bytes[index * BLOCK..(index + 1) * BLOCK])?;
                pointer = at + 1;
            }
        }
        out.sealed += 1;
        Ok(true)
    }

    /// Finish the zones of `segments` and move their live blocks out as user writes (see the
    /// module comment).
    fn move_out(
        &mut self,
        geo: &Geometry,
        segments: &[u64],
        reports: &[Vec<Zone>],
        out: &mut ZonedOpen,
    ) -> Result<(), EngineError> {
        // The zones are finished first: nothing more is written there, and a device that
        // limits its active zones has room for the moves' new segment.
        for &seg in segments {
            for m in geo.group_members(geo.group_of_segment(seg)) {
                self.finish_open_zone(geo, seg, m, reports, out)?;
            }
        }
        let mut block = vec![0u8; BLOCK];
        for &seg in segments {
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
                    self.crcs.note(geo, new, n);
                }
                self.crcs.adopted.remove(&pba);
                out.moved += 1;
            }
            out.segments += 1;
        }
        self.wait_writes();
        Ok(())
    }
}
