//! Member failure and rebuild, on the engine's thread.
//!
//! Every member operation of the engine goes through here. A member that returns an I/O
//! error is marked failed when its parity group can spare it ([`Members::can_lose`]): the
//! failure is recorded in every other member's superblock (made durable before anything
//! else happens, so no FLUSH is acknowledged by an array that forgot it), the operation is
//! carried out degraded, and the array goes on serving. From then on the failed member is
//! neither read nor written: its blocks are rebuilt from the other members of its row.
//! SWAN keeps new writes out of a degraded R-group while a healthy one has room.
//!
//! A stripe row of a log-structured segment fills over many requests and gets its parity
//! when it completes; until then the engine holds the row's running XOR
//! ([`OpenRow`]). A failed member's block in such a row is that XOR less the row's other
//! blocks written so far, so nothing acknowledged in an open row is lost either.
//!
//! `swan replace` puts a new member in the failed one's place while the array serves. The
//! replacement is written like a healthy member from the start; a cursor walks it from the
//! first block to the last, copying the metadata area from the other metadata copy and
//! rebuilding every data row from its peers, a slice per round between user requests. Its
//! superblock is written last, with the failure cleared everywhere: a rebuild cut short by
//! a crash leaves the member failed and the replacement unrecognised, to be started again.

use super::Worker;
use crate::array::write_superblocks;
use crate::backend::{BlockOp, BlockRequest};
use crate::layout::SuperblockError;
use crate::member::{Member, MemberError, OpenOptions, BLOCK};
use crate::members::Health;
use crate::parity::xor;
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use swan_core::segment::SegState;

/// Blocks of the replacement rebuilt per step (1 MiB).
const REBUILD_STEP: u64 = 256;

/// An open stripe row: the XOR of the data written into it so far, and by which members.
#[derive(Debug)]
pub(super) struct OpenRow {
    pub xor: Vec<u8>,
    pub written: Vec<u32>,
}

impl OpenRow {
    pub fn new() -> OpenRow {
        OpenRow { xor: vec![0u8; BLOCK], written: Vec::new() }
    }
}

/// A rebuild under way.
#[derive(Debug)]
pub(super) struct Rebuild {
    pub member: u32,
    /// Blocks below this are rebuilt on the replacement.
    pub cursor: u64,
}

/// What `swan status` says of a rebuild.
#[derive(Clone, Debug, Serialize)]
pub struct RebuildStatus {
    pub member: u32,
    pub path: String,
    pub done_blocks: u64,
    pub total_blocks: u64,
}

