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
//!   here each member's zone is written on from its pointer: zeroes in the data slots that
//!   never landed, the summary in its slots (the segment's last), and with parity each
//!   row's parity as the XOR of what its data columns then hold ([`ZoneFill`]). A zone
//!   holding nothing more to write is finished where it stands (it holds active resources
//!   a device limits, and reads as the zeroes it should hold). The padded slots were never
//!   mapped: they are dead, as a summary says. This needs no free segment, so a crash when
//!   GC had the array down to its reserve does not keep it from serving again.
//! - **Or its summary is there already.** The crash may have come after a full segment's
//!   summary reached the members and before its seal was logged. A summary found whole
//!   behind the write pointers (with parity, the whole segment), naming this segment and
//!   each live block as the map does, is taken as the seal, with the number it carries.
//! - **Or, failing both, its live blocks move out.** When a summary block is already behind
//!   its zone's pointer (the crash came while the segment was being sealed, and a zone takes
//!   no second summary), or a member of its R-group is not healthy, the zones are finished
//!   and each live block is read (a failed member's rebuilt from its row), checked against
//!   the CRC the journal named for it, and written again as a user write into a fresh
//!   segment; the adopted segment is then left with nothing live, for GC to reset. A block
//!   that does not match its named CRC is rebuilt from its row where that matches, else
//!   moves with that CRC, so it still reads as EIO rather than be blessed.
//! - **A segment sealed by a record written before its data was synced** whose zones do
//!   not all hold it whole lacks some of its parity or summary, which a zone cannot take
//!   now: its live blocks move out too.
//! - **With parity, rows whose parity landed but does not match their data** (a data write
//!   lost or torn by the crash) have their live blocks moved out while there is room
//!   (`zoned_parity.rs`).

