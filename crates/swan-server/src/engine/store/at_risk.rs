//! Open stripe rows and failed members: the parity and the moves that keep a block from
//! having its only copy in memory.
//!
//! A row still filling has no parity on the members; its blocks on a failed member live only
//! in the row's running XOR. These are the store's answers to that: pad or move such blocks
//! before a sync point, restate open rows' CRCs after a checkpoint, and give rows their
//! parity after a crash or at a clean stop.

use super::Store;
use crate::engine::EngineError;
use crate::member::{MemberError, BLOCK};
use swan_core::scheme::MapChange;

impl Store {
    /// A member failed since the last sync point: rewrite what only it held in open rows
    /// to healthy members and make that durable now, not at the next FLUSH. Until then a
    /// crash would lose those blocks (the array would have lost a member and its power:
    /// two faults); this keeps that window to the operation during which the member failed.
    pub fn protect_after_failure(&mut self) {
        if self.io.failures == self.failures_synced || self.durability.lost.is_some() || self.read_only {
            return;
        }
        self.wait_writes();
        if let Err(e) = self.sync_and_journal() {
            eprintln!("swan: making the array safe after a member failure: {e}");
            self.durability.lose(|| e.to_string());
        }
    }

    /// After a checkpoint, journal again (synced) the CRC of every live block in a stripe
    /// row still filling. Such a row's parity reaches the members only when the row
    /// completes; if a crash comes first and a member is missing at the restart, its blocks
    /// in that row rebuild as garbage. Blocks journaled after the checkpoint carry a CRC that
    /// recovery keeps and reads are checked against ([`Recovered::adopted_crcs`]); this gives
    /// the blocks written before it one too, so they answer EIO rather than garbage.
    pub(super) fn restate_open_rows(&mut self) -> Result<(), EngineError> {
        // Changes made since the last record (blocks moved off a failed member just now)
        // go first, so that their CRCs are known.
        self.journal_changes_read_back();
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(()) };
        let mut restated: Vec<(MapChange, u32)> = Vec::new();
        for (_, block, row) in self.io.rows.iter() {
            for &m in &row.written {
                let Some((pba, lba)) = self.scheme.live_at(m, block) else { continue };
                let (seg, slot) = geo.split_pba(pba);
                if let Some(crc) = self.crcs.open_crc(seg, slot) {
                    restated.push((MapChange::Map { lba, pba }, crc));
                }
            }
        }
        if restated.is_empty() && self.durability.pending.is_empty() {
            return Ok(());
        }
        // The same record whatever order the rows are held in (deterministic replays).
        restated.sort_unstable_by_key(|&(c, _)| match c {
            MapChange::Map { pba, .. } => pba,
            _ => u64::MAX,
        });
        for (c, crc) in restated {
            self.durability.push(c, crc);
        }
        self.append_records(true, self.durability.pending.len())
    }

    /// At a clean stop, after the last checkpoint: journal (synced) the CRC of every live
    /// block of every open segment. Those segments come back adopted, without a summary;
    /// with this record the next start checks each block against the CRC it was written
    /// with before sealing the segment ([`Store::seal_adopted`]), instead of taking the CRC
    /// of whatever the member holds by then.
    pub(super) fn restate_open_segments(&mut self) -> Result<(), EngineError> {
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(()) };
        let mut restated: Vec<(MapChange, u32)> = Vec::new();
        for seg in self.scheme.open_segments() {
            for slot in 0..geo.payload_slots() {
                let pba = geo.pba(seg, slot);
                let (Some(lba), Some(crc)) = (self.scheme.live_lba(pba), self.crcs.open_crc(seg, slot)) else {
                    continue;
                };
                restated.push((MapChange::Map { lba, pba }, crc));
            }
        }
        if restated.is_empty() {
            return Ok(());
        }
        for (c, crc) in restated {
            self.durability.push(c, crc);
        }
        self.append_records(true, self.durability.pending.len())
    }

    /// Protect the live blocks whose only copy is the slot of a failed (or
    /// rebuilding) member in a stripe row still open. Such a row has no parity on disk yet
    /// (it gets it when its last block is written): the block lives in the row's running
    /// XOR in memory and nowhere else durable, so a crash would lose it. The scheme first
    /// completes such rows with zeroes (its open user segment's, and idle GC segments'), so
    /// their parity reaches the members; what is left is a GC segment's row from before the
    /// failure with a job in flight, whose blocks are rewritten to healthy members as user
    /// writes. Called before every sync point's sync, so a FLUSH never covers such a block
    /// and a GC victim is never released while its data depends on one.
    pub fn relocate_at_risk(&mut self) {
        if !self.kind.is_log_structured() || self.io.members.all_healthy() {
            return;
        }
        self.tell_scheme_health();
        let mut wrote = self.pad_rows_at_risk();
        let mut at_risk: Vec<(u64, u32, u64)> = Vec::new();
        for (_, row, open) in self.io.rows.iter() {
            for &m in open.written.iter().filter(|&&m| !self.io.members.is_healthy(m)) {
                if let Some((_, lba)) = self.scheme.live_at(m, row) {
                    at_risk.push((lba, m, row));
                }
            }
        }
        at_risk.sort_unstable();
        for (lba, m, block) in at_risk.iter().copied() {
            let mut data = vec![0u8; BLOCK];
            if let Err(e) = self.io.reconstruct(m, block, &mut data) {
                self.durability.lose(|| format!("block {lba} of a failed member lost: {e}"));
                continue;
            }
            if !self.write_block(lba, &data) {
                self.durability
                    .lose(|| format!("no space to move block {lba} off failed member {m}'s open stripe row"));
            }
        }
        if !at_risk.is_empty() {
            // A moved block may have landed on the failed member's slot of the user row.
            self.pad_rows_at_risk();
            wrote = true;
        }
        if wrote {
            // Gathered like any user write: every caller syncs next, and the sync must find
            // them on the members (a failed write ends durability here).
            self.wait_writes();
        }
    }

    /// The scheme's padding of rows at risk, carried out; true if it wrote anything.
    fn pad_rows_at_risk(&mut self) -> bool {
        let mut plan = std::mem::take(&mut self.follow);
        plan.clear();
        let rows = self.scheme.pad_rows_at_risk(&mut plan);
        if rows > 0 {
            self.scheme_changed = true;
            // A padded segment may be sealed: its summary carries its blocks' CRCs.
            self.journal_changes_read_back();
            if let Err(e) = self.execute_follow_up(&plan) {
                eprintln!("swan: I/O error: {e}");
                self.durability.lose(|| format!("completing rows of a failed member: {e}"));
            }
            self.durability.dirty = true;
        }
        self.follow = plan;
        rows > 0
    }

    /// Give the rows of `adopted` (segments adopted at recovery, just sealed by
    /// [`Store::seal_adopted`]) and of segments sealed by an unsynced journal record their
    /// parity. Such a segment was open at the crash: its last rows were filling and their
    /// parity, written when a row completes, never was; and its summary was written just
    /// now. Each row's parity becomes the XOR of what its data columns hold now, so a member
    /// failing later can be rebuilt; the data is untouched.
    pub(super) fn reparity_adopted(&mut self, adopted: &[u64]) -> Result<u64, MemberError> {
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(0) };
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        // Also the segments sealed by a record written before its data was synced: the
        // summary made it, the parity of the rows before it may not have.
        let mut segments = adopted.to_vec();
        segments.extend(std::mem::take(&mut self.unsynced_seals));
        let mut rows = 0;
        for seg in segments {
            let group = geo.group_of_segment(seg);
            if let Some(m) = geo.group_members(group).find(|&m| !self.io.members.is_healthy(m)) {
                // Adopted at a clean stop, its rows got their parity then.
                if !self.parity_whole {
                    eprintln!(
                        "swan: segment {seg} was open at the crash and member {m} of its R-group has failed: \
                         its last rows have no parity, and what they held on member {m} is lost"
                    );
                }
                continue;
            }
            rows += self.io.reparity_segment(&geo, seg)?;
        }
        Ok(rows)
    }

    /// At a clean stop: give every row of every open segment (user, GC) its parity from
    /// what its data columns hold, so that the next start, even with a member missing, finds
    /// every row whole. Open segments of a degraded R-group are left as they are: the rows
    /// holding a block of its failed member were completed, or the block moved, by the last
    /// sync ([`Store::relocate_at_risk`]), and losing a second member is beyond parity.
    pub fn parity_of_open_segments(&mut self) -> Result<u64, MemberError> {
        let Some(&geo) = self.scheme.log_geometry() else { return Ok(0) };
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        if self.io.sb.zoned {
            return self.parity_of_open_rows_in_zones(&geo);
        }
        let mut rows = 0;
        for seg in self.scheme.open_segments() {
            if geo.group_members(geo.group_of_segment(seg)).all(|m| self.io.members.is_healthy(m)) {
                rows += self.io.reparity_segment(&geo, seg)?;
            }
        }
        Ok(rows)
    }
}