impl Worker {
    /// Read member `m`'s blocks from `block` into `buf`: from the member while it is healthy,
    /// else (or once it fails here) from its parity group.
    pub(super) fn member_read(&mut self, m: u32, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Healthy => match self.members[m as usize].read(block, buf) {
                Ok(()) => Ok(()),
                Err(e) if e.is_io_error() && self.fail_member(m, &e.to_string()) => self.reconstruct(m, block, buf),
                Err(e) => Err(e),
            },
            Health::Rebuilding
                if self.rebuild.as_ref().is_some_and(|r| block + (buf.len() / BLOCK) as u64 <= r.cursor) =>
            {
                match self.members[m as usize].read(block, buf) {
                    Ok(()) => Ok(()),
                    Err(e) => {
                        self.abort_rebuild(&e.to_string());
                        self.reconstruct(m, block, buf)
                    }
                }
            }
            Health::Rebuilding | Health::Failed => self.reconstruct(m, block, buf),
        }
    }

    /// Write `data` to member `m` from `block`; dropped for a failed member (its row's
    /// parity carries it).
    pub(super) fn member_write(&mut self, m: u32, block: u64, data: &[u8]) -> Result<(), MemberError> {
        self.member_op(m, |mem| mem.write(block, data))
    }

    pub(super) fn member_trim(&mut self, m: u32, block: u64, count: u64) -> Result<(), MemberError> {
        self.member_op(m, |mem| mem.trim(block, count))
    }

    pub(super) fn member_sync(&mut self, m: u32) -> Result<(), MemberError> {
        self.member_op(m, Member::sync)
    }

    fn member_op(&mut self, m: u32, op: impl FnOnce(&Member) -> Result<(), MemberError>) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Failed => Ok(()),
            _ => {
                let r = op(&self.members[m as usize]);
                self.member_result(m, r)
            }
        }
    }

    /// What an operation's result on member `m` means for the array: an I/O error fails a
    /// healthy member (when the array can lose it) or ends a rebuild onto it.
    pub(super) fn member_result(&mut self, m: u32, r: Result<(), MemberError>) -> Result<(), MemberError> {
        match self.members.health(m) {
            Health::Failed => Ok(()),
            Health::Healthy => match r {
                Err(e) if e.is_io_error() && self.fail_member(m, &e.to_string()) => Ok(()),
                r => r,
            },
            Health::Rebuilding => {
                if let Err(e) = r {
                    self.abort_rebuild(&e.to_string());
                }
                Ok(())
            }
        }
    }

    /// Member `m`'s blocks from `block`, rebuilt from its parity group: whole rows from the
    /// members, open rows from their running XOR.
    pub(super) fn reconstruct(&self, m: u32, block: u64, buf: &mut [u8]) -> Result<(), MemberError> {
        let count = (buf.len() / BLOCK) as u64;
        self.members.reconstruct(m, block, buf).map_err(|e| e.into_member_error(&self.members, m, block, count))?;
        if self.parity.is_empty() {
            return Ok(());
        }
        let group = self.members.group(m);
        let mut one = vec![0u8; BLOCK];
        for (&(g, row), open) in &self.parity {
            if g != group || row < block || row >= block + count {
                continue;
            }
            let out = &mut buf[(row - block) as usize * BLOCK..(row - block + 1) as usize * BLOCK];
            if !open.written.contains(&m) {
                // Nothing written there since the row opened: no live data to give back.
                out.fill(0);
                continue;
            }
            let written = open.written.iter().filter(|&&p| p != m).map(|&p| &self.members[p as usize]);
            crate::parity::row_xor(written, row, &mut one, out)?;
            xor(out, &open.xor);
        }
        Ok(())
    }

    /// Mark member `m` failed, if its parity group can spare it; record it on the others.
    /// False (the error stands) when it cannot be spared.
    pub(super) fn fail_member(&mut self, m: u32, why: &str) -> bool {
        if !self.members.can_lose(m) {
            return false;
        }
        self.members.set(m, Health::Failed);
        self.sb.failed.insert(m);
        self.sb.events += 1;
        eprintln!(
            "swan: member {m} ({}) FAILED: {why}; serving degraded from parity (replace it: swan replace --member {m} NEW ...)",
            self.members[m as usize].path().display()
        );
        self.stats[m as usize].errors += 1;
        if let Err(e) = write_superblocks(&self.members, &self.sb) {
            eprintln!("swan: recording member {m}'s failure in the superblocks: {e}");
        }
        self.scheme.set_failed_member(m, true);
        self.failures += 1;
        true
    }

    /// Fail the members the pool's reads found broken.
    pub(super) fn fail_members_reads_met(&mut self) {
        let Some(pool) = &self.pool else { return };
        for e in pool.take_read_errors() {
            if let Some(m) = self.members.iter().position(|x| x.path() == e.path()) {
                self.fail_member(m as u32, &e.to_string());
            }
        }
    }

    /// `swan fail`: take member `m` out of service as if it had failed.
    pub(super) fn fail_by_request(&mut self, m: u32) -> Result<String, String> {
        if m as usize >= self.members.len() {
            return Err(format!("the array has {} members; there is no member {m}", self.members.len()));
        }
        if !self.members.has_parity() {
            return Err("a RAID0 array has no parity: failing a member would lose its data".into());
        }
        match self.members.health(m) {
            Health::Failed => return Err(format!("member {m} has failed already")),
            Health::Rebuilding => return Err(format!("member {m} is being rebuilt")),
            Health::Healthy => {}
        }
        if let Some(p) = self.members.peers(m).find(|&p| !self.members.is_healthy(p)) {
            return Err(format!(
                "member {p} of the same parity group is {}: failing {m} too would lose data",
                self.members.health(p).name()
            ));
        }
        self.drain_member_io();
        if !self.fail_member(m, "failed by request (swan fail)") {
            return Err(format!("member {m} cannot be spared"));
        }
        Ok(format!("member {m} ({}) marked failed", self.members[m as usize].path().display()))
    }

    /// `swan replace`: rebuild member `m` onto the device or file at `path`.
    pub(super) fn start_replace(&mut self, m: u32, path: &Path) -> Result<String, String> {
        if m as usize >= self.members.len() {
            return Err(format!("the array has {} members; there is no member {m}", self.members.len()));
        }
        if let Some(r) = &self.rebuild {
            return Err(format!("member {} is being rebuilt already; one rebuild at a time", r.member));
        }
        if self.members.health(m) != Health::Failed {
            return Err(format!(
                "member {m} is {}; only a failed member is replaced (swan fail it first)",
                self.members.health(m).name()
            ));
        }
        if self.read_only {
            return Err("the array is served read-only".into());
        }
        let direct = self.members.first().is_some_and(Member::is_direct);
        let mut new = Member::open(path, OpenOptions { direct, read_only: false }).map_err(|e| e.to_string())?;
        new.inherit_tap(&self.members[m as usize]);
        new.lock(true).map_err(|e| e.to_string())?;
        if new.blocks() < self.sb.member_blocks {
            return Err(format!(
                "{} holds {} blocks; a member of this array needs {}",
                path.display(),
                new.blocks(),
                self.sb.member_blocks
            ));
        }
        match crate::array::read_superblock(&new) {
            Err(SuperblockError::NotSwan) => {}
            Ok(sb) if sb.uuid == self.sb.uuid && sb.member_index == m => {} // the same member, back
            Ok(sb) => {
                return Err(format!(
                    "{} is member {} of swan array {}: wipe its first block to use it here",
                    path.display(),
                    sb.member_index,
                    sb.uuid_string()
                ))
            }
            Err(_) => {} // a damaged superblock: nothing to keep
        }
        self.drain_member_io();
        let next = self.members.with_replacement(m, new).map_err(|e| e.to_string())?;
        self.members = Arc::new(next);
        self.stats[m as usize].path = path.display().to_string();
        self.rebuild = Some(Rebuild { member: m, cursor: 0 });
        eprintln!("swan: rebuilding member {m} onto {}", path.display());
        Ok(format!("rebuilding member {m} onto {}", path.display()))
    }

    /// No member I/O of the pool in flight: what changes a member's health or place must
    /// not race with it.
    fn drain_member_io(&mut self) {
        self.wait_writes();
        if let Some(pool) = &self.pool {
            pool.wait_reads();
        }
    }

    /// Rebuild the next slice of the replacement; finish when the cursor reaches the end.
    /// Slices run between batches of user requests, so a row is never rebuilt while a
    /// write to it is half done.
    pub(super) fn rebuild_step(&mut self) {
        let Some(r) = &self.rebuild else { return };
        let (m, cursor) = (r.member, r.cursor);
        let end = self.sb.member_blocks;
        if cursor >= end {
            self.finish_rebuild();
            return;
        }
        // The pool's writes to the row's peers must have landed before the row is rebuilt.
        self.wait_writes();
        let meta = self.sb.meta_blocks;
        let (from, to) = if cursor < meta {
            (cursor.max(1), meta.min(cursor + REBUILD_STEP))
        } else {
            (cursor, end.min(cursor + REBUILD_STEP))
        };
        let result = if from >= to {
            Ok(())
        } else if to <= meta {
            self.rebuild_metadata(m, from, to)
        } else {
            let mut buf = vec![0u8; (to - from) as usize * BLOCK];
            self.reconstruct(m, from, &mut buf).and_then(|()| self.members[m as usize].write(from, &buf))
        };
        match result {
            Ok(()) => {
                if let Some(r) = self.rebuild.as_mut() {
                    r.cursor = to;
                }
            }
            Err(e) => self.abort_rebuild(&e.to_string()),
        }
    }

    /// The metadata area's blocks `from..to`: the checkpoints and journal are mirrored on
    /// the first two members, so a metadata member's come from the other copy; the other
    /// members keep nothing there.
    fn rebuild_metadata(&mut self, m: u32, from: u64, to: u64) -> Result<(), MemberError> {
        let copies = self.sb.meta_members();
        if m >= copies {
            return Ok(());
        }
        let Some(mirror) = (0..copies).find(|&c| c != m && self.members.is_healthy(c)) else {
            return Err(MemberError::Lost {
                path: self.members[m as usize].path().to_owned(),
                op: crate::member::Op::Read { block: from, count: to - from },
                why: "no healthy copy of the metadata to rebuild from".into(),
            });
        };
        let mut buf = vec![0u8; (to - from) as usize * BLOCK];
        self.members[mirror as usize].read(from, &mut buf)?;
        self.members[m as usize].write(from, &buf)
    }

    fn finish_rebuild(&mut self) {
        let Some(r) = self.rebuild.take() else { return };
        let m = r.member;
        if let Err(e) = self.members[m as usize].sync() {
            self.rebuild = Some(r);
            self.abort_rebuild(&e.to_string());
            return;
        }
        self.members.set(m, Health::Healthy);
        self.sb.failed.remove(&m);
        self.sb.events += 1;
        if let Err(e) = write_superblocks(&self.members, &self.sb) {
            eprintln!("swan: recording member {m}'s rebuild in the superblocks: {e}");
        }
        self.scheme.set_failed_member(m, false);
        eprintln!(
            "swan: member {m} rebuilt onto {}; the array is whole again",
            self.members[m as usize].path().display()
        );
    }

    /// The replacement failed: it is not a member; the index stays failed.
    fn abort_rebuild(&mut self, why: &str) {
        let Some(r) = self.rebuild.take() else { return };
        self.members.set(r.member, Health::Failed);
        eprintln!("swan: rebuild of member {} stopped: {why}; the member stays failed", r.member);
    }

    /// Rewrite, to healthy members, the live blocks whose only copy is the slot of a failed
    /// (or rebuilding) member in a stripe row still open. Such a row has no parity on disk
    /// yet (it gets it when its last block is written): the block lives in the row's running
    /// XOR in memory and nowhere else durable, so a crash would lose it. It got there
    /// written before its member failed (or by GC, which is not told of failures: its
    /// destination slots were chosen before); user writes skip a failed member's slots.
    /// Called before every sync point's sync, so a FLUSH never covers such a block and a GC
    /// victim is never released while its data depends on one.
    pub(super) fn relocate_at_risk(&mut self) {
        let Some(la) = self.scheme.log_array() else { return };
        if self.members.all_healthy() {
            return;
        }
        let geo = *la.geometry();
        let mut at_risk: Vec<(u64, u32, u64)> = Vec::new();
        for (&(_, row), open) in &self.parity {
            for &m in open.written.iter().filter(|&&m| !self.members.is_healthy(m)) {
                let live = geo.slot_at(m, row).and_then(|(seg, slot)| la.live_lba(geo.pba(seg, slot)));
                if let Some(lba) = live {
                    at_risk.push((lba, m, row));
                }
            }
        }
        at_risk.sort_unstable();
        let moved = !at_risk.is_empty();
        for (lba, m, block) in at_risk {
            let mut data = vec![0u8; BLOCK];
            if let Err(e) = self.reconstruct(m, block, &mut data) {
                self.durability_lost.get_or_insert_with(|| format!("block {lba} of a failed member lost: {e}"));
                continue;
            }
            let req =
                BlockRequest { op: BlockOp::Write(data), offset: lba * BLOCK as u64, len: BLOCK as u32, fua: false };
            if self.serve(req, Box::new(|_| {})).is_some() {
                self.durability_lost.get_or_insert_with(|| {
                    format!("no space to move block {lba} off failed member {m}'s open stripe row")
                });
            }
        }
        if moved {
            // The moves are gathered like any user write: every caller syncs next, and the
            // sync must find them on the members (a failed write ends durability here).
            self.wait_writes();
        }
    }

    pub(super) fn rebuild_status(&self) -> Option<RebuildStatus> {
        self.rebuild.as_ref().map(|r| RebuildStatus {
            member: r.member,
            path: self.members[r.member as usize].path().display().to_string(),
            done_blocks: r.cursor,
            total_blocks: self.sb.member_blocks,
        })
    }

    /// Give the rows of segments adopted at recovery (and of segments sealed by an unsynced
    /// journal record) their parity. Such a segment was open at the crash: its last rows were filling and their parity, written when a row
    /// completes, never was. Each row's parity becomes the XOR of what its data columns hold
    /// now, so a member failing later can be rebuilt; the data is untouched.
    pub(super) fn reparity_adopted(&mut self) -> Result<u64, MemberError> {
        let Some(la) = self.scheme.log_array() else { return Ok(0) };
        let geo = *la.geometry();
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        let segs = la.segments();
        // Also the segments sealed by a record written before its data was synced: the
        // summary made it, the parity of the rows before it may not have.
        let mut adopted: Vec<u64> = if self.parity_whole {
            // Adopted at a clean stop, their rows got their parity then.
            Vec::new()
        } else {
            (0..segs.len()).filter(|&s| segs.seq(s) == 0 && segs.valid(s) > 0).collect()
        };
        adopted.extend(std::mem::take(&mut self.unsynced_seals));
        let mut rows = 0;
        for seg in adopted {
            let group = geo.group_of_segment(seg);
            if let Some(m) =
                (0..geo.ssds_per_rgroup).map(|c| geo.member(group, c)).find(|&m| !self.members.is_healthy(m))
            {
                eprintln!(
                    "swan: segment {seg} was open at the crash and member {m} of its R-group has failed: \
                     its last rows have no parity, and what they held on member {m} is lost"
                );
                continue;
            }
            rows += self.reparity_segment(seg)?;
        }
        Ok(rows)
    }

    /// At a clean stop: give every row of every open segment (user, GC) its parity from
    /// what its data columns hold, so that the next start, even with a member missing, finds
    /// every row whole. Open segments of a degraded R-group are left as they are: what its
    /// failed member held in their open rows was moved off ([`Worker::relocate_at_risk`]),
    /// and losing a second member is beyond what parity covers.
    pub(super) fn parity_of_open_segments(&mut self) -> Result<u64, MemberError> {
        let Some(la) = self.scheme.log_array() else { return Ok(0) };
        let geo = *la.geometry();
        if geo.raid == swan_core::geometry::RaidLevel::Raid0 {
            return Ok(0);
        }
        let segs = la.segments();
        let open: Vec<u64> = (0..segs.len()).filter(|&s| segs.state(s) == SegState::Open).collect();
        let mut rows = 0;
        for seg in open {
            let group = geo.group_of_segment(seg);
            if (0..geo.ssds_per_rgroup).all(|c| self.members.is_healthy(geo.member(group, c))) {
                rows += self.reparity_segment(seg)?;
            }
        }
        Ok(rows)
    }

    /// Write every row's parity of `seg` as the XOR of what its data columns hold now
    /// (every member of its R-group healthy).
    fn reparity_segment(&mut self, seg: u64) -> Result<u64, MemberError> {
        let geo = *self.scheme.log_array().expect("log-structured").geometry();
        let group = geo.group_of_segment(seg);
        let cols: Vec<u32> = (0..geo.ssds_per_rgroup).map(|c| geo.member(group, c)).collect();
        let (mut one, mut acc) = (vec![0u8; BLOCK], vec![0u8; BLOCK]);
        let mut rows = 0;
        for row in 0..geo.segment_rows {
            let block = geo.row_block(seg, row);
            let Some(pc) = geo.parity_column(block) else { continue };
            let data = (0..geo.ssds_per_rgroup).filter(|&c| c != pc).map(|c| &self.members[cols[c as usize] as usize]);
            crate::parity::row_xor(data, block, &mut one, &mut acc)?;
            self.members[cols[pc as usize] as usize].write(block, &acc)?;
            rows += 1;
        }
        Ok(rows)
    }
}