use super::adopt::AdoptedSeals;
use super::zoned_parity::{WeakBlock, ZoneFill};
use super::Store;
use crate::engine::EngineError;
use crate::member::{MemberError, Zone, BLOCK};
use swan_core::geometry::{Geometry, RaidLevel};
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
    /// Live blocks in rows whose parity a crash left not matching their data, moved out
    /// ([`Store::move_weak`]), and those left for want of room.
    pub weak_moved: u64,
    pub weak_left: u64,
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
        let (mut rest, mut to_move, mut weak) = (Vec::new(), Vec::new(), Vec::new());
        for &seg in adopted {
            if geo.group_members(geo.group_of_segment(seg)).any(|m| !self.io.members.is_healthy(m)) {
                to_move.push(seg);
            } else if !self.take_found_summary(&geo, seg, &reports, &mut out, &mut weak)? {
                rest.push(seg);
            }
        }
        for seg in rest {
            if !self.seal_in_zones(&geo, seg, &reports, &mut out, &mut weak)? {
                to_move.push(seg);
            }
        }
        // Sealed by a journal record written before their data was synced: the record
        // landed, and its blocks did, but a zone short of the segment's end lacks some of
        // its parity or summary, which it cannot take now. Moving the live blocks out is
        // what is left.
        for seg in std::mem::take(&mut self.unsynced_seals) {
            if adopted.contains(&seg) || self.scheme.live_blocks(seg).is_empty() {
                continue;
            }
            if !self.zones_whole(&geo, seg, &reports) {
                to_move.push(seg);
            } else if geo.raid != RaidLevel::Raid0 {
                self.note_weak_of_sealed(&geo, seg, &mut weak)?;
            }
        }
        self.move_out(&geo, &to_move, &reports, &mut out)?;
        (out.weak_moved, out.weak_left) = self.move_weak(&weak);
        Ok(out)
    }

    /// At a clean stop over zones: give each stripe row still filling the parity of what
    /// it holds, at its parity slot, where rewriting every row's parity is what plain members
    /// do. A zone takes that slot once; the row's other slots then hold zeroes as far as the
    /// parity knows, and are padded so when the next start seals the segment. Rows of a
    /// degraded R-group are left as they are (see [`Store::parity_of_open_segments`]).
    /// Returns the rows given parity.
    pub(super) fn parity_of_open_rows_in_zones(&mut self, geo: &Geometry) -> Result<u64, MemberError> {
        let mut rows: Vec<(u32, u64, Vec<u8>)> = Vec::new();
        for (group, block, open) in self.io.rows.iter() {
            let Some(pc) = geo.parity_column(block) else { continue };
            if geo.group_members(group).any(|m| !self.io.members.is_healthy(m)) {
                continue;
            }
            rows.push((geo.member(group, pc), block, open.xor.clone()));
        }
        rows.sort_unstable_by_key(|r| (r.0, r.1));
        let mut written = 0;
        for (m, block, xor) in rows {
            let member = &self.io.members[m as usize];
            let Some(layout) = member.zoned() else { continue };
            let Some(zone) = layout.zone_of(block) else { continue };
            let z = member.report_zones()?[zone as usize];
            // Its pointer is at the row unless the row's parity slot is not next (it always
            // is: a zone's earlier rows were written before this row opened).
            if layout.zone_start(zone) + z.write_pointer == block && z.condition != ZoneCondition::Full {
                member.write(block, &xor)?;
                written += 1;
            }
        }
        Ok(written)
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

    /// Whether every healthy member of `seg`'s R-group holds the segment whole in its zone.
    fn zones_whole(&self, geo: &Geometry, seg: u64, reports: &[Vec<Zone>]) -> bool {
        let (first, rows) = (geo.row_block(seg, 0), u64::from(geo.segment_rows));
        geo.group_members(geo.group_of_segment(seg))
            .filter(|&m| self.io.members.is_healthy(m))
            .all(|m| self.zone_at(reports, m, first).is_some_and(|(_, start, z)| start + z.written >= first + rows))
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
        weak: &mut Vec<WeakBlock>,
    ) -> Result<bool, EngineError> {
        // With parity, every row's parity must be there too: only a whole segment will do.
        if geo.raid != RaidLevel::Raid0 && !self.zones_whole(geo, seg, reports) {
            return Ok(false);
        }
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
        if geo.raid != RaidLevel::Raid0 {
            let cols: Vec<u32> = geo.group_members(geo.group_of_segment(seg)).collect();
            let uneven = self.uneven_rows(geo, seg, &cols, &vec![u64::from(geo.segment_rows); cols.len()])?;
            self.note_weak(geo, seg, &uneven, &summary, weak);
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
        weak: &mut Vec<WeakBlock>,
    ) -> Result<bool, EngineError> {
        let Some(landed) = self.rows_landed(geo, seg, reports) else { return Ok(false) };
        let cols: Vec<u32> = geo.group_members(geo.group_of_segment(seg)).collect();
        for i in 0..geo.summary_blocks {
            let (m, at) = geo.slot_location(seg, geo.payload_slots() + i);
            let c = cols.iter().position(|&x| x == m).expect("a slot's member is in its R-group");
            if at - geo.row_block(seg, 0) < landed[c] {
                return Ok(false); // a zone takes no second summary
            }
        }
        let uneven = self.uneven_rows(geo, seg, &cols, &landed)?;
        let mut seals = AdoptedSeals::default();
        let Some(summary) = self.adopted_summary(geo, seg, &mut seals)? else { return Ok(false) };
        if let Ok(s) = Summary::decode(&summary) {
            self.note_weak(geo, seg, &uneven, &s, weak);
        }
        out.verified += seals.verified;
        out.unreadable += seals.unreadable;
        let fill = ZoneFill { geo, seg, cols: &cols, landed: &landed, summary: &summary };
        for (c, &m) in cols.iter().enumerate() {
            let end = fill.rows_to_write(c);
            let mut pending: Vec<u8> = Vec::with_capacity(PAD_CHUNK_BLOCKS as usize * BLOCK);
            let mut first = geo.row_block(seg, landed[c] as u32);
            for row in landed[c] as u32..end {
                let (bytes, pad) = fill.block(&self.io.members, row, c)?;
                pending.extend_from_slice(&bytes);
                out.padded += u64::from(pad);
                if pending.len() == PAD_CHUNK_BLOCKS as usize * BLOCK {
                    self.io.members[m as usize].write(first, &pending)?;
                    first += PAD_CHUNK_BLOCKS;
                    pending.clear();
                }
            }
            if !pending.is_empty() {
                self.io.members[m as usize].write(first, &pending)?;
            }
            // The rest of the zone reads as zeroes, which is what its data and parity are.
            if end < geo.segment_rows && (landed[c] > 0 || end > landed[c] as u32) {
                let (zone, _, _) = self.zone_at(reports, m, geo.row_block(seg, 0)).expect("found above");
                self.io.members[m as usize].finish_zone(zone)?;
                out.zones_finished += 1;
            }
        }
        out.sealed += 1;
        Ok(true)
    }

    /// Rows of adopted segment `seg` each member of its R-group holds (blocks written from
    /// its zone's start); None where a zone was finished short of them (it takes no more).
    fn rows_landed(&self, geo: &Geometry, seg: u64, reports: &[Vec<Zone>]) -> Option<Vec<u64>> {
        let first = geo.row_block(seg, 0);
        let rows = u64::from(geo.segment_rows);
        geo.group_members(geo.group_of_segment(seg))
            .map(|m| {
                let (_, start, z) = self.zone_at(reports, m, first)?;
                let landed = (start + z.written).saturating_sub(first).min(rows);
                (z.condition != ZoneCondition::Full || landed == rows).then_some(landed)
            })
            .collect()
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
                // A failed member's block is rebuilt from its row.
                self.io.read(m, at, &mut block)?;
                let found = crc32c::crc32c(&block);
                let named = self.crcs.adopted.get(&pba).copied();
                // A block that does not match is rebuilt from its row where that matches.
                let rebuilt = |store: &Self, block: &mut [u8], n: u32| {
                    store.io.members.is_healthy(m)
                        && matches!(store.io.members.rebuild(m, at, block), Ok(Some(())))
                        && crc32c::crc32c(block) == n
                };
                match named {
                    Some(n) if n == found => out.verified += 1,
                    Some(n) if rebuilt(self, &mut block, n) => {
                        out.verified += 1;
                        eprintln!(
                            "swan: logical block {lba} (segment {seg}, member {m} block {at}) does not match the CRC its \
                             journal record named: rebuilt from parity as it moves"
                        );
                    }
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
